package record

import (
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)
import "fmt"

// sinkState is the recorder's record of sink errors not yet returned.
// It is guarded by sinkMu.
type sinkState struct {
	sinkErr   error  // the first error since Flush or Close last returned one
	sinkFails uint64 // batches failed since then
}

// Flush hands everything finished since the last batch to the sink as one
// batch, unless there is nothing new. Spans whose submission keys still
// wait for their other end stay until the keys expire
// (Options.SettleFrames), so that each flow reaches the sink with both its
// ends. Without a sink it only collects the CPU tracks.
//
// Flush returns an error when a batch failed since Flush or Close last
// returned one, its own or one EndFrame flushed (Options.FlushEvery): the
// sink's error, or, when several failed, one that says how many and wraps
// the first.
func (r *Recorder) Flush() error { return r.flush(false) }

// flush is Flush; final (Close) makes a batch even with nothing new when
// the sink has had none: the stream of a recorder that saw nothing is
// still a trace (its process, tracks and books), not an empty file.
func (r *Recorder) flush(final bool) error {
	r.sinkMu.Lock()
	defer r.sinkMu.Unlock()
	r.flushLocked(final)
	return r.sinkErrLocked()
}

// flushKeep is Flush keeping any error for the next Flush or Close.
func (r *Recorder) flushKeep() {
	r.sinkMu.Lock()
	r.flushLocked(false)
	r.sinkMu.Unlock()
}

// flushLocked writes one batch. The caller holds sinkMu, not mu.
func (r *Recorder) flushLocked(final bool) {
	r.lock()
	r.collectCPU()
	r.expireKeys(false)
	sink := r.opt.Sink
	if sink == nil {
		r.evict(timeline.Now())
		r.mu.Unlock()
		return
	}
	b, first := r.batch()
	r.evict(timeline.Now())
	// A change in Drops.Sink alone makes no batch: it comes from the
	// sink's own failure, and the next batch carries it.
	d := b.Drops
	d.Sink = r.sentDrops.Sink
	empty := len(b.Spans)+len(b.Frames)+len(b.Samples)+len(b.Calibrations) == 0 && d == r.sentDrops && b.Ledger == r.sentLedger &&
		!(final && !r.sentBatch)
	if !empty {
		r.sentBatch = true
		r.sentDrops, r.sentLedger = b.Drops, b.Ledger
	}
	r.mu.Unlock()
	if empty {
		return // nothing new: the tracks and names come with the next batch
	}
	n := ItemCounts{
		Spans: uint64(len(b.Spans)), Flows: uint64(len(b.Flows)), Frames: uint64(len(b.Frames)),
		Samples: uint64(len(b.Samples)), Calibrations: uint64(len(b.Calibrations)),
	}
	err := sink.WriteBatch(b)
	if err == nil {
		return
	}
	r.lock()
	r.failBatch(first)
	r.stats.SinkErrors++
	r.stats.SinkLost = r.stats.SinkLost.add(n)
	r.mu.Unlock()
	if r.sinkFails == 0 {
		r.sinkErr = err
	}
	r.sinkFails++
}

// sinkErrLocked returns the sink errors not yet returned, as one, and
// forgets them. The caller holds sinkMu.
func (r *Recorder) sinkErrLocked() error {
	err, n := r.sinkErr, r.sinkFails
	r.sinkErr, r.sinkFails = nil, 0
	switch n {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("timeline: sink: %w", err)
	}
	return fmt.Errorf("timeline: sink: %d batches failed, the first with: %w", n, err)
}

// batch takes everything not yet streamed and free to go, and counts what
// it delivers for the first time. The caller holds mu.
func (r *Recorder) batch() (*timeline.Trace, *batchCount) {
	first := &r.firstScratch
	first.n = [books.NumKinds]uint64{}
	first.spans, first.flows = first.spans[:0], first.flows[:0]
	b := r.header()
	b.Spans = make([]timeline.Span, 0, r.spans.len()-r.spanCur)
	seqs := r.seqScratch[:0]
	cur := -1
	for i := r.spanCur; i < r.spans.len(); i++ {
		it := r.spans.at(i)
		if it.flags&streamedFlag != 0 {
			continue
		}
		if it.holds > 0 {
			if cur < 0 {
				cur = i
			}
			continue
		}
		if it.flags&sentFlag == 0 {
			if k, ok := r.bookOfTrack(it.Track); ok {
				first.n[k]++
				first.spans = append(first.spans, it.seq)
			}
		}
		it.flags |= streamedFlag | sentFlag
		b.Spans = append(b.Spans, it.Span)
		seqs = append(seqs, it.seq)
	}
	if cur < 0 {
		cur = r.spans.len()
	}
	r.spanCur = cur

	r.flowCur = max(r.flowCur, r.flows.base)
	for a := r.flowCur; a < r.flows.end(); a++ {
		f := r.flows.abs(a)
		if f.streamed {
			continue
		}
		from, ok1 := indexOf(seqs, f.from)
		to, ok2 := indexOf(seqs, f.to)
		switch {
		case ok1 && ok2:
			b.Flows = append(b.Flows, timeline.Flow{From: from, To: to})
			if !f.sent {
				first.n[books.FlowBook]++
				first.flows = append(first.flows, a)
			}
			f.streamed = true
		case ok1 || ok2 || r.streamedOrGone(f.from) || r.streamedOrGone(f.to):
			if !f.sent { // a Dump had it: delivered, not lost
				r.stats.FlowsSplit++
				f.split = true
			}
			f.streamed = true
		}
	}
	for r.flowCur < r.flows.end() && r.flows.abs(r.flowCur).streamed {
		r.flowCur++
	}

	r.seqScratch = seqs[:0]

	b.Frames = r.frames.takeNew(b.Frames)
	b.Samples = r.samples.takeNew(b.Samples)
	b.Calibrations = r.cals.takeNew(b.Calibrations)
	b.Drops = r.totalDrops()
	// The books as they stand once the sink has the batch; a failure
	// moves its items to Sink (settleBatch).
	r.deliverBatch(first)
	b.Ledger = r.ledger(b.Drops)
	return b, first
}

// streamedOrGone reports whether the span seq went to the sink earlier or
// left memory. The caller holds mu.
func (r *Recorder) streamedOrGone(seq uint64) bool {
	i := r.spanIndex(seq)
	return i < 0 || r.spans.at(i).flags&streamedFlag != 0
}
