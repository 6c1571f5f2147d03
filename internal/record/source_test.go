package record

import "github.com/framescope/framescope/timeline"
import "testing"

// gpuSamples counts the "GPU time per frame" samples of r.
func gpuSamples(r *Recorder) int {
	tr := r.Dump()
	n := 0
	for _, s := range tr.Samples {
		if tr.Track(s.Track).Name == "GPU time per frame" {
			n++
		}
	}
	return n
}

// settledUpTo is r.gpuSettled once the inbox is applied.
func settledUpTo(r *Recorder) uint64 {
	r.lock()
	defer r.mu.Unlock()
	return r.gpuSettled
}

// settledBy is s.settled once the inbox is applied.
func settledBy(s *GPUSource) uint64 {
	s.r.lock()
	defer s.r.mu.Unlock()
	return s.settled
}

// A frame settles when every open source of every queue has settled it;
// a closed source holds nothing back, a source opened later holds back
// only the frame in progress and later ones, Settle never moves back and
// never settles a frame the source may still begin.
func TestGPUSources(t *testing.T) {
	r := NewRecorder(Options{SettleFrames: 1})
	draw := r.Name("draw")
	q1 := r.QueueTrack(timeline.Queue{Device: "d", Family: 0})
	q2 := r.QueueTrack(timeline.Queue{Device: "d", Family: 1})
	a, b := r.GPUSource(q1), r.GPUSource(q2)
	if r.GPUSource(999) != nil {
		t.Fatal("a source of an unknown track")
	}
	frame := func() uint64 {
		f := r.BeginFrame()
		t0 := timeline.Now()
		for _, q := range []timeline.TrackID{q1, q2} {
			if err := r.AddGPUSpans(q, []GPUSpan{{Name: draw, Start: t0, End: t0 + 1000, Frame: f}}); err != nil {
				t.Fatal(err)
			}
		}
		r.EndFrame()
		return f
	}
	for range 3 {
		frame()
	}
	if got := r.Stats().Drops; got != (timeline.Drops{}) {
		t.Fatalf("drops %+v", got)
	}
	a.Settle(2)
	frame() // 4
	if settledUpTo(r) != 0 {
		t.Fatalf("frames up to %d settled with one queue's source at 0", settledUpTo(r))
	}
	b.Settle(^uint64(0)) // everything so far: up to frame 4, not 5
	a.Settle(1)          // never moves back
	f5 := frame()
	if settledUpTo(r) != 2 {
		t.Errorf("settled up to %d, want 2 (a's word)", settledUpTo(r))
	}
	r.BeginFrame() // 6, open
	b.Settle(^uint64(0))
	if settledBy(b) != f5 {
		t.Errorf("b settled %d with frame 6 in progress, want %d", settledBy(b), f5)
	}
	r.EndFrame()
	a.Close() // a's queue now waits for no one
	frame()
	if settledUpTo(r) != f5 {
		t.Errorf("after a closed, settled up to %d, want %d (b's word)", settledUpTo(r), f5)
	}
	r.BeginFrame() // 8, in progress while a new source opens on q1
	c := r.GPUSource(q1)
	r.EndFrame()
	b.Settle(^uint64(0))
	frame() // 9
	if settledUpTo(r) != 7 {
		t.Errorf("with a source opened during frame 8, settled up to %d, want 7", settledUpTo(r))
	}
	c.Settle(^uint64(0))
	b.Close()
	frame() // 10
	if settledUpTo(r) != 9 {
		t.Errorf("settled up to %d, want 9", settledUpTo(r))
	}
	c.Close()
	c.Close()
	c.Settle(100) // a closed source says nothing
	frame()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := gpuSamples(r); n != 9 {
		t.Errorf("%d GPU time samples, want one for each of the 9 frames with zones (6 and 8 have none)", n)
	}
	if d := r.Stats().Drops; d.Untimed != 0 {
		t.Errorf("drops %+v: no zone came after its frame settled", d)
	}
	var nilSource *GPUSource
	nilSource.Settle(1)
	nilSource.Close()
}
