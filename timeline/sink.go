package timeline

import "errors"

// Sink receives a recorder's data as it is finished, in batches.
//
// A batch is a *Trace in which Names is the recorder's whole append-only
// name table so far (index = NameID) and Tracks every track defined so
// far (a writer emits a descriptor the first time it sees a track ID);
// Spans, Frames, Samples and Calibrations hold only the items new since
// the last batch; Flows index Spans of the same batch; Drops is the
// running total so far, not a delta. Spans of one track are properly
// nested across the whole stream, and a span's Depth is its depth in the
// whole stream; within a batch spans come in any order.
// A whole Trace is the one-batch case.
//
// The recorder calls WriteBatch from one goroutine at a time, in order,
// never holding its lock, and does not touch the batch afterwards: the
// sink may keep it. Data handed over counts as delivered even when
// WriteBatch returns an error; errors are returned by Flush and counted
// in Stats.SinkErrors.
type Sink interface {
	WriteBatch(batch *Trace) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(batch *Trace) error

// WriteBatch calls f(batch).
func (f SinkFunc) WriteBatch(batch *Trace) error { return f(batch) }

// Flush hands everything finished since the last batch to the sink as one
// batch, unless there is nothing new. Spans whose submission keys still
// wait for their other end stay until the keys expire
// (Options.SettleFrames), so that each flow reaches the sink with both its
// ends. Without a sink it only collects the CPU tracks.
func (r *Recorder) Flush() error {
	r.sinkMu.Lock()
	defer r.sinkMu.Unlock()
	r.mu.Lock()
	r.collectCPU()
	r.expireKeys(false)
	sink := r.opt.Sink
	if sink == nil {
		r.maybeCompact()
		r.mu.Unlock()
		return nil
	}
	b := r.batch()
	r.maybeCompact()
	empty := len(b.Spans)+len(b.Frames)+len(b.Samples)+len(b.Calibrations) == 0 && b.Drops == r.sentDrops
	r.sentDrops = b.Drops
	r.mu.Unlock()
	if empty {
		return nil // nothing new: the tracks and names come with the next batch
	}

	err := sink.WriteBatch(b)
	if err != nil {
		r.mu.Lock()
		r.stats.SinkErrors++
		r.mu.Unlock()
		return errors.Join(errors.New("timeline: sink"), err)
	}
	return nil
}

// batch takes everything not yet streamed and free to go. The caller
// holds mu.
func (r *Recorder) batch() *Trace {
	b := r.header()
	b.Spans = make([]Span, 0, len(r.spans)-r.spanCur)
	seqs := r.seqScratch[:0]
	cur := -1
	for i := r.spanCur; i < len(r.spans); i++ {
		it := &r.spans[i]
		if it.flags&streamedFlag != 0 {
			continue
		}
		if it.holds > 0 {
			if cur < 0 {
				cur = i
			}
			continue
		}
		it.flags |= streamedFlag | sentFlag
		b.Spans = append(b.Spans, it.Span)
		seqs = append(seqs, it.seq)
	}
	if cur < 0 {
		cur = len(r.spans)
	}
	r.spanCur = cur

	for i := range r.flows {
		f := &r.flows[i]
		if f.streamed {
			continue
		}
		from, ok1 := indexOf(seqs, f.from)
		to, ok2 := indexOf(seqs, f.to)
		switch {
		case ok1 && ok2:
			b.Flows = append(b.Flows, Flow{From: from, To: to})
			f.streamed = true
		case ok1 || ok2 || r.streamedOrGone(f.from) || r.streamedOrGone(f.to):
			f.streamed = true
			r.stats.FlowsSplit++
		}
	}

	r.seqScratch = seqs[:0]

	b.Frames = append(b.Frames, r.frames[r.frameCur:]...)
	r.frameCur = len(r.frames)
	b.Samples = append(b.Samples, r.samples[r.sampleCur:]...)
	r.sampleCur = len(r.samples)
	b.Calibrations = append(b.Calibrations, r.cals[r.calCur:]...)
	r.calCur = len(r.cals)
	b.Drops = r.totalDrops()
	return b
}

// streamedOrGone reports whether the span seq went to the sink earlier or
// left memory. The caller holds mu.
func (r *Recorder) streamedOrGone(seq uint64) bool {
	i := r.spanIndex(seq)
	return i < 0 || r.spans[i].flags&streamedFlag != 0
}
