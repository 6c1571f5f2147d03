package profiler_test

import (
	"fmt"
	"time"

	"github.com/framescope/framescope/profiler"
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
