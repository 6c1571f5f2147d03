package live

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// Bounds of the stream the captures read.
const (
	// batchSpans is the size past which the stream starts a new batch at
	// the next frame: a capture's writer needs scratch for one batch.
	batchSpans = 1024
	// maxHeld bounds the spans the stream holds back for frames still to
	// settle; past it, it hands them on at once, flows or not.
	maxHeld = 1 << 16
)

// batch is one piece of the stream, shared read-only by every capture
// that takes it.
type batch struct {
	// t is a sink batch (see timeline.Sink): the name table and tracks so
	// far, whole frames' spans, the flows between them, the frames; Drops
	// is the recorder's running total of what never reached its memory
	// (record.Peeked.Upstream).
	t timeline.Trace
	// no numbers the batches of a stream, from 1.
	no uint64
	// split counts the flows that one of this batch's spans has and the
	// other span of which is not in the batch: before the stream, held
	// back for a later batch, in another batch of the same frames, or
	// gone from the recorder before the poller copied it.
	split uint64
	// missed counts the spans stored since the last batch that left the
	// recorder before the poller copied them.
	missed uint64
	// refs counts the holders: the poller while it hands the batch out,
	// and each capture until it has written it. The last to let go puts
	// it back in batchPool.
	refs atomic.Int32
}

// batchPool keeps batches for reuse, so that the stream allocates
// nothing once warm.
var batchPool = sync.Pool{New: func() any { return new(batch) }}

// newBatch returns an empty batch held once.
func newBatch() *batch {
	b := batchPool.Get().(*batch)
	t := &b.t
	*t = timeline.Trace{Spans: t.Spans[:0], Flows: t.Flows[:0], Frames: t.Frames[:0]}
	b.no, b.split, b.missed = 0, 0, 0
	b.refs.Store(1)
	return b
}

// release lets go of one hold on b.
func (b *batch) release() {
	if b.refs.Add(-1) != 0 {
		return
	}
	if cap(b.t.Spans) <= 4*batchSpans {
		batchPool.Put(b) // one that grew for a very large frame is let go
	}
}

// stream turns the poller's Peeks into batches for the captures. It holds
// each span back until its frame has settled, that is until every GPU
// result of the frame is in, so that a batch carries whole frames: the
// CPU spans of a frame, its GPU zones, and the flows between them, which
// come with the zones a few frames after the CPU spans. A span of no
// frame waits for one batch. Only the poller uses it, outside watcher.mu.
type stream struct {
	on      bool
	process timeline.Process
	held    []timeline.Span
	heldSeq []uint64
	flows   [][2]uint64 // flows that came, not yet in a batch
	frames  []timeline.Frame
	missed  uint64
	noFrame uint64 // spans of no frame up to this sequence number go with the next batch
	last    uint64 // number of the last batch
	drops   timeline.Drops

	// Scratch of emit.
	ready    []int    // indexes into held of the spans handed on, ascending
	readySeq []uint64 // their sequence numbers
	order    []int    // indexes into ready, by frame
	place    []spot   // for each of ready, where it went
	out      []*batch
}

// start begins a stream from the window's spans of frames not yet
// settled, so that the first batch holds whole frames.
func (s *stream) start(wn *window, process timeline.Process) {
	*s = stream{on: true, process: process}
	for i := range wn.spans {
		if f := wn.spans[i].Frame; f > wn.settled {
			s.held = append(s.held, wn.spans[i])
			s.heldSeq = append(s.heldSeq, wn.seqs[i])
		}
	}
	for _, fl := range wn.flows {
		if hasSeq(s.heldSeq, fl[0]) || hasSeq(s.heldSeq, fl[1]) {
			s.flows = append(s.flows, fl)
		}
	}
	for _, f := range wn.frames {
		if f.ID > wn.settled {
			s.frames = append(s.frames, f)
		}
	}
	// Spans the window copied too late while these frames were open may
	// be theirs: the first batch counts them.
	for _, m := range wn.misses {
		if m.frame > wn.settled {
			s.missed += m.n
		}
	}
	s.drops = wn.upstream
}

// stop lets the stream's memory go.
func (s *stream) stop() {
	*s = stream{}
}

// add takes what one Peek copied.
func (s *stream) add(p *record.Peeked) {
	s.held = append(s.held, p.Spans...)
	s.heldSeq = append(s.heldSeq, p.Seqs...)
	s.flows = append(s.flows, p.Flows...)
	s.frames = append(s.frames, p.Frames...)
	s.missed += p.Missed
}

// full reports whether the stream holds more than it may.
func (s *stream) full() bool {
	return len(s.held) > maxHeld || len(s.frames) > maxHeld || len(s.flows) > maxHeld
}

// emit hands on the spans and frames of the frames settled (every one,
// with all), in batches of whole frames; wn gives the names and tracks.
// It returns no batch when nothing changed since the last.
func (s *stream) emit(wn *window, settled uint64, drops timeline.Drops, all bool) []*batch {
	ready := s.ready[:0]
	for i := range s.held {
		f := s.held[i].Frame
		if all || (f != 0 && f <= settled) || (f == 0 && s.heldSeq[i] <= s.noFrame) {
			ready = append(ready, i)
		}
	}
	nf := 0
	for nf < len(s.frames) && (all || s.frames[nf].ID <= settled) {
		nf++
	}
	if len(ready) == 0 && nf == 0 && s.missed == 0 && drops == s.drops {
		s.ready = ready
		s.noFrame = s.lastSeq()
		return nil
	}
	// The ready spans in sequence order, then grouped by frame (a span of
	// no frame first), batches cut between frames.
	readySeq := s.readySeq[:0]
	order := s.order[:0] // indexes into ready, by frame
	for j, i := range ready {
		readySeq = append(readySeq, s.heldSeq[i])
		order = append(order, j)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.held[ready[a]].Frame, s.held[ready[b]].Frame) })
	out := s.out[:0]
	add := func() *batch {
		s.last++
		b := newBatch()
		b.no = s.last
		b.t.Process = s.process
		b.t.Names, b.t.Tracks, b.t.Drops = wn.names, wn.tracks, drops
		out = append(out, b)
		return b
	}
	place := slices.Grow(s.place[:0], len(ready))[:len(ready)]
	cur := add()
	var last uint64
	for _, j := range order {
		sp := &s.held[ready[j]]
		if len(cur.t.Spans) >= batchSpans && sp.Frame != last {
			cur = add()
		}
		last = sp.Frame
		place[j] = spot{len(out) - 1, len(cur.t.Spans)}
		cur.t.Spans = append(cur.t.Spans, *sp)
	}
	// Frames go with the batch of their spans, or the last before them.
	bi := 0
	for _, f := range s.frames[:nf] {
		for bi+1 < len(out) && len(out[bi+1].t.Spans) > 0 && out[bi+1].t.Spans[0].Frame <= f.ID {
			bi++
		}
		out[bi].t.Frames = append(out[bi].t.Frames, f)
	}
	out[0].missed = s.missed
	// Flows: into the batch of both their spans; counted in split once
	// one of their spans is handed on without the other; kept while
	// neither is.
	kept := s.flows[:0]
	for _, fl := range s.flows {
		a, ra, ha := s.where(readySeq, place, fl[0])
		b, rb, hb := s.where(readySeq, place, fl[1])
		switch {
		case ra && rb && a.batch == b.batch:
			t := &out[a.batch].t
			t.Flows = append(t.Flows, timeline.Flow{From: a.index, To: b.index})
		case ra && rb:
			out[max(a.batch, b.batch)].split++
		case ra:
			out[a.batch].split++
		case rb:
			out[b.batch].split++
		case ha || hb:
			kept = append(kept, fl)
		default:
			out[0].split++ // both spans gone before the poller copied them
		}
	}
	s.flows = kept
	// What is left held, in sequence order.
	k, r := 0, 0
	for i := range s.held {
		if r < len(ready) && ready[r] == i {
			r++
			continue
		}
		s.held[k], s.heldSeq[k] = s.held[i], s.heldSeq[i]
		k++
	}
	s.held, s.heldSeq = s.held[:k], s.heldSeq[:k]
	s.frames = s.frames[:copy(s.frames, s.frames[nf:])]
	s.missed, s.drops = 0, drops
	s.noFrame = s.lastSeq()
	s.ready, s.readySeq, s.order, s.place, s.out = ready, readySeq, order, place, out
	return out
}

// spot is where emit put a span: its batch among those it returns, and
// its index in the batch's spans.
type spot struct{ batch, index int }

// where says where the span of sequence number seq is: handed on in this
// emit (ready, at that spot), still held, or neither.
func (s *stream) where(readySeq []uint64, place []spot, seq uint64) (at spot, ready, held bool) {
	if j, ok := slices.BinarySearch(readySeq, seq); ok {
		return place[j], true, false
	}
	_, held = slices.BinarySearch(s.heldSeq, seq)
	return spot{}, false, held
}

func (s *stream) lastSeq() uint64 {
	if n := len(s.heldSeq); n > 0 {
		return s.heldSeq[n-1]
	}
	return s.noFrame
}
