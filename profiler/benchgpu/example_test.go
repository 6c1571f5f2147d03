package benchgpu_test

import (
	"testing"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/profiler/benchgpu"
)

var (
	gpu         *profiler.GPU
	shadow      profiler.Name // p.Name("shadow"), registered once
	renderFrame func()        // records, submits and presents one frame
	waitIdle    func()        // vkDeviceWaitIdle
)

// A benchmark of a render pass's GPU time: benchstat compares gpu-ns/op
// across runs as it compares ns/op.
func ExampleMeter() {
	testing.Benchmark(func(b *testing.B) {
		m := benchgpu.New(gpu, shadow)
		for b.Loop() {
			renderFrame() // records zones named shadow
			m.Collect()   // never waits
		}
		waitIdle()
		m.Report(b) // gpu-ns/op, gpu-zones/op
	})
}
