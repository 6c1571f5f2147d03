// Command readme-loop is the render loop of Framescope's README, as an
// application outside the module writes it: the README's code block in
// profile, unchanged but for its frame count, the two Vulkan calls its
// comments stand for, check, and Existing.CalibratedTimestamps, which says
// whether the device enabled the extension (the README's says it did).
// vulkan.go makes the instance and device
// with vulkan-go, as the application would anyway, with the Khronos
// validation layer when -validation or FRAMESCOPE_VALIDATION=1 says so.
//
//	go run . -frames 10 -out loop.perfetto-trace -validation
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
	vk "github.com/vulkan-go/vulkan"
)

func main() {
	frames := flag.Int("frames", 1000, "frames to render")
	out := flag.String("out", "readme-loop.perfetto-trace", "the Perfetto trace to write")
	validation := flag.Bool("validation", os.Getenv("FRAMESCOPE_VALIDATION") == "1",
		"Khronos validation layer (default: FRAMESCOPE_VALIDATION=1)")
	flag.Parse()
	a, err := newApp(*validation, 3)
	check(err)
	f, err := os.Create(*out)
	check(err)
	profile(a, *frames, f)
	check(f.Close())
	check(a.close()) // an error if the validation layer reported anything
	fmt.Printf("readme-loop: frames=%d validation=%v problems=%d\n", *frames, *validation, a.problems())
}

// check stands for the application's own error handling.
func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme-loop:", err)
		os.Exit(1)
	}
}

// profile is the README's loop on a's device, writing the trace to f.
func profile(a *app, frames int, f io.Writer) {
	instance, physical, device, family, cmds := a.inst, a.pd, a.dev, a.family, a.cmds

	// check(err) stands for the application's own error handling.
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: instance, Physical: physical, Device: device,
		Queues:         []profiler.QueueID{{Family: family, Index: 0}}, // the queues it created
		HostQueryReset: true,                                           // what it enabled
		// What it enabled: the README's device enabled it.
		CalibratedTimestamps: a.calibrated,
		APIVersion:           vk.MakeVersion(1, 2, 0), // the instance's apiVersion
	})
	check(err)
	queue, err := dev.Queue(family, 0)
	check(err)
	p := profiler.New(profiler.Options{})
	draw := p.Name("draw") // names are registered once
	submit := p.Name("submit")
	loop := p.CPUTrack("render loop")
	gpu, err := p.GPU(dev, queue, profiler.GPUOptions{FramesInFlight: len(cmds)})
	check(err)

	for frame := 0; frame < frames; frame++ {
		a.begin(frame)               // waits for the frame's fence, vkBeginCommandBuffer
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
		a.submit(frame)    // vkEndCommandBuffer, vkQueueSubmit with the frame's fence
		s.End()
	}
	vk.DeviceWaitIdle(device)
	check(p.Close()) // ends the last frame, collects the frames in flight; before vkDestroyDevice
	check(gpu.Err()) // a lasting fault (no calibration, a failed readback), or nil
	check(perfetto.Write(f, p.Dump()))
	dev.Close() // before a.close destroys the device
}
