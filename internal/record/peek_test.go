package record

import (
	"testing"

	"github.com/framescope/framescope/timeline"
)

// peekFrames records n frames of one CPU span and one GPU zone each, the
// zone linked to the span by a submission key.
func peekFrames(r *Recorder, q timeline.TrackID, zone timeline.NameID, cpu *CPUTrack, work timeline.NameID, from, n int) {
	for f := from; f < from+n; f++ {
		id := r.BeginFrame()
		s := cpu.Span(work)
		s.Submitted(uint64(f + 1))
		s.End()
		now := timeline.Now()
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: now, End: now + 100, Frame: id, Key: uint64(f + 1)}})
		r.EndFrame()
	}
}

// Peek hands every span once, in the order stored, in pieces of at most
// its limit, with the frames, names, tracks and flows that came with them;
// it counts what left memory before it could copy it; and it changes none
// of the recorder's accounting.
func TestPeek(t *testing.T) {
	for _, limit := range []int{1, 3, 1000} {
		r, q, zone := gpuSetup(Options{MaxSpans: 20, SettleFrames: 1})
		twin, tq, tzone := gpuSetup(Options{MaxSpans: 20, SettleFrames: 1}) // never peeked
		cpu, tcpu := r.CPUTrack("main"), twin.CPUTrack("main")
		work, twork := r.Name("work"), twin.Name("work")

		var c PeekCursor
		var all Peeked
		peekAll := func() {
			for {
				var p Peeked
				c = r.Peek(c, limit, &p)
				if len(p.Spans) > limit {
					t.Fatalf("limit %d: %d spans in one Peek", limit, len(p.Spans))
				}
				all.Names = append(all.Names, p.Names...)
				all.Tracks = append(all.Tracks, p.Tracks...)
				all.Spans = append(all.Spans, p.Spans...)
				all.Seqs = append(all.Seqs, p.Seqs...)
				all.Flows = append(all.Flows, p.Flows...)
				all.Frames = append(all.Frames, p.Frames...)
				all.Missed += p.Missed
				if !p.More {
					return
				}
			}
		}
		peekFrames(r, q, zone, cpu, work, 0, 5)
		peekFrames(twin, tq, tzone, tcpu, twork, 0, 5)
		peekAll()
		peekFrames(r, q, zone, cpu, work, 5, 5)
		peekFrames(twin, tq, tzone, tcpu, twork, 5, 5)
		peekAll()
		if len(all.Spans) != 30 || all.Missed != 0 { // a frame span, a CPU span and a zone a frame
			t.Fatalf("limit %d: %d spans, %d missed; want 30, 0", limit, len(all.Spans), all.Missed)
		}
		for i := 1; i < len(all.Seqs); i++ {
			if all.Seqs[i] <= all.Seqs[i-1] {
				t.Fatalf("seqs out of order: %v", all.Seqs)
			}
		}
		if len(all.Frames) != 10 || all.Frames[0].ID != 1 || all.Frames[9].ID != 10 {
			t.Fatalf("frames %+v", all.Frames)
		}
		if len(all.Flows) != 10 {
			t.Errorf("%d flows, want 10", len(all.Flows))
		}
		if len(all.Names) != len(r.names) || len(all.Tracks) != len(r.tracks) {
			t.Errorf("%d names, %d tracks; the recorder has %d, %d", len(all.Names), len(all.Tracks), len(r.names), len(r.tracks))
		}
		// 30 more frames without a peek: 90 spans, of which MaxSpans stay.
		peekFrames(r, q, zone, cpu, work, 10, 30)
		peekFrames(twin, tq, tzone, tcpu, twork, 10, 30)
		before := len(all.Spans)
		peekAll()
		if got := uint64(len(all.Spans)-before) + all.Missed; got != 90 {
			t.Errorf("limit %d: %d copied + %d missed, want 90", limit, len(all.Spans)-before, all.Missed)
		}
		if all.Missed == 0 {
			t.Errorf("limit %d: nothing missed past MaxSpans", limit)
		}
		// Peeking delivered nothing: the recorder counts exactly what its
		// twin, never peeked, counts.
		if a, b := r.Stats(), twin.Stats(); a.Drops != b.Drops || a.Evicted != b.Evicted {
			t.Errorf("limit %d: peeked recorder %+v, twin %+v", limit, a, b)
		}
	}
}

// TestPeekOldest: Peek says how far back the recorder still holds: 0
// when empty, the first frame's start while it keeps everything, and a
// start that moves with a flight recorder's window.
func TestPeekOldest(t *testing.T) {
	var p Peeked
	r, q, zone := gpuSetup(Options{WindowFrames: 10})
	r.Peek(PeekCursor{}, 1, &p)
	if p.Oldest != 0 {
		t.Errorf("empty recorder: Oldest %d", p.Oldest)
	}
	cpu, work := r.CPUTrack("main"), r.Name("work")
	t0 := timeline.Now()
	peekFrames(r, q, zone, cpu, work, 0, 5)
	r.Peek(PeekCursor{}, 1, &p)
	if p.Oldest < t0 || p.Oldest > timeline.Now() {
		t.Errorf("5 frames: Oldest %d, not between the first frame's start %d and now", p.Oldest, t0)
	}
	first := p.Oldest
	peekFrames(r, q, zone, cpu, work, 5, 100)
	r.Flush()
	t1 := timeline.Now()
	peekFrames(r, q, zone, cpu, work, 105, 20)
	r.Flush()
	r.Peek(PeekCursor{}, 1, &p)
	if p.Oldest <= first || p.Oldest < t1 {
		t.Errorf("after 125 frames in a 10-frame window: Oldest %d, the first frame's %d, the last 20 frames began at %d", p.Oldest, first, t1)
	}
}
