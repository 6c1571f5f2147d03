package record

import "github.com/framescope/framescope/timeline"

// PeekCursor is where a reader of [Recorder.Peek] stands: what it has
// copied so far. The zero PeekCursor stands before everything.
type PeekCursor struct {
	span   uint64 // sequence number of the last span copied
	frame  uint64 // ID of the last frame copied
	names  int    // names copied
	tracks int    // tracks copied
}

// Peeked is what one [Recorder.Peek] copied: the recorder's new data since
// a cursor, in the order it was stored.
type Peeked struct {
	Names  []string         // names registered since the cursor; NameIDs continue the table
	Tracks []timeline.Track // tracks defined since the cursor
	Spans  []timeline.Span  // spans stored since the cursor, oldest first
	// Seqs holds each span's sequence number, which Flows refer to: the
	// recorder numbers spans 1, 2, 3... as it stores them.
	Seqs []uint64
	// Flows links spans by sequence number, From to To; a flow is stored
	// when its later span is, so it comes with that span.
	Flows [][2]uint64
	// Frames holds the frames that ended since the cursor.
	Frames []timeline.Frame
	// Missed counts the spans stored since the cursor that had left
	// memory (to a sink, out of the window, over MaxSpans) before this
	// Peek could copy them.
	Missed uint64
	// Settled is the newest frame whose GPU results are all in: its GPU
	// time is final. Open is the frame in progress, 0 between frames.
	Settled, Open uint64
	// Drops is the recorder's running total, as [Recorder.Stats] has it,
	// and Ledger its books, which balance against Drops.
	Drops  timeline.Drops
	Ledger timeline.Ledger
	// Upstream is Drops without what left the recorder's memory before a
	// Dump or sink had it (Evicted, Frames, Samples, Sink, and the flows
	// evicted or split between sink batches): what a reader that copies
	// everything before it leaves, as Peek's caller does or counts in
	// Missed, still lacks.
	Upstream timeline.Drops
	// Oldest is the start of the oldest span or frame the recorder holds
	// (0 when it holds none): how far back a reader that comes later can
	// still copy, which a flight recorder's window keeps short.
	Oldest int64
	// More says Peek stopped at its limit: there is more to copy now.
	More bool
}

// Peek appends to p what the recorder stored since c, at most limit spans
// (at least 1), and returns the cursor to pass next time. It is for live
// views of a running application: it copies and marks nothing, so what
// it copied still counts as undelivered (in Drops.Evicted) if it leaves
// memory before a Dump or a sink has it, and it holds the recorder's lock
// only while it copies at most limit spans and the frames and flows that
// came with them. CPU spans reach the store at EndFrame, Flush and Dump.
func (r *Recorder) Peek(c PeekCursor, limit int, p *Peeked) PeekCursor {
	limit = min(MaxPeek, max(limit, 1))
	r.lock()
	defer r.mu.Unlock()
	if c.names < len(r.names) {
		p.Names = append(p.Names, r.names[c.names:]...)
		c.names = len(r.names)
	}
	if c.tracks < len(r.tracks) {
		p.Tracks = append(p.Tracks, r.tracks[c.tracks:]...)
		c.tracks = len(r.tracks)
	}
	first := c.span
	i := r.spans.search(func(it *spanItem) bool { return it.seq > first })
	n := 0
	for ; i < r.spans.len() && n < limit; i, n = i+1, n+1 {
		it := r.spans.at(i)
		p.Missed += it.seq - c.span - 1 // the gap: spans that left memory
		p.Spans = append(p.Spans, it.Span)
		p.Seqs = append(p.Seqs, it.seq)
		c.span = it.seq
	}
	p.More = i < r.spans.len()
	if !p.More && r.seq > c.span {
		p.Missed += r.seq - c.span // the newest left memory too
		c.span = r.seq
	}
	// A flow is stored with its later span, so flows are in the order of
	// their later end.
	later := func(f *flowItem) uint64 { return max(f.from, f.to) }
	for j := r.flows.search(func(f *flowItem) bool { return later(f) > first }); j < r.flows.len(); j++ {
		f := r.flows.at(j)
		if later(f) > c.span {
			break
		}
		p.Flows = append(p.Flows, [2]uint64{f.from, f.to})
	}
	for j := r.frames.search(func(f *timeline.Frame) bool { return f.ID > c.frame }); j < r.frames.len(); j++ {
		f := r.frames.at(j)
		p.Frames = append(p.Frames, *f)
		c.frame = f.ID
	}
	p.Settled, p.Open = r.gpuSettled, r.open.ID
	p.Drops = r.totalDrops()
	p.Ledger = r.ledger(p.Drops)
	p.Upstream = r.upstreamDrops()
	p.Oldest = 0
	if r.spans.len() > 0 {
		p.Oldest = r.spans.at(0).Start
	}
	if r.frames.len() > 0 && (p.Oldest == 0 || r.frames.at(0).Start < p.Oldest) {
		p.Oldest = r.frames.at(0).Start
	}
	return c
}

// MaxPeek caps the spans one [Recorder.Peek] copies, so that no reader
// holds the recorder's lock for long.
const MaxPeek = 1 << 14
