package perfetto

import (
	"math"
	"slices"

	"github.com/framescope/framescope/timeline"
)

// zeroGroup is the zero-length slices of one depth within a run of events
// at one time on one track.
type zeroGroup struct {
	depth      uint16
	start, end int // range in the run
	done       bool
}

// writeEvents writes sorted events of the batch on the current sequence.
func (w *Writer) writeEvents(b *timeline.Trace, ev []event) {
	for i := 0; i < len(ev); {
		j := i + 1
		for j < len(ev) && ev[j].ts == ev[i].ts && ev[j].track() == ev[i].track() {
			j++
		}
		// The run's slices, then its other events (they sort last).
		k := j
		for k > i && ev[k-1].kind() == evOther {
			k--
		}
		if k-i > 1 && ev[k-1].kind() == evZero {
			w.writeRun(b, ev[i:k])
		} else {
			for x := i; x < k; x++ {
				w.writeEvent(b, ev[x])
			}
		}
		for ; k < j; k++ {
			w.writeEvent(b, ev[k])
		}
		i = j
	}
}

// writeRun writes the events of one track at one time when zero-length
// slices are among them, so that each slice lands at its depth: a
// zero-length slice at depth d goes inside the slice at depth d-1 that
// ends or begins here, or between the others at depth d.
func (w *Writer) writeRun(b *timeline.Trace, run []event) {
	z := len(run)
	for z > 0 && run[z-1].kind() == evZero {
		z--
	}
	w.groups = w.groups[:0]
	for k := z; k < len(run); k++ {
		if n := len(w.groups); n > 0 && w.groups[n-1].depth == run[k].depth() {
			w.groups[n-1].end = k + 1
			continue
		}
		w.groups = append(w.groups, zeroGroup{depth: run[k].depth(), start: k, end: k + 1})
	}
	for _, e := range run[:z] {
		if e.kind() == evEnd {
			w.writeZeros(b, run, int(e.depth())+1)
		} else {
			w.writeZeros(b, run, int(e.depth()))
		}
		w.writeEvent(b, e)
	}
	for g := range w.groups {
		w.writeZeros(b, run, int(w.groups[g].depth))
	}
}

// writeZeros writes the zero-length slices at depth d, with those deeper
// inside the first of them.
func (w *Writer) writeZeros(b *timeline.Trace, run []event, d int) {
	for ; d <= 0xffff; d++ {
		g, found := slices.BinarySearchFunc(w.groups, uint16(d), func(g zeroGroup, d uint16) int {
			return int(g.depth) - int(d)
		})
		if !found || w.groups[g].done {
			return
		}
		grp := &w.groups[g]
		grp.done = true
		// All but the first close at once; the first stays open for the
		// next depth, and closes after it.
		for k := grp.start + 1; k < grp.end; k++ {
			w.writeEvent(b, run[k])
		}
		first := run[grp.start]
		w.writeSlice(b, first, typeSliceBegin)
		defer w.writeSlice(b, first, typeSliceEnd)
	}
}

// writeEvent writes one event; a zero-length slice becomes its begin and
// end.
func (w *Writer) writeEvent(b *timeline.Trace, e event) {
	switch e.src() {
	case srcSpan, srcFrame:
		switch e.kind() {
		case evBegin:
			w.writeSlice(b, e, typeSliceBegin)
		case evEnd:
			w.writeSlice(b, e, typeSliceEnd)
		case evZero:
			w.writeSlice(b, e, typeSliceBegin)
			w.writeSlice(b, e, typeSliceEnd)
		}
	case srcSample:
		s := &b.Samples[e.idx]
		w.counter(s.Time, w.tracks[e.track()].uuid, s.Value)
	case srcCalib:
		c := &b.Calibrations[e.idx]
		t := &w.tracks[e.track()]
		w.describeCalib(t)
		w.counter(c.Time, calibUUID(t.ID, 0), c.ErrNs)
		w.counter(c.Time, calibUUID(t.ID, 1), c.DriftPPM)
		w.counter(c.Time, calibUUID(t.ID, 2), float64(c.Samples))
	case srcWork:
		w.writeWorkCounters(&w.workGroups[e.idx])
	}
}

// writeSlice writes a slice begin or end for a span or a frame.
func (w *Writer) writeSlice(b *timeline.Trace, ev event, typ uint64) {
	var t *trackState
	var name timeline.NameID
	var frame uint64
	var errNs uint32
	var ts int64
	var work *timeline.Work
	literal := ""
	if ev.src() == srcFrame {
		t = &w.framesList
		w.describeFrames()
		f := &b.Frames[ev.idx]
		ts, frame, literal = f.Start, f.ID, "frame"
		if typ == typeSliceEnd {
			ts = f.End
		}
	} else {
		t = &w.tracks[ev.track()]
		s := &b.Spans[ev.idx]
		ts, name, frame, errNs = s.Start, s.Name, s.Frame, s.ErrNs
		if typ == typeSliceEnd {
			ts = s.End
		} else if s.Work != nil && s.Work.Valid() {
			work = s.Work
		}
	}

	e := w.timedPacket(ts)
	if typ == typeSliceBegin && literal == "" {
		w.intern(name, work != nil)
	}
	at := e.open(fPktTrackEvent)
	e.varint(fTEType, typ)
	if t.uuid != w.cur.track {
		e.varint(fTETrackUuid, t.uuid)
	}
	if typ == typeSliceBegin {
		e.varint(fTECategoryIIDs, uint64(t.cat))
		if literal != "" {
			e.str(fTEName, literal)
		} else {
			e.varint(fTENameIID, uint64(name)+1)
		}
		w.writeArgs(t, ts, ev.depth(), frame, errNs)
		if work != nil {
			w.writeWork(work)
		}
		if ev.src() == srcSpan {
			for f := w.flowOut[ev.idx]; f >= 0; f = w.nextOut[f] {
				e.fixed64(fTEFlowIDs, w.flowIDs[f])
			}
			for f := w.flowIn[ev.idx]; f >= 0; f = w.nextIn[f] {
				e.fixed64(fTETermFlowIDs, w.flowIDs[f])
			}
		}
	}
	e.close(at)
	w.endPacket()
	if w.opt.RenderStages && typ == typeSliceBegin && t.cat == catGPU && ev.src() == srcSpan {
		w.renderStage(&b.Spans[ev.idx], ev.track())
	}
}

// writeArgs writes the debug annotations of a slice begin: frame and
// err_ns when they differ from those of the slice before it on its track,
// queue on a GPU track's first slice. "Before" is both in the file (as
// Read restores them) and in time (as the trace processor orders slices:
// by begin, then depth), which agree unless a batch reaches back in time
// on the track; a slice that begins before one written earlier on its
// track carries all its args.
func (w *Writer) writeArgs(t *trackState, ts int64, depth uint16, frame uint64, errNs uint32) {
	e := &w.e
	inOrder := ts > t.timeTs || ts == t.timeTs && depth >= t.timeDepth
	if frame != t.lastFrame || frame != t.timeFrame || !inOrder {
		da := e.open(fTEAnnotations)
		e.varint(fDANameIID, annFrame)
		e.varint(fDAUint, frame)
		e.close(da)
	}
	if errNs != t.lastErr || errNs != t.timeErr || !inOrder {
		da := e.open(fTEAnnotations)
		e.varint(fDANameIID, annErrNs)
		e.varint(fDAUint, uint64(errNs))
		e.close(da)
	}
	if t.queue != "" && (!t.queueDone || !inOrder) {
		t.queueDone = true
		da := e.open(fTEAnnotations)
		e.varint(fDANameIID, annQueue)
		e.str(fDAString, t.queue)
		e.close(da)
	}
	t.lastFrame, t.lastErr = frame, errNs
	if inOrder {
		t.timeFrame, t.timeErr, t.timeTs, t.timeDepth = frame, errNs, ts, depth
	}
}

// intern adds name, and with work the work annotation names, to the open
// packet's interned data if the current sequence does not have them yet.
// (One InternedData a packet: a second would replace the first.)
func (w *Writer) intern(name timeline.NameID, work bool) {
	s := w.cur
	word, bit := int(name)/64, uint(name)%64
	newName := word >= len(s.interned) || s.interned[word]&(1<<bit) == 0
	newWork := work && !s.workNames
	if !newName && !newWork {
		return
	}
	e := &w.e
	in := e.open(fPktInternedData)
	if newName {
		for word >= len(s.interned) {
			s.interned = append(s.interned, 0)
		}
		s.interned[word] |= 1 << bit
		x := e.open(fInternEventNames)
		e.varint(fInternIID, uint64(name)+1)
		e.str(fInternName, w.names[name])
		e.close(x)
	}
	if newWork {
		s.workNames = true
		for iid := annWork; iid < annWorkEnd; iid++ {
			x := e.open(fInternAnnotationNames)
			e.varint(fInternIID, uint64(iid))
			e.str(fInternName, workAnnotationNames[iid])
			e.close(x)
		}
	}
	e.close(in)
}

// counter writes one counter value: as an integer when it is one (a
// varint is shorter than a double).
func (w *Writer) counter(ts int64, uuid uint64, v float64) {
	e := w.timedPacket(ts)
	at := e.open(fPktTrackEvent)
	e.varint(fTEType, typeCounter)
	if uuid != w.cur.track {
		e.varint(fTETrackUuid, uuid)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		e.varint(fTEIntCounter, uint64(int64(v)))
	} else {
		e.double(fTEDoubleCounter, v)
	}
	e.close(at)
	w.endPacket()
}

// keyExact names the annotation that carries a count counter's exact
// value where the counter's own int64 cannot: from 2^63 on, the counter
// is a double for the UI, the annotation the count.
const keyExact = "exact"

// countCounter adds a point to a counter of a count (drops, the ledger):
// an integer counter value, exact up to 2^63-1, and past it a double with
// the exact count beside it (keyExact), so that no count goes through
// float64.
func (w *Writer) countCounter(ts int64, uuid, n uint64) {
	e := w.timedPacket(ts)
	at := e.open(fPktTrackEvent)
	e.varint(fTEType, typeCounter)
	if uuid != w.cur.track {
		e.varint(fTETrackUuid, uuid)
	}
	if n < 1<<63 {
		e.varint(fTEIntCounter, n)
	} else {
		e.double(fTEDoubleCounter, float64(n))
		da := e.open(fTEAnnotations)
		e.str(fDAName, keyExact)
		e.varint(fDAUint, n)
		e.close(da)
	}
	e.close(at)
	w.endPacket()
}

// writeDrops writes the drop counters that changed, and a marker saying
// by how much, at the time of the batch's last event.
func (w *Writer) writeDrops(d timeline.Drops) {
	now := dropValues(d, w.stats.Invalid)
	if now == w.lastDrops {
		return
	}
	w.describeDrops()
	ts := w.cur.last
	for i := range now {
		if now[i] != w.lastDrops[i] {
			w.countCounter(ts, uint64(uuidDrops+i), now[i])
		}
	}
	// Not previous_packet_dropped: the trace processor takes it to mean
	// the sequence lost packets, and then ignores its interned data.
	e := w.timedPacket(ts)
	at := e.open(fPktTrackEvent)
	e.varint(fTEType, typeInstant)
	e.varint(fTETrackUuid, uuidDropped)
	e.varint(fTECategoryIIDs, catOther)
	e.str(fTEName, "framescope dropped")
	for i := range now {
		if now[i] != w.lastDrops[i] {
			da := e.open(fTEAnnotations)
			e.str(fDAName, dropFields[i])
			e.varint(fDAInt, now[i]-w.lastDrops[i])
			e.close(da)
		}
	}
	e.close(at)
	w.endPacket()
	w.lastDrops = now
}

// writeLedger writes the ledger counters that changed: the books of the
// recorder that made the batch, running totals like the drops.
func (w *Writer) writeLedger(l timeline.Ledger) {
	now := ledgerValues(l)
	if now == w.lastLedger {
		return
	}
	w.describeLedger()
	ts := w.cur.last
	for i := range now {
		if now[i] != w.lastLedger[i] {
			w.countCounter(ts, uint64(uuidLedger+1+i), now[i])
		}
	}
	w.lastLedger = now
}

// writeBatchEnd ends a batch with the batches counter: its value is the
// number of batches written, and its packet the batch's last, so that a
// reader knows that everything before it is whole.
func (w *Writer) writeBatchEnd() {
	w.countCounter(w.cur.last, uuidBatches, w.stats.Batches)
}
