package chrome

import (
	"errors"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// Names of Framescope's own metadata events. Other tools ignore 'M' events
// they do not know; Read uses these to restore what JSON has no place for.
const (
	metaTrack       = "framescope_track"
	metaFrame       = "framescope_frame"
	metaCalibration = "framescope_calibration"
	metaDrops       = "framescope_drops"
	// dropsCounter is a counter, shown in viewers, of everything dropped so
	// far; written only once something has been dropped.
	dropsCounter = "framescope dropped"
)

// A Writer is a recorder's sink.
var _ timeline.Sink = (*Writer)(nil)

// MaxHeld bounds the spans a Writer holds back waiting for their parent
// (see WriteBatch). Past it the held spans are written at once, in order.
// A span waits while its parent is still open, so the children of one
// long-lived span (a whole-run "main" span, say) pile up until the bound.
// Past it, a child written early nests wrongly in viewers only if its
// parent, when it comes, starts at the very same nanosecond. Invalid.Forced
// counts them.
const MaxHeld = 1 << 16

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("chrome: writer closed")

// Invalid counts what a Writer refused to write because the input broke
// the model's rules. These are added to Drops.Spans in the trace's
// framescope_drops record, so the reader sees them as dropped spans.
type Invalid struct {
	Spans   uint64 // unknown track, End < Start, or overlapping a sibling
	Flows   uint64 // a span index out of range, an end dropped, or an arrow back in time
	Samples uint64 // not on a counter track, or a value that is NaN or infinite
	Forced  uint64 // spans written before their parent arrived (MaxHeld hit)
}

// Writer streams a trace as Chrome JSON. Make one with NewWriter, give it
// batches with WriteBatch and finish with Close. It is not safe for
// concurrent use.
type Writer struct {
	out     io.Writer
	buf     []byte
	err     error
	started bool
	closed  bool
	pid     int32
	pidStr  []byte

	tracks map[timeline.TrackID]*trackState
	series map[string]bool // counter names in use
	order  []*trackState   // tracks in first-seen order
	names  [][]byte        // quoted, escaped names by NameID

	flowID    uint64
	drops     timeline.Drops
	lastDrops uint64
	maxTs     int64
	invalid   Invalid
	held      int
	// dead holds the flows one of whose spans was refused: counted once,
	// and neither end written. It only grows with bad input.
	dead map[uint64]bool

	// Scratch reused across batches.
	idx   []int32
	marks []flowMark
	cands []cand
	safe  []bool
	bad   []bool
	stack []int32
}

type trackState struct {
	t   timeline.Track
	tid []byte // the tid, formatted
	// bPre and ePre start this thread's B and E events, up to the ts.
	bPre, ePre []byte
	queue      []byte // the queue, quoted; nil on tracks with none
	// series is a counter track's name in 'C' events, quoted: its name,
	// made unique with its ID when another counter has the same name.
	series []byte
	held   []cand
	// written holds the outermost intervals written so far, disjoint and
	// sorted, the last maxWritten of them: a span written later may lie
	// inside one, contain some or lie apart, but not overlap one partly,
	// which claim checks.
	written []interval
	// lastAt[d] is the last span written at depth d (up to maxDepthSeen):
	// a span inside lastAt[d-1] has its parent written already, so it is
	// safe to write at once.
	lastAt []timeline.Span
}

type interval struct{ start, end int64 }

// maxWritten bounds trackState.written; older intervals are forgotten.
const maxWritten = 256

// maxDepthSeen bounds trackState.lastAt.
const maxDepthSeen = 256

// parentWritten reports whether the parent of s was written already.
func (ts *trackState) parentWritten(s *timeline.Span) bool {
	d := int(s.Depth) - 1
	return d >= 0 && d < len(ts.lastAt) && ts.lastAt[d].End >= ts.lastAt[d].Start && contains(&ts.lastAt[d], s)
}

// wrote records a span just written.
func (ts *trackState) wrote(s *timeline.Span) {
	d := int(s.Depth)
	if d >= maxDepthSeen {
		return
	}
	for len(ts.lastAt) <= d {
		ts.lastAt = append(ts.lastAt, timeline.Span{Start: 0, End: -1})
	}
	ts.lastAt[d] = *s
}

// claim checks span s, about to be written outside any span of its
// batch, against the outermost spans written before. If it may be
// written, claim records it and returns true.
func (ts *trackState) claim(s *timeline.Span) bool {
	w := ts.written
	// First interval ending after s starts.
	lo, _ := slices.BinarySearchFunc(w, s.Start, func(iv interval, t int64) int {
		if iv.end <= t {
			return -1
		}
		return 1
	})
	hi := lo
	for hi < len(w) && w[hi].start < s.End {
		if w[hi].start <= s.Start && s.End <= w[hi].end {
			return true // inside a span written before
		}
		if w[hi].start < s.Start || w[hi].end > s.End {
			return false // partly over one
		}
		hi++
	}
	iv := interval{s.Start, s.End}
	if hi > lo {
		w[lo] = iv
		w = append(w[:lo+1], w[hi:]...)
	} else {
		w = slices.Insert(w, lo, iv)
	}
	if len(w) > maxWritten {
		w = append(w[:0], w[len(w)-maxWritten/2:]...)
	}
	ts.written = w
	return true
}

type flowMark struct {
	span int32
	in   bool
	// late: the flow's start comes after this (its end) span starts, so
	// its 'f' is written at the span's end instead, where it still binds
	// to the span and follows the 's' in time.
	late bool
	id   uint64
}

// cand is a span about to be written, with its flow ends.
type cand struct {
	s     timeline.Span
	flows []flowMark
}

// NewWriter returns a Writer that writes to w. Writes are buffered; Close
// flushes them.
func NewWriter(w io.Writer) *Writer {
	return &Writer{
		out:    w,
		buf:    make([]byte, 0, 64<<10),
		tracks: make(map[timeline.TrackID]*trackState),
		series: make(map[string]bool),
		names:  [][]byte{[]byte(`""`)},
	}
}

// Write writes a whole trace to w as Chrome JSON.
func Write(w io.Writer, t *timeline.Trace) error {
	cw := NewWriter(w)
	if err := cw.WriteBatch(t); err != nil {
		return err
	}
	return cw.Close()
}

// Invalid returns what the Writer has refused so far.
func (w *Writer) Invalid() Invalid { return w.invalid }

// WriteBatch writes one batch. Per the streaming contract, b.Names is the
// full name table so far, b.Tracks every track defined so far, Spans,
// Frames, Samples and Calibrations only new items, Flows index b.Spans, and
// b.Drops is the running total.
//
// Within a batch spans may come in any order. Across batches they may
// come as they end (children before parents, a recorder's order) or as
// they start (parents first); viewers order events of equal time by their
// place in the file, so other orders can misplace spans that start or end
// at the very same nanosecond. A span with Depth > 0 whose
// parent has not been written is held back until its parent arrives when
// the two could start at the same time, so that viewers nest them right;
// Close writes whatever is still held. A span that overlaps another
// without nesting, in its batch or among the outermost spans written
// before, is refused and counted (Invalid).
func (w *Writer) WriteBatch(b *timeline.Trace) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.start(b)
	}
	w.internNames(b.Names)
	for i := range b.Tracks {
		if _, ok := w.tracks[b.Tracks[i].ID]; !ok && b.Tracks[i].ID != 0 {
			w.describe(b, &b.Tracks[i])
		}
	}
	w.writeSpans(b)
	w.writeSamples(b)
	for _, f := range b.Frames {
		w.writeFrame(f)
	}
	for _, c := range b.Calibrations {
		w.writeCalibration(c)
	}
	w.drops = b.Drops
	w.writeDropsCounter()
	// Every batch goes out whole: should the process die, the file holds
	// an array of whole events, which readers take without its ']'.
	return w.flush(0)
}

// Close writes the spans still held, the dropped counts and the end of the
// JSON document, and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.start(&timeline.Trace{})
	}
	for _, ts := range w.order {
		if len(ts.held) > 0 {
			w.emit(ts, ts.held, nil, true)
			w.held -= len(ts.held)
			ts.held = ts.held[:0]
		}
	}
	w.writeDropsCounter()
	d := w.total()
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaDrops+`","args":{"zones":`...)
	w.buf = strconv.AppendUint(w.buf, d.Zones, 10)
	w.buf = append(w.buf, `,"unmatched":`...)
	w.buf = strconv.AppendUint(w.buf, d.Unmatched, 10)
	w.buf = append(w.buf, `,"spans":`...)
	w.buf = strconv.AppendUint(w.buf, d.Spans, 10)
	w.buf = append(w.buf, `,"unconverted":`...)
	w.buf = strconv.AppendUint(w.buf, d.Unconverted, 10)
	w.buf = append(w.buf, `,"evicted":`...)
	w.buf = strconv.AppendUint(w.buf, d.Evicted, 10)
	w.buf = append(w.buf, `,"invalid_flows":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Flows, 10)
	w.buf = append(w.buf, `,"invalid_samples":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Samples, 10)
	w.buf = append(w.buf, `,"held_overflow":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Forced, 10)
	w.buf = append(w.buf, "}}\n]\n"...)
	w.closed = true
	return w.flush(0)
}

// total is the trace's drops plus the spans this writer refused.
func (w *Writer) total() timeline.Drops {
	d := w.drops
	d.Spans += w.invalid.Spans
	return d
}

func (w *Writer) flush(min int) error {
	if w.err != nil || len(w.buf) < min || len(w.buf) == 0 {
		return w.err
	}
	_, w.err = w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return w.err
}

func (w *Writer) start(b *timeline.Trace) {
	w.started = true
	w.pid = b.Process.PID
	if w.pid <= 0 {
		w.pid = 1
	}
	w.pidStr = strconv.AppendInt(nil, int64(w.pid), 10)
	w.buf = append(w.buf, "[\n"...)
	w.buf = append(w.buf, `{"ph":"M","pid":`...)
	w.buf = strconv.AppendInt(w.buf, int64(w.pid), 10)
	w.buf = append(w.buf, `,"name":"process_name","args":{"name":`...)
	name := b.Process.Name
	if name == "" {
		name = "framescope"
	}
	w.buf = appendString(w.buf, name)
	w.buf = append(w.buf, "}}"...)
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"process_sort_index","args":{"sort_index":0}}`...)
}

// beginEvent starts an event: `,\n{"ph":"X","pid":N`.
func (w *Writer) beginEvent(ph byte) {
	w.buf = append(w.buf, ",\n{\"ph\":\""...)
	w.buf = append(w.buf, ph, '"', ',', '"', 'p', 'i', 'd', '"', ':')
	w.buf = append(w.buf, w.pidStr...)
}

func (w *Writer) internNames(names []string) {
	for i := len(w.names); i < len(names); i++ {
		w.names = append(w.names, appendString(nil, names[i]))
	}
}

func (w *Writer) name(id timeline.NameID) []byte {
	if int(id) < len(w.names) {
		return w.names[id]
	}
	return w.names[0]
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

func (w *Writer) describe(b *timeline.Trace, t *timeline.Track) {
	ts := &trackState{t: *t, tid: strconv.AppendUint(nil, uint64(t.ID), 10)}
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
		w.beginEvent('M')
		w.buf = append(w.buf, `,"tid":`...)
		w.buf = append(w.buf, ts.tid...)
		w.buf = append(w.buf, `,"name":"thread_name","args":{"name":`...)
		w.buf = appendString(w.buf, t.Name)
		w.buf = append(w.buf, "}}"...)
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

// writeSpans groups the batch's spans by track, joins them with the spans
// held from earlier batches, and writes those whose ancestors that could
// share their start time are known.
func (w *Writer) writeSpans(b *timeline.Trace) {
	n := len(b.Spans)
	if n == 0 {
		return
	}
	// Flow ends, sorted by span index.
	w.marks = w.marks[:0]
	for _, f := range b.Flows {
		if f.From < 0 || f.From >= n || f.To < 0 || f.To >= n {
			w.invalid.Flows++
			continue
		}
		from, to := &b.Spans[f.From], &b.Spans[f.To]
		if from.Start > to.End || f.From == f.To {
			// An arrow back in time: Chrome JSON flows cannot draw it.
			w.invalid.Flows++
			continue
		}
		w.flowID++
		w.marks = append(w.marks, flowMark{span: int32(f.From), id: w.flowID}, flowMark{span: int32(f.To), in: true, late: from.Start > to.Start, id: w.flowID})
	}
	if len(w.marks) > 1 {
		slices.SortFunc(w.marks, func(a, b flowMark) int { return int(a.span) - int(b.span) })
	}
	w.idx = w.idx[:0]
	for i := range b.Spans {
		s := &b.Spans[i]
		ts := w.tracks[s.Track]
		if ts == nil || ts.t.Kind == timeline.TrackCounter || s.End < s.Start {
			w.invalid.Spans++
			w.killFlows(w.flowsOf(int32(i)))
			continue
		}
		w.idx = append(w.idx, int32(i))
	}
	spans := b.Spans
	slices.SortFunc(w.idx, func(i, j int32) int {
		a, c := &spans[i], &spans[j]
		switch {
		case a.Track != c.Track:
			return cmpU32(uint32(a.Track), uint32(c.Track))
		case a.Start != c.Start:
			return cmp64(a.Start, c.Start)
		case a.End != c.End:
			return cmp64(c.End, a.End)
		}
		return int(a.Depth) - int(c.Depth)
	})
	for lo := 0; lo < len(w.idx); {
		track := spans[w.idx[lo]].Track
		hi := lo + 1
		for hi < len(w.idx) && spans[w.idx[hi]].Track == track {
			hi++
		}
		ts := w.tracks[track]
		w.cands = w.cands[:0]
		// Merge the held spans (sorted) with this batch's (sorted).
		h := ts.held
		for k := lo; k < hi; k++ {
			s := spans[w.idx[k]]
			for len(h) > 0 && lessSpan(&h[0].s, &s) {
				w.cands = append(w.cands, h[0])
				h = h[1:]
			}
			w.cands = append(w.cands, cand{s: s, flows: w.flowsOf(w.idx[k])})
		}
		w.cands = append(w.cands, h...)
		w.held -= len(ts.held)
		ts.held = w.emit(ts, w.cands, ts.held[:0], false)
		w.held += len(ts.held)
		lo = hi
	}
	if w.held > MaxHeld {
		for _, ts := range w.order {
			if len(ts.held) > 0 {
				w.invalid.Forced += uint64(len(ts.held))
				w.emit(ts, ts.held, nil, true)
				ts.held = ts.held[:0]
			}
		}
		w.held = 0
	}
}

// killFlows counts the flows of a refused span as refused, once each.
func (w *Writer) killFlows(fs []flowMark) {
	for _, f := range fs {
		if w.dead == nil {
			w.dead = map[uint64]bool{}
		}
		if !w.dead[f.id] {
			if len(w.dead) >= 1<<16 {
				clear(w.dead)
			}
			w.dead[f.id] = true
			w.invalid.Flows++
		}
	}
}

func (w *Writer) flowsOf(span int32) []flowMark {
	lo, _ := slices.BinarySearchFunc(w.marks, span, func(m flowMark, s int32) int { return int(m.span) - int(s) })
	hi := lo
	for hi < len(w.marks) && w.marks[hi].span == span {
		hi++
	}
	return w.marks[lo:hi:hi]
}

func lessSpan(a, b *timeline.Span) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	if a.End != b.End {
		return a.End > b.End
	}
	return a.Depth < b.Depth
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// contains reports whether s nests inside t, given that s sorts after t.
// A span that starts where t ends is inside t only if it is deeper.
func contains(t, s *timeline.Span) bool {
	if s.Start < t.Start || s.End > t.End {
		return false
	}
	return s.Start < t.End || s.Depth > t.Depth
}

// emit writes the spans of cs (sorted by lessSpan) that are safe to write
// and appends the others, still sorted, to held, which it returns. With
// all set everything is written.
func (w *Writer) emit(ts *trackState, cs []cand, held []cand, all bool) []cand {
	// Pass 1: find each span's parent among cs, refuse spans that overlap
	// one without nesting, and decide what is safe to write now.
	w.safe = w.safe[:0]
	w.bad = w.bad[:0]
	w.stack = w.stack[:0]
	for i := range cs {
		s := &cs[i].s
		for len(w.stack) > 0 {
			t := &cs[w.stack[len(w.stack)-1]].s
			if contains(t, s) || s.Start < t.End {
				break
			}
			w.stack = w.stack[:len(w.stack)-1]
		}
		if len(w.stack) > 0 && !contains(&cs[w.stack[len(w.stack)-1]].s, s) {
			w.safe = append(w.safe, false)
			w.bad = append(w.bad, true)
			continue
		}
		ok := all || s.Depth == 0
		if !ok && len(w.stack) > 0 {
			p := w.stack[len(w.stack)-1]
			ok = cs[p].s.Start < s.Start || w.safe[p]
		} else if !ok {
			ok = ts.parentWritten(s)
		}
		w.safe = append(w.safe, ok)
		w.bad = append(w.bad, false)
		w.stack = append(w.stack, int32(i))
	}
	// Pass 2: write the safe spans as B/E pairs.
	w.stack = w.stack[:0]
	for i := range cs {
		c := &cs[i]
		if w.bad[i] {
			// Overlaps a span without nesting: writing it would corrupt
			// the track.
			w.invalid.Spans++
			w.killFlows(c.flows)
			continue
		}
		if !w.safe[i] {
			if c.flows != nil {
				c.flows = slices.Clone(c.flows)
			}
			held = append(held, *c)
			continue
		}
		s := &c.s
		for len(w.stack) > 0 {
			t := &cs[w.stack[len(w.stack)-1]].s
			if contains(t, s) {
				break
			}
			if s.Start < t.End {
				break // overlap, handled below
			}
			w.end(ts, &cs[w.stack[len(w.stack)-1]])
			w.stack = w.stack[:len(w.stack)-1]
		}
		if len(w.stack) > 0 && !contains(&cs[w.stack[len(w.stack)-1]].s, s) ||
			len(w.stack) == 0 && !ts.claim(s) {
			// Overlaps a span without nesting, here or written before:
			// writing it would corrupt the track.
			w.invalid.Spans++
			w.killFlows(c.flows)
			continue
		}
		w.begin(ts, c)
		w.stack = append(w.stack, int32(i))
	}
	for len(w.stack) > 0 {
		w.end(ts, &cs[w.stack[len(w.stack)-1]])
		w.stack = w.stack[:len(w.stack)-1]
	}
	return held
}

func (w *Writer) begin(ts *trackState, c *cand) {
	s := &c.s
	ts.wrote(s)
	w.maxTs = max(w.maxTs, s.End)
	w.buf = append(w.buf, ts.bPre...)
	w.buf = appendMicros(w.buf, s.Start)
	w.buf = append(w.buf, `,"name":`...)
	w.buf = append(w.buf, w.name(s.Name)...)
	if s.Frame != 0 || s.ErrNs != 0 || ts.queue != nil {
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
			w.buf = append(w.buf, `"err_ns":`...)
			w.buf = strconv.AppendUint(w.buf, uint64(s.ErrNs), 10)
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
	w.buf = append(w.buf, `,"cat":"flow","name":"flow","id":`...)
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
		w.buf = strconv.AppendFloat(w.buf, s.Value, 'g', -1, 64)
		w.buf = append(w.buf, "}}"...)
		if len(w.buf) > 256<<10 {
			w.flush(0)
		}
	}
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
// counter when the total has changed.
func (w *Writer) writeDropsCounter() {
	total := w.total().Total()
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
