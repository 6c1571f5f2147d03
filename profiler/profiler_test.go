package profiler

import (
	"testing"
	"time"
)

// TestEndFrameBudget checks that EndFrame returns the frame's CPU time and
// that the budgets of Options reach the recorder: with a window of one
// frame, every frame over budget is passed.
func TestEndFrameBudget(t *testing.T) {
	var got []OverBudget
	p := New(Options{
		WindowFrames: 1,
		CPUBudget:    1, // every frame sleeps at least 1µs
		OnBudget:     func(o OverBudget) { got = append(got, o) },
	})
	work := p.Name("work")
	cpu := p.CPUTrack("render")
	var took []int64
	for range 3 {
		p.BeginFrame()
		s := cpu.Span(work)
		time.Sleep(time.Microsecond)
		s.End()
		took = append(took, p.EndFrame())
	}
	if d := p.EndFrame(); d != 0 {
		t.Errorf("EndFrame with no frame open = %d, want 0", d)
	}
	if len(got) != 3 {
		t.Fatalf("%d calls of OnBudget, want 3: %+v", len(got), got)
	}
	for i, o := range got {
		frames := o.Trace.Frames
		last := frames[len(frames)-1]
		if o.Frame != uint64(i+1) || o.GPU || last.ID != o.Frame {
			t.Errorf("call %d: %+v with frames %+v", i, o, frames)
		}
		if int64(o.Took) != took[i] || took[i] != last.End-last.Start || took[i] < int64(time.Microsecond) {
			t.Errorf("frame %d: EndFrame returned %d ns, OnBudget got %v, the frame is %+v", o.Frame, took[i], o.Took, last)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
