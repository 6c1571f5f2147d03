package profiler_test

import (
	"errors"
	"log"
	"os"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
	vk "github.com/vulkan-go/vulkan"
)

// The application's own Vulkan objects, made as it always makes them.
var (
	instance vk.Instance
	physical vk.PhysicalDevice
	device   vk.Device
	family   uint32 // the family of the one queue it created
	cmds     [3]vk.CommandBuffer
)

// A render loop profiled on the application's own device: the README's
// snippet, compiled.
func ExampleWrapDevice() {
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: instance, Physical: physical, Device: device,
		Queues:               []profiler.QueueID{{Family: family, Index: 0}}, // the queues it created
		HostQueryReset:       true,                                           // what it enabled
		CalibratedTimestamps: true,                                           // VK_EXT_calibrated_timestamps: else see GPUOptions.FallbackQueue
		APIVersion:           vk.MakeVersion(1, 2, 0),                        // the instance's apiVersion
	})
	if err != nil {
		log.Fatal(err)
	}
	queue, err := dev.Queue(family, 0)
	if err != nil {
		log.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	draw := p.Name("draw") // names are registered once
	submit := p.Name("submit")
	loop := p.CPUTrack("render loop")
	gpu, err := p.GPU(dev, queue, profiler.GPUOptions{FramesInFlight: len(cmds)})
	if err != nil {
		log.Fatal(err)
	}
	for frame := 0; frame < 1000; frame++ {
		cmd := cmds[frame%len(cmds)] // its fence waited for, vkBeginCommandBuffer called
		p.BeginFrame()               // ends the last frame, collects what the GPU finished; never waits
		gpu.BeginFrame(cmd)          // first command buffer of the frame
		func() {
			defer gpu.Zone(cmd, draw).End() // two vkCmdWriteTimestamp, nothing else
			// vkCmdDraw...
		}()
		gpu.EndFrame(cmd) // last command buffer: records the readback copy
		s := loop.Span(submit)
		gpu.Submit(s, cmd) // an arrow from this span to the zones
		// vkEndCommandBuffer, vkQueueSubmit with the frame's fence
		s.End()
	}
	vk.DeviceWaitIdle(device)
	if err := p.Close(); err != nil { // collects the frames still in flight; before vkDestroyDevice
		log.Fatal(err)
	}
	if err := gpu.Err(); err != nil { // a lasting fault: no calibration, a failed readback
		log.Fatal(err)
	}
	f, err := os.Create("frames.pftrace")
	if err != nil {
		log.Fatal(err)
	}
	if err := errors.Join(perfetto.Write(f, p.Dump()), f.Close()); err != nil {
		log.Fatal(err)
	}
}
