package perfetto

import (
	"math"
	"math/bits"

	"github.com/framescope/framescope/timeline"
)

// writeWork writes a GPU zone's work as debug annotations of its slice
// begin: an unsigned count per statistic counted, or, for a zone without
// counts, why (work_missing) and what it would have counted (work_stats).
// A counted zone of no statistic says so with an empty work_stats.
func (w *Writer) writeWork(wk *timeline.Work) {
	e := &w.e
	if wk.Missing == timeline.WorkCounted {
		for v := uint32(wk.Stats); v != 0; v &= v - 1 {
			i := bits.TrailingZeros32(v)
			da := e.open(fTEAnnotations)
			e.varint(fDANameIID, uint64(annWork+i))
			e.varint(fDAUint, wk.Count[i])
			e.close(da)
		}
		if wk.Stats != 0 {
			return
		}
	} else {
		da := e.open(fTEAnnotations)
		e.varint(fDANameIID, uint64(annWorkMissing))
		e.str(fDAString, wk.Missing.String())
		e.close(da)
	}
	da := e.open(fTEAnnotations)
	e.varint(fDANameIID, uint64(annWorkStats))
	e.str(fDAString, wk.Stats.String())
	e.close(da)
}

// writeWorkCounters writes a work group's sums on its queue's work
// counters, at the earliest start of its zones, and with render stages
// as GPU counters too.
func (w *Writer) writeWorkCounters(g *workGroup) {
	t := &w.tracks[g.queue]
	w.describeWork(t, g.stats)
	for v := uint32(g.stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		w.counter(g.start, workUUID(t.ID, i), float64(g.sum[i]))
	}
	if w.opt.RenderStages {
		w.gpuCounters(t, g)
	}
}

// gpuID returns the gpu_id of a device: 0, 1, ... in the order seen.
func (w *Writer) gpuID(device string) int32 {
	if id, ok := w.gpuIDs[device]; ok {
		return id
	}
	if w.gpuIDs == nil {
		w.gpuIDs = map[string]int32{}
	}
	id := int32(len(w.gpuIDs))
	w.gpuIDs[device] = id
	return id
}

// hwQueueIID is the iid of a GPU queue track's hardware queue
// specification. Stage specifications share the iids of
// InternedData.gpu_specifications, as their NameID+1, at most 2^32.
func hwQueueIID(id timeline.TrackID) uint64 { return 1<<32 | uint64(id) }

// absPacket starts a packet at ts on the MONOTONIC clock itself, not the
// sequence's incremental one, which it leaves as it is: render stage and
// GPU counter packets are written out of time order (a zone's stage as
// its slice begins, a sum at its zones' end).
func (w *Writer) absPacket(ts int64) *enc {
	w.pktAt = w.e.open(fTracePacket)
	w.e.varint(fPktTimestamp, uint64(ts))
	w.e.varint(fPktTimestampClockID, clockMonotonic)
	w.e.varint(fPktSequenceID, uint64(w.cur.id))
	return &w.e
}

// renderStage writes a GPU zone as a GpuRenderStageEvent on the hardware
// queue of its queue track (a lane's zones on its queue's), interning on
// the sequence the graphics context of its device, the hardware queue
// (named as the queue track, described as its queue arg) and its stage
// (the zone's name) when they are new there.
func (w *Writer) renderStage(s *timeline.Span, ti int32) {
	q := w.queueOf(ti)
	if q < 0 {
		return
	}
	qt := &w.tracks[q]
	gpu := w.gpuID(qt.Queue.Device)
	seq := w.cur
	e := w.absPacket(s.Start)
	newCtx := !hasBit(seq.contexts, uint64(gpu))
	newQueue := !hasBit(seq.hwQueues, uint64(q))
	newStage := !hasBit(seq.stages, uint64(s.Name))
	if newCtx || newQueue || newStage {
		in := e.open(fPktInternedData)
		if newCtx {
			setBit(&seq.contexts, uint64(gpu))
			x := e.open(fInternGraphicsContext)
			e.varint(fInternIID, uint64(gpu)+1)
			e.varint(fCtxPid, uint64(int64(w.pid)))
			e.varint(fCtxAPI, apiVulkan)
			e.close(x)
		}
		if newQueue {
			setBit(&seq.hwQueues, uint64(q))
			x := e.open(fInternGpuSpecs)
			e.varint(fInternIID, hwQueueIID(qt.ID))
			e.str(fInternName, qt.Name)
			if qt.queue != "" {
				e.str(fInternDescription, qt.queue)
			}
			e.close(x)
		}
		if newStage {
			setBit(&seq.stages, uint64(s.Name))
			x := e.open(fInternGpuSpecs)
			e.varint(fInternIID, uint64(s.Name)+1)
			e.str(fInternName, w.names[s.Name])
			e.close(x)
		}
		e.close(in)
	}
	rs := e.open(fPktGpuRenderStage)
	w.stageID++
	e.varint(fRSEventID, w.stageID)
	e.varint(fRSDuration, uint64(s.End-s.Start))
	e.varint(fRSHwQueueIID, hwQueueIID(qt.ID))
	e.varint(fRSStageIID, uint64(s.Name)+1)
	e.varint(fRSGpuID, uint64(gpu))
	e.varint(fRSContext, uint64(gpu)+1)
	if s.Frame != 0 {
		e.varint(fRSSubmissionID, uint64(uint32(s.Frame)))
	}
	e.close(rs)
	w.endPacket()
}

// gpuCounters writes a work group as GPU counters of its queue, one a
// statistic, named as its work counter ("<queue name> <StatKey>").
//
// The trace processor reads a GpuCounterEvent's value as the counter's
// value since the event before it on the counter ("backwards looking").
// So the sums are written at the zones' latest end, after a 0 at their
// earliest start that ends the time before them: each shows from the
// start to the end, 0 between. A counter whose last event is at or past
// the start has nothing to end there; a sum is never written before the
// counter's last event.
func (w *Writer) gpuCounters(q *trackState, g *workGroup) {
	st := q.gpu
	if st == nil {
		st = &gpuQueue{}
		for i := range st.last {
			st.last[i] = -1
		}
		q.gpu = st
	}
	gpu := w.gpuID(q.Queue.Device)
	var start, fresh, atEnd timeline.PipelineStats
	for v := uint32(g.stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		if st.last[i] < g.start {
			start |= 1 << i
		}
		if st.id[i] == 0 {
			fresh |= 1 << i // fresh counters start here too: last is -1
		}
	}
	if start != 0 {
		w.gpuCounterPacket(q, st, gpu, g.start, start, fresh, nil)
	}
	for v := uint32(g.stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		st.last[i] = max(st.last[i], g.start)
		if st.last[i] <= g.end {
			atEnd |= 1 << i
			continue
		}
		w.gpuCounterPacket(q, st, gpu, st.last[i], 1<<i, 0, &g.sum)
	}
	if atEnd != 0 {
		w.gpuCounterPacket(q, st, gpu, g.end, atEnd, 0, &g.sum)
		for v := uint32(atEnd); v != 0; v &= v - 1 {
			st.last[bits.TrailingZeros32(v)] = g.end
		}
	}
}

// gpuCounterPacket writes a GpuCounterEvent at ts with the counters of
// stats: 0, or their values in sum. The counters of fresh get their ids
// and are described first, in the event's GpuCounterDescriptor: the
// trace processor takes each counter id's description once a trace.
func (w *Writer) gpuCounterPacket(q *trackState, st *gpuQueue, gpu int32, ts int64, stats, fresh timeline.PipelineStats, sum *[timeline.NumPipelineStats]uint64) {
	e := w.absPacket(ts)
	ev := e.open(fPktGpuCounterEvent)
	if fresh != 0 {
		d := e.open(fGCDescriptor)
		for v := uint32(fresh); v != 0; v &= v - 1 {
			i := bits.TrailingZeros32(v)
			w.counterID++
			st.id[i] = w.counterID
			k := timeline.StatKey(i)
			sp := e.open(fGCDSpecs)
			e.varint(fGCSCounterID, uint64(st.id[i]))
			e.str(fGCSName, q.Name+" "+k)
			e.str(fGCSDescription, k)
			e.varint(fGCSGroups, statGroup(i))
			e.close(sp)
		}
		e.close(d)
	}
	for v := uint32(stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		c := e.open(fGCCounters)
		e.varint(fGCCounterID, uint64(st.id[i]))
		var x uint64
		if sum != nil {
			x = sum[i]
		}
		if x <= math.MaxInt64 {
			e.varint(fGCIntValue, x)
		} else {
			e.double(fGCDoubleValue, float64(x))
		}
		e.close(c)
	}
	e.varint(fGCGpuID, uint64(gpu))
	e.close(ev)
	w.endPacket()
}
