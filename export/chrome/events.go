package chrome

import (
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// beginEvent starts an event: `,\n{"ph":"X","pid":N`.
func (w *Writer) beginEvent(ph byte) {
	w.buf = append(w.buf, ",\n{\"ph\":\""...)
	w.buf = append(w.buf, ph, '"', ',', '"', 'p', 'i', 'd', '"', ':')
	w.buf = append(w.buf, w.pidStr...)
}

// sortIndex orders threads as the model orders tracks: top-level tracks by
// Order, each queue's lanes right after it.
func sortIndex(b *timeline.Trace, t *timeline.Track) int64 {
	if t.Parent == 0 {
		return int64(t.Order) * 1024
	}
	base := int64(0)
	if p := b.Track(t.Parent); p != nil {
		base = int64(p.Order) * 1024
	}
	sub := int64(t.Lane)
	if sub == 0 {
		sub = int64(t.Order)
	}
	return base + 1 + min(max(sub, 0), 1022)
}

func queueString(q timeline.Queue) string {
	s := q.Device + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
	if q.Flags != "" {
		s += " (" + q.Flags + ")"
	}
	return s
}

// newTrackState returns the state of a thread: its tid, and the starts
// of its B and E events.
func (w *Writer) newTrackState(t *timeline.Track, tid uint32) *trackState {
	w.tids[tid] = true
	ts := &trackState{t: *t, tid: strconv.AppendUint(nil, uint64(tid), 10)}
	for _, ph := range []byte{'B', 'E'} {
		p := append([]byte(",\n{\"ph\":\""), ph)
		p = append(p, `","pid":`...)
		p = append(p, w.pidStr...)
		p = append(p, `,"tid":`...)
		p = append(p, ts.tid...)
		p = append(p, `,"ts":`...)
		if ph == 'B' {
			ts.bPre = p
		} else {
			ts.ePre = p
		}
	}
	return ts
}

// freeTid returns a tid that no thread has, from the top of the range
// down: the frames thread's, or a track's whose ID that thread took.
func (w *Writer) freeTid() uint32 {
	for w.tids[w.nextTid] {
		w.nextTid--
	}
	return w.nextTid
}

func (w *Writer) describe(b *timeline.Trace, t *timeline.Track) {
	// A track's thread is its ID, unless the frames thread took it.
	tid := uint32(t.ID)
	if w.tids[tid] {
		tid = w.freeTid()
	}
	ts := w.newTrackState(t, tid)
	if t.Kind == timeline.TrackFrames {
		w.framesTrack = true
	}
	if t.Kind == timeline.TrackGPUQueue || t.Kind == timeline.TrackGPULane {
		ts.queue = appendString(nil, queueString(t.Queue))
	}
	w.tracks[t.ID] = ts
	w.order = append(w.order, ts)
	series := t.Name
	if t.Kind == timeline.TrackCounter {
		if w.series[series] || series == dropsCounter {
			series += " [" + strconv.FormatUint(uint64(t.ID), 10) + "]"
		}
		w.series[series] = true
		ts.series = appendString(nil, series)
	}
	if t.Kind != timeline.TrackCounter {
		// A track without a name gets no thread_name: the trace processor
		// counts an empty one as a parse error. Viewers then show the
		// thread unnamed, as they show the Perfetto trace's track; the
		// framescope_track event below still holds the name.
		if t.Name != "" {
			w.beginEvent('M')
			w.buf = append(w.buf, `,"tid":`...)
			w.buf = append(w.buf, ts.tid...)
			w.buf = append(w.buf, `,"name":"thread_name","args":{"name":`...)
			w.buf = appendString(w.buf, t.Name)
			w.buf = append(w.buf, "}}"...)
		}
		w.beginEvent('M')
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, ts.tid...)
		w.buf = append(w.buf, `,"name":"thread_sort_index","args":{"sort_index":`...)
		w.buf = strconv.AppendInt(w.buf, sortIndex(b, t), 10)
		w.buf = append(w.buf, "}}"...)
	}
	w.beginEvent('M')
	if t.Kind != timeline.TrackCounter {
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, ts.tid...)
	}
	w.buf = append(w.buf, `,"name":"`+metaTrack+`","args":{"id":`...)
	w.buf = strconv.AppendUint(w.buf, uint64(t.ID), 10)
	w.buf = append(w.buf, `,"kind":`...)
	w.buf = appendString(w.buf, t.Kind.String())
	w.buf = append(w.buf, `,"name":`...)
	w.buf = appendString(w.buf, t.Name)
	if ts.series != nil {
		w.buf = append(w.buf, `,"series":`...)
		w.buf = append(w.buf, ts.series...)
	}
	w.buf = append(w.buf, `,"parent":`...)
	w.buf = strconv.AppendUint(w.buf, uint64(t.Parent), 10)
	w.buf = append(w.buf, `,"order":`...)
	w.buf = strconv.AppendInt(w.buf, int64(t.Order), 10)
	w.buf = append(w.buf, `,"lane":`...)
	w.buf = strconv.AppendInt(w.buf, int64(t.Lane), 10)
	w.buf = append(w.buf, `,"unit":`...)
	w.buf = strconv.AppendUint(w.buf, uint64(t.Unit), 10)
	if t.Across {
		w.buf = append(w.buf, `,"across":true`...)
	}
	if t.Queue != (timeline.Queue{}) {
		w.buf = append(w.buf, `,"device":`...)
		w.buf = appendString(w.buf, t.Queue.Device)
		w.buf = append(w.buf, `,"family":`...)
		w.buf = strconv.AppendUint(w.buf, uint64(t.Queue.Family), 10)
		w.buf = append(w.buf, `,"index":`...)
		w.buf = strconv.AppendUint(w.buf, uint64(t.Queue.Index), 10)
		w.buf = append(w.buf, `,"flags":`...)
		w.buf = appendString(w.buf, t.Queue.Flags)
	}
	w.buf = append(w.buf, "}}"...)
}

func (w *Writer) begin(ts *trackState, c *cand) {
	s := &c.s
	ts.wrote(s)
	w.maxTs = max(w.maxTs, s.End)
	w.buf = append(w.buf, ts.bPre...)
	w.buf = appendMicros(w.buf, s.Start)
	w.buf = append(w.buf, `,"name":`...)
	if ts.name != nil {
		w.buf = append(w.buf, ts.name...)
	} else {
		w.buf = append(w.buf, w.name(s.Name)...)
	}
	work := s.Work
	if work != nil && !work.Valid() { // written without it, and counted
		w.invalid.Work++
		work = nil
	}
	if s.Frame != 0 || s.ErrNs != 0 || ts.queue != nil || work != nil {
		sep := byte('{')
		w.buf = append(w.buf, `,"args":`...)
		if s.Frame != 0 {
			w.buf = append(w.buf, sep)
			sep = ','
			w.buf = append(w.buf, `"frame":`...)
			w.buf = strconv.AppendUint(w.buf, s.Frame, 10)
		}
		if ts.queue != nil {
			w.buf = append(w.buf, sep)
			sep = ','
			w.buf = append(w.buf, `"queue":`...)
			w.buf = append(w.buf, ts.queue...)
		}
		if s.ErrNs != 0 {
			w.buf = append(w.buf, sep)
			sep = ','
			w.buf = append(w.buf, `"err_ns":`...)
			w.buf = strconv.AppendUint(w.buf, uint64(s.ErrNs), 10)
		}
		if work != nil {
			w.buf = appendWork(w.buf, sep, work)
		}
		w.buf = append(w.buf, '}')
	}
	w.buf = append(w.buf, '}')
	// Flow ends right after the B: at that point the span is the
	// innermost open slice on its thread, which is what they bind to.
	for _, f := range c.flows {
		if !f.late {
			w.flowEvent(ts, f, s.Start)
		}
	}
	if len(w.buf) > 256<<10 {
		w.flush(0)
	}
}

func (w *Writer) flowEvent(ts *trackState, f flowMark, at int64) {
	if len(w.dead) > 0 && w.dead[f.id] {
		return
	}
	if f.in {
		w.beginEvent('f')
		w.buf = append(w.buf, `,"bp":"e"`...)
	} else {
		w.beginEvent('s')
	}
	w.buf = append(w.buf, `,"tid":`...)
	w.buf = append(w.buf, ts.tid...)
	w.buf = append(w.buf, `,"ts":`...)
	w.buf = appendMicros(w.buf, at)
	if f.rev {
		w.buf = append(w.buf, `,"cat":"flow","name":"`+reversedFlow+`","id":`...)
	} else {
		w.buf = append(w.buf, `,"cat":"flow","name":"flow","id":`...)
	}
	w.buf = strconv.AppendUint(w.buf, f.id, 10)
	w.buf = append(w.buf, '}')
}

// end writes the E of c, after the flow ends that bind to it there: its
// children have ended, so c is again the innermost open slice.
func (w *Writer) end(ts *trackState, c *cand) {
	for _, f := range c.flows {
		if f.late {
			w.flowEvent(ts, f, c.s.End)
		}
	}
	w.buf = append(w.buf, ts.ePre...)
	w.buf = appendMicros(w.buf, c.s.End)
	w.buf = append(w.buf, '}')
}

func (w *Writer) writeSamples(b *timeline.Trace) {
	for _, s := range b.Samples {
		ts := w.tracks[s.Track]
		if ts == nil || ts.t.Kind != timeline.TrackCounter || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			w.invalid.Samples++
			continue
		}
		w.maxTs = max(w.maxTs, s.Time)
		// Counters are per process and known by name: a tid here would
		// make viewers show an empty thread.
		w.beginEvent('C')
		w.buf = append(w.buf, `,"ts":`...)
		w.buf = appendMicros(w.buf, s.Time)
		w.buf = append(w.buf, `,"name":`...)
		w.buf = append(w.buf, ts.series...)
		w.buf = append(w.buf, `,"args":{"value":`...)
		w.buf = appendValue(w.buf, s.Value)
		w.buf = append(w.buf, "}}"...)
		if len(w.buf) > 256<<10 {
			w.flush(0)
		}
	}
}

// writeFrameSlices draws the batch's ended frames as "frame" slices on a
// "Frames" thread when the trace has no frames track, as the Perfetto
// writer draws them. Read restores frames from the framescope_frame
// events, and takes no spans from this thread.
func (w *Writer) writeFrameSlices(b *timeline.Trace) {
	if w.framesTrack || len(b.Frames) == 0 {
		return
	}
	w.cands = w.cands[:0]
	for _, f := range b.Frames {
		if f.End != 0 && f.Start >= 0 && f.End >= f.Start {
			w.cands = append(w.cands, cand{s: timeline.Span{Start: f.Start, End: f.End, Frame: f.ID}})
		}
	}
	if len(w.cands) == 0 {
		return
	}
	if w.frames == nil {
		w.frames = w.newTrackState(&timeline.Track{Kind: timeline.TrackFrames, Name: "Frames"}, w.freeTid())
		w.frames.name = []byte(`"frame"`)
		w.beginEvent('M')
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, w.frames.tid...)
		w.buf = append(w.buf, `,"name":"thread_name","args":{"name":"Frames"}}`...)
		w.beginEvent('M')
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, w.frames.tid...)
		w.buf = append(w.buf, `,"name":"thread_sort_index","args":{"sort_index":`...)
		w.buf = strconv.AppendInt(w.buf, math.MinInt32*1024, 10)
		w.buf = append(w.buf, "}}"...)
		w.beginEvent('M')
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, w.frames.tid...)
		w.buf = append(w.buf, `,"name":"`+metaFramesList+`"}`...)
	}
	slices.SortFunc(w.cands, func(a, b cand) int { return timeline.CompareSpans(&a.s, &b.s) })
	// Frames overlapping one drawn before are not drawn (they stay in
	// the metadata); they are not spans, so not counted as refused ones.
	refused := w.invalid.Spans
	w.emit(w.frames, w.cands, nil, true)
	w.invalid.Spans = refused
}

func (w *Writer) writeFrame(f timeline.Frame) {
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaFrame+`","args":{"id":`...)
	w.buf = strconv.AppendUint(w.buf, f.ID, 10)
	w.buf = append(w.buf, `,"start":`...)
	w.buf = strconv.AppendInt(w.buf, f.Start, 10)
	w.buf = append(w.buf, `,"end":`...)
	w.buf = strconv.AppendInt(w.buf, f.End, 10)
	w.buf = append(w.buf, "}}"...)
}

// appendValue appends a finite counter value so that the trace
// processor reads back the very same float64: without an exponent where
// it can (it reads 1.2560112e+07 as 12560112.000000002), but not past the
// integers it parses whole.
func appendValue(dst []byte, v float64) []byte {
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e18) {
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

func (w *Writer) writeCalibration(c timeline.Calibration) {
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaCalibration+`","args":{"track":`...)
	w.buf = strconv.AppendUint(w.buf, uint64(c.Track), 10)
	w.buf = append(w.buf, `,"time":`...)
	w.buf = strconv.AppendInt(w.buf, c.Time, 10)
	w.buf = append(w.buf, `,"err_ns":`...)
	w.buf = appendFloat(w.buf, c.ErrNs)
	w.buf = append(w.buf, `,"drift_ppm":`...)
	w.buf = appendFloat(w.buf, c.DriftPPM)
	w.buf = append(w.buf, `,"samples":`...)
	w.buf = strconv.AppendInt(w.buf, int64(c.Samples), 10)
	w.buf = append(w.buf, "}}"...)
}

// writeDropsCounter adds a point to the visible "framescope dropped"
// counter when the total has changed: everything the recorder dropped and
// everything this writer refused (spans, flows, samples, work), as the
// Perfetto writer's counters show them.
func (w *Writer) writeDropsCounter() {
	total, _ := timeline.Sum(w.total().Total(), w.invalid.Flows, w.invalid.Samples, w.invalid.Work) // saturates at 2^64-1
	if total == w.lastDrops {
		return
	}
	w.lastDrops = total
	w.beginEvent('C')
	w.buf = append(w.buf, `,"ts":`...)
	w.buf = appendMicros(w.buf, w.maxTs)
	w.buf = append(w.buf, `,"name":"`+dropsCounter+`","args":{"value":`...)
	w.buf = strconv.AppendUint(w.buf, total, 10)
	w.buf = append(w.buf, "}}"...)
}
