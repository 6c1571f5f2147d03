package profiler_test

import (
	"testing"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// recreate closes the application's GPU context, once its frames are
// done, and makes a new one on the same queue: with device set, it closes
// the wrapped Device too and wraps the application's VkDevice again, as a
// renderer does when it re-creates its swapchain or its device.
func (a *app) recreate(device bool) {
	a.t.Helper()
	for i, f := range a.fences { // the application waits for its frames
		if a.inFlight[i] {
			a.q.Wait(f)
			a.inFlight[i] = false
		}
	}
	a.collect()
	a.g.Close()
	if device {
		a.dev.Close()
		a.dev = wrapWith(a.t, a.q, a.labels)
	}
	gq, err := a.dev.Queue(a.q.Q.Family, a.q.Q.Index)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.g, err = a.p.GPU(a.dev, gq, a.opts); err != nil {
		a.t.Fatal(err)
	}
}

// A GPU context closed and made again on the same queue, or on the same
// queue of a device wrapped again, continues the queue's track: every zone
// arrives with its arrow and its frame's GPU time, and the GPU budget
// fires for the frames after the re-creation as before it. (The old
// recorder took the first context's close for the queue's end: later
// frames settled before their zones came, their arrows were lost and their
// GPU time was never sampled.)
func TestAppContextRecreated(t *testing.T) {
	for _, device := range []bool{false, true} {
		name := "context"
		if device {
			name = "device"
		}
		t.Run(name, func(t *testing.T) {
			var over []uint64
			a := newApp(t, appConfig{
				gpu: profiler.GPUOptions{FramesInFlight: 3},
				recorder: record.Options{GPUBudget: 1, BudgetEvery: 1, OnBudget: func(o record.OverBudget) {
					if o.Budget == record.BudgetGPU {
						over = append(over, o.Frame)
					}
				}},
			})
			for round := range 3 {
				for range 8 {
					a.frame(a.work)
				}
				if round < 2 {
					a.recreate(device)
				}
			}
			tr := a.finish()
			a.expect(tr, 0, timeline.Drops{})
			// Frames settled together are passed to OnBudget once
			// (BudgetEvery): each is found over budget all the same.
			if st := profiler.RecorderOf(a.p).Stats(); st.OverBudget != uint64(a.frames) || len(over) == 0 || over[len(over)-1] <= 16 {
				t.Errorf("%d frames found over the GPU budget, want each of the %d; OnBudget had frames %v, want some after the last re-creation", st.OverBudget, a.frames, over)
			}
			gpu := 0
			for _, s := range tr.Samples {
				if tr.Track(s.Track).Name == "GPU time per frame" {
					gpu++
				}
			}
			if gpu != a.frames {
				t.Errorf("%d GPU time samples, want one for each of the %d frames", gpu, a.frames)
			}
		})
	}
}
