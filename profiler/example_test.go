package profiler_test

import (
	"fmt"
	"time"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

func ExampleProfiler_EndFrame() {
	var slow int
	p := profiler.New(profiler.Options{
		WindowFrames: 120, // a flight recorder of the last 120 frames
		CPUBudget:    50 * time.Millisecond,
		GPUBudget:    16 * time.Millisecond,
		OnBudget: func(o profiler.OverBudget) {
			slow++ // an exporter would write o.Trace, the last 120 frames, to a file
		},
	})
	defer p.Close()
	render := p.CPUTrack("render loop")
	update := p.Name("update")

	p.BeginFrame()
	s := render.Span(update)
	time.Sleep(time.Millisecond) // the frame's work
	s.End()
	took := p.EndFrame() // the frame's CPU time in ns
	fmt.Println(took >= int64(time.Millisecond))
	// Output: true
}

// A counter is a value over time drawn beside the frames: draw calls,
// bytes uploaded.
func ExampleProfiler_Counter() {
	p := profiler.New(profiler.Options{})
	draws := p.Counter("draws", timeline.UnitCount)
	for n := range 3 {
		p.BeginFrame()
		draws.Set(float64(100 + n))
	}
	p.Close()
	t := p.Dump()
	for _, s := range t.Samples {
		if tr := t.Track(s.Track); tr.Name == "draws" { // beside the profiler's own counters
			fmt.Println(tr.Name, s.Value)
		}
	}
	// Output:
	// draws 100
	// draws 101
	// draws 102
}
