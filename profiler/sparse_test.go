package profiler_test

import (
	"testing"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// A context that records in one frame of 300 (an async compute queue used
// now and then) gets its zones back FramesInFlight of the application's
// frames later, not of its own: every zone arrives with its arrow and its
// frame's GPU time, nothing is untimed. (The pool once counted its own
// frames: a frame's results waited for the context's next frames, the
// recorder gave up waiting after MaxSettleFrames, and arrows and GPU time
// were lost, counted.)
func TestAppSparseQueue(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	var sparse []uint64
	back := map[uint64]uint64{} // frame recorded -> frame whose Collect returned it
	for f := range 700 {
		if f%300 == 0 {
			a.frame(a.work)
			sparse = append(sparse, uint64(f+1)) // the recorder's frames are 1, 2, 3...
		} else {
			a.p.BeginFrame()
			a.p.EndFrame()
		}
		zs, err := a.g.Collect(nil), a.g.Err()
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range zs {
			if _, ok := back[z.Frame]; !ok {
				back[z.Frame] = uint64(f + 1)
			}
		}
		if f%300 == 0 { // the application waits for its work, as it would
			for i, fc := range a.fences {
				if a.inFlight[i] {
					a.q.Wait(fc)
					a.inFlight[i] = false
				}
			}
		}
	}
	for _, f := range sparse {
		if got, ok := back[f]; !ok || got > f+2 {
			t.Errorf("zones of frame %d came back at frame %d (%v), want by %d", f, got, ok, f+2)
		}
	}
	tr := a.finish()
	c := countTrace(tr)
	if c.GPU != a.zones || c.Flows != a.zones || c.Frames != 700 || c.Drops != (timeline.Drops{}) {
		t.Errorf("trace: %d GPU slices, %d flows, %d frames, drops %+v; want %d zones with their arrows, 700 frames, nothing dropped",
			c.GPU, c.Flows, c.Frames, c.Drops, a.zones)
	}
	gpu := 0
	for _, s := range tr.Samples {
		if tr.Track(s.Track).Name == "GPU time per frame" {
			gpu++
		}
	}
	if gpu != len(sparse) {
		t.Errorf("%d GPU time samples, want one for each of the %d frames with GPU work", gpu, len(sparse))
	}
	checkBooks(t, tr, a.g.Stats())
}
