package live

import (
	"testing"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// feed is a recorder's output as Peek copies it, made by hand: CPU spans
// stored at their frame's end, GPU zones lag frames later, each zone with
// a flow from its frame's CPU span.
type feed struct {
	seq     uint64
	cpuSeq  map[uint64]uint64 // frame -> its CPU span's sequence number
	emitted []*batch
	st      stream
	wn      window
}

func newFeed() *feed {
	f := &feed{cpuSeq: map[uint64]uint64{}}
	f.wn.names = []string{"", "cpu", "gpu"}
	f.wn.tracks = []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}, {ID: 2, Kind: timeline.TrackGPUQueue, Name: "q"}}
	f.st.start(&f.wn, timeline.Process{})
	return f
}

// frame adds one Peek: frame id ended with n CPU spans, the zones of frame
// id-lag with their flows, settled up to id-lag; then an emit.
func (f *feed) frame(id uint64, n, lag int) {
	var p record.Peeked
	for i := 0; i < n; i++ {
		f.seq++
		p.Spans = append(p.Spans, timeline.Span{Track: 1, Name: 1, Start: int64(id*1000) + int64(i), End: int64(id*1000) + int64(i) + 1, Frame: id})
		p.Seqs = append(p.Seqs, f.seq)
		if i == 0 {
			f.cpuSeq[id] = f.seq
		}
	}
	p.Frames = []timeline.Frame{{ID: id, Start: int64(id * 1000), End: int64(id*1000 + 999)}}
	if g := int64(id) - int64(lag); g >= 1 {
		f.seq++
		p.Spans = append(p.Spans, timeline.Span{Track: 2, Name: 2, Start: g*1000 + 500, End: g*1000 + 600, Frame: uint64(g)})
		p.Seqs = append(p.Seqs, f.seq)
		if from, ok := f.cpuSeq[uint64(g)]; ok {
			p.Flows = append(p.Flows, [2]uint64{from, f.seq})
		}
		p.Settled = uint64(g)
	}
	f.st.add(&p)
	f.emitted = append(f.emitted, f.st.emit(&f.wn, p.Settled, p.Drops, f.st.full())...)
}

// check: every span handed on once, batches of whole frames, flows within
// them; returns the spans, flows and splits.
func (f *feed) check(t *testing.T) (spans, flows, split int) {
	t.Helper()
	seen := map[[3]int64]bool{}
	for _, b := range f.emitted {
		frames := map[uint64]bool{}
		for _, fr := range b.t.Frames {
			frames[fr.ID] = true
		}
		for _, s := range b.t.Spans {
			k := [3]int64{int64(s.Track), int64(s.Frame), s.Start}
			if seen[k] {
				t.Errorf("span %v handed on twice", s)
			}
			seen[k] = true
			if s.Frame != 0 && !frames[s.Frame] && len(b.t.Frames) > 0 {
				t.Errorf("batch %d: a span of frame %d, frames %v", b.no, s.Frame, b.t.Frames)
			}
		}
		for _, fl := range b.t.Flows {
			if fl.From < 0 || fl.To >= len(b.t.Spans) || b.t.Spans[fl.From].Frame != b.t.Spans[fl.To].Frame {
				t.Errorf("batch %d: flow %v", b.no, fl)
			}
		}
		spans += len(b.t.Spans)
		flows += len(b.t.Flows)
		split += int(b.split)
	}
	return spans, flows, split
}

// TestStreamWholeFrames: a frame's CPU spans wait for its zones, which
// come frames later with their flows, and go in one batch with them.
func TestStreamWholeFrames(t *testing.T) {
	f := newFeed()
	for id := uint64(1); id <= 50; id++ {
		f.frame(id, 3, 3)
	}
	f.emitted = append(f.emitted, f.st.emit(&f.wn, 0, timeline.Drops{}, true)...)
	spans, flows, split := f.check(t)
	if spans != 50*3+47 || flows != 47 || split != 0 {
		t.Errorf("%d spans, %d flows, %d split; want %d, 47, 0", spans, flows, split, 50*3+47)
	}
	if len(f.st.held) != 0 || len(f.st.flows) != 0 || len(f.st.frames) != 0 {
		t.Errorf("left held: %d spans, %d flows, %d frames", len(f.st.held), len(f.st.flows), len(f.st.frames))
	}
}

// TestStreamCutsBetweenFrames: batches stop at a frame past batchSpans,
// never inside one, so a frame larger than batchSpans is one batch.
func TestStreamCutsBetweenFrames(t *testing.T) {
	f := newFeed()
	f.frame(1, 3000, 0)
	f.frame(2, 3000, 0)
	f.frame(3, 5000, 0)
	f.frame(4, 10, 0)
	f.emitted = append(f.emitted, f.st.emit(&f.wn, 4, timeline.Drops{}, false)...)
	_, flows, split := f.check(t)
	if flows != 4 || split != 0 {
		t.Errorf("%d flows, %d split; want 4, 0", flows, split)
	}
	for _, b := range f.emitted {
		if len(b.t.Spans) > batchSpans && len(b.t.Frames) != 1 {
			t.Errorf("batch %d: %d spans of %d frames", b.no, len(b.t.Spans), len(b.t.Frames))
		}
	}
}

// TestStreamSplitFlows: a flow whose spans cannot go together is counted
// once, in the batch of the span handed on: its other span came before
// the stream, or was never copied, or its frame settled long before.
func TestStreamSplitFlows(t *testing.T) {
	f := newFeed()
	p := record.Peeked{
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 10, End: 20, Frame: 1},
			{Track: 1, Name: 1, Start: 30, End: 40, Frame: 5}, // an open frame
		},
		Seqs: []uint64{100, 101},
		Flows: [][2]uint64{
			{7, 100},   // from a span before the stream
			{100, 101}, // frames 1 and 5: 1 goes first
			{8, 9},     // neither copied
		},
		Settled: 1,
		Missed:  2,
	}
	f.st.add(&p)
	bs := f.st.emit(&f.wn, 1, timeline.Drops{}, false)
	if len(bs) != 1 || len(bs[0].t.Spans) != 1 || bs[0].split != 3 || bs[0].missed != 2 {
		t.Fatalf("batches %+v", bs)
	}
	if len(f.st.flows) != 0 || len(f.st.held) != 1 {
		t.Errorf("held %d spans, %d flows; want 1, 0", len(f.st.held), len(f.st.flows))
	}
}

// TestStreamNoFrame: a span of no frame waits one batch, then goes.
func TestStreamNoFrame(t *testing.T) {
	f := newFeed()
	f.st.add(&record.Peeked{Spans: []timeline.Span{{Track: 1, Name: 1, Start: 1, End: 2}}, Seqs: []uint64{1}})
	if bs := f.st.emit(&f.wn, 0, timeline.Drops{}, false); len(bs) != 0 {
		t.Fatalf("a span of no frame went at once: %+v", bs)
	}
	if bs := f.st.emit(&f.wn, 0, timeline.Drops{}, false); len(bs) != 1 || len(bs[0].t.Spans) != 1 {
		t.Fatalf("a span of no frame did not go with the next batch: %+v", bs)
	}
}

// TestStreamBounded: past maxHeld spans held, the stream is full and hands
// everything on, counting the flows it cuts.
func TestStreamBounded(t *testing.T) {
	f := newFeed()
	for !f.st.full() { // frame 1 never settles
		var p record.Peeked
		for range 1000 {
			f.seq++
			p.Spans = append(p.Spans, timeline.Span{Track: 1, Name: 1, Start: int64(f.seq), End: int64(f.seq) + 1, Frame: 1})
			p.Seqs = append(p.Seqs, f.seq)
		}
		f.st.add(&p)
		if f.st.full() {
			break
		}
		if bs := f.st.emit(&f.wn, 0, timeline.Drops{}, false); len(bs) > 0 {
			t.Fatalf("handed on %d batches before full", len(bs))
		}
		if f.seq > 2*maxHeld {
			t.Fatal("never full")
		}
	}
	bs := f.st.emit(&f.wn, 0, timeline.Drops{}, true)
	n := 0
	for _, b := range bs {
		n += len(b.t.Spans)
	}
	if n <= maxHeld || len(f.st.held) != 0 {
		t.Errorf("%d spans handed on, %d held", n, len(f.st.held))
	}
}
