package perfetto

import (
	"cmp"
	"errors"
	"io"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/framescope/framescope/internal/limitslices"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// What limits each frame (package timeline/limits) is derived from the
// whole trace, so it cannot be streamed: Write adds it after the trace's
// one batch, and AppendLimits after a streamed trace. It is a batch of its
// own, on a packet sequence of its own (limitsSeq, above any a Writer
// opens: it would take 4 billion sequences to reach it), at times that
// reach back to the trace's first frame.
const (
	uuidLimits = 1 << 42 // + a limTrack
	limitsSeq  = math.MaxUint32
)

// The tracks of the frames' limits, under the process, after the frames.
const (
	limVerdicts = iota // a slice per frame, named by its verdict
	limIdle            // a slice per GPU idle gap, named by its cause
	limGPUBusy         // a counter: GPU busy, a share of the frame
	limCPUBusy         // a counter: CPU busy on the submitting thread, a share of the frame
	numLimTracks
)

var limTrackNames = [numLimTracks]string{"frame limits", "GPU idle", "GPU busy", "CPU busy"}

// AppendLimits writes what limits each frame of t (limits.Of) to w, as
// Write adds it to a whole trace, to be appended to a trace of t that a
// Writer streamed: framescope run appends it to the layer's trace once
// the program has exited. It writes nothing where no frame has a verdict.
// Read leaves it out, so the trace reads back as it was; for the same
// reason it cannot tell a trace that has them already: call it once (a
// trace of framescope run's has them), or viewers show them twice.
func AppendLimits(w io.Writer, t *timeline.Trace) error {
	if t == nil {
		return errors.New("perfetto: nil trace")
	}
	pw := NewWriter(w, Options{})
	pw.writeLimits(limits.Of(t))
	return pw.Close()
}

// limEvent is one thing to write on a limits track.
type limEvent struct {
	ts    int64
	typ   uint64 // typeSliceBegin, typeSliceEnd or typeCounter
	track int
	name  string
	value float64       // a counter's
	frame *limits.Frame // a verdict's begin: its figures as arguments
}

// writeLimits writes r's frames as the limits tracks' slices and counters,
// then a batch end, so that a reader reads it as a whole batch.
func (w *Writer) writeLimits(r limits.Report) {
	ev := limitEvents(r)
	if len(ev) == 0 || w.err != nil {
		return
	}
	w.stats.Batches++
	s := &sequence{id: limitsSeq, last: ev[0].ts}
	w.cur = s
	w.stats.Sequences++
	w.startSequence(s)
	for i, name := range limTrackNames {
		w.simpleTrack(uint64(uuidLimits+i), uuidProcess, name, "framescope kind=limits", -band*3+band/2+1+int32(i), i >= limGPUBusy, 0, "")
	}
	for i := range ev {
		w.writeLimEvent(&ev[i])
	}
	w.writeBatchEnd()
	w.Flush()
}

// limitEvents are r's frames' verdicts, gaps (as limitslices lays them
// out) and busy shares, in order of time, ends before begins at one time.
func limitEvents(r limits.Report) []limEvent {
	var ev []limEvent
	for _, v := range limitslices.Verdicts(r) {
		ev = append(ev, limEvent{ts: v.Start, typ: typeSliceBegin, track: limVerdicts, name: v.Frame.Limit.Label(), frame: v.Frame},
			limEvent{ts: v.End, typ: typeSliceEnd, track: limVerdicts})
	}
	for _, g := range limitslices.Gaps(r) {
		ev = append(ev, limEvent{ts: g.Start, typ: typeSliceBegin, track: limIdle, name: g.Cause.String()},
			limEvent{ts: g.End, typ: typeSliceEnd, track: limIdle})
	}
	for k := range r.Frames {
		f := &r.Frames[k]
		ev = append(ev, limEvent{ts: f.Start, typ: typeCounter, track: limGPUBusy, value: share(f.GPUBusy, f.Dur())})
		if f.Thread != 0 {
			ev = append(ev, limEvent{ts: f.Start, typ: typeCounter, track: limCPUBusy, value: share(f.CPUBusy, f.Dur())})
		}
	}
	slices.SortStableFunc(ev, func(a, b limEvent) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(limOrder(a.typ), limOrder(b.typ)))
	})
	return ev
}

// limOrder orders events of one time: ends, then counters, then begins.
func limOrder(typ uint64) int {
	switch typ {
	case typeSliceEnd:
		return 0
	case typeCounter:
		return 1
	}
	return 2
}

// share is part of whole, from 0 to 1.
func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

func (w *Writer) writeLimEvent(x *limEvent) {
	uuid := uint64(uuidLimits + x.track)
	if x.typ == typeCounter {
		w.counter(x.ts, uuid, x.value)
		return
	}
	e := w.timedPacket(x.ts)
	at := e.open(fPktTrackEvent)
	e.varint(fTEType, x.typ)
	e.varint(fTETrackUuid, uuid)
	if x.typ == typeSliceBegin {
		e.str(fTEName, x.name)
		if x.frame != nil {
			w.limArgs(x.frame)
		}
	}
	e.close(at)
	w.endPacket()
}

// limArgs writes a frame's figures as its verdict's arguments: shares of
// the frame, and ns; the CPU's and the latency only where known.
func (w *Writer) limArgs(f *limits.Frame) {
	e := &w.e
	arg := func(name string, field protowire.Number, v uint64) {
		da := e.open(fTEAnnotations)
		e.str(fDAName, name)
		e.varint(field, v)
		e.close(da)
	}
	frac := func(name string, part int64) {
		da := e.open(fTEAnnotations)
		e.str(fDAName, name)
		e.double(fDADouble, share(part, f.Dur()))
		e.close(da)
	}
	arg("frame", fDAUint, f.ID)
	frac("gpu_busy", f.GPUBusy)
	arg("gpu_busy_ns", fDAInt, uint64(f.GPUBusy))
	arg("gpu_err_ns", fDAInt, uint64(f.GPUErrNs))
	if f.Thread != 0 {
		frac("cpu_busy", f.CPUBusy)
		arg("cpu_busy_ns", fDAInt, uint64(f.CPUBusy))
		arg("cpu_wait_ns", fDAInt, uint64(f.CPUWait))
		arg("present_wait_ns", fDAInt, uint64(f.PresentWait))
	}
	if f.Latency >= 0 {
		arg("latency_ns", fDAInt, uint64(f.Latency))
	}
}
