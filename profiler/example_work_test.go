package profiler_test

import (
	"fmt"
	"log"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vk "github.com/vulkan-go/vulkan"
)

// Every zone counts the work its queue did besides its time: here the
// fragments shaded and the compute invocations run.
func ExampleGPUOptions_pipelineStatistics() {
	var (
		dev   *profiler.Device // WrapDevice: Existing.PipelineStatisticsQuery set
		queue profiler.Queue   // a graphics and compute queue
	)
	p := profiler.New(profiler.Options{})
	defer p.Close()
	gpu, err := p.GPU(dev, queue, profiler.GPUOptions{
		PipelineStatistics: timeline.FragmentShaderInvocations | timeline.ComputeShaderInvocations,
	})
	if err != nil {
		log.Fatal(err) // the feature not enabled, or a queue that cannot count them
	}
	var zones []profiler.ZoneResult
	zones = gpu.Collect(zones[:0])
	for _, z := range zones {
		if n, ok := z.Work.Of(timeline.FragmentShaderInvocations); ok {
			fmt.Println(z.Name, n)
		} else if z.Work != nil {
			fmt.Println("no counts:", z.Work.Missing) // and why
		}
	}
}

// A zone inside a render pass says so, where a zone outside it counts:
// Vulkan ends no query inside a render pass that began outside it.
func ExampleGPU_ZoneInRenderPass() {
	var (
		gpu          *profiler.GPU // with GPUOptions.PipelineStatistics
		cmd          vk.CommandBuffer
		shadow, draw profiler.Name
	)
	pass := gpu.Zone(cmd, shadow) // its work: everything the render pass does
	// vkCmdBeginRenderPass
	for range 4 {
		z := gpu.ZoneInRenderPass(cmd, draw) // no counts of its own here: timeline.WorkRenderPass
		// vkCmdDraw...
		z.End()
	}
	// vkCmdEndRenderPass
	pass.End()
}
