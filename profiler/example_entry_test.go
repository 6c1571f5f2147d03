package profiler_test

import (
	"fmt"
	"log"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
	vk "github.com/vulkan-go/vulkan"
)

// A device of the profiler's own, for tools and tests; an application
// that made its device itself passes it to WrapDevice instead.
func ExampleOpenDevice() {
	dev, err := profiler.OpenDevice(profiler.DeviceOptions{AppName: "tool"})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	for _, q := range dev.Queues() {
		fmt.Println(dev.Name(), q.Family, q.Index, q.Flags)
	}
}

// One GPU context per queue the application profiles: each has its own
// track in the trace.
func ExampleProfiler_GPU() {
	var dev *profiler.Device // from WrapDevice or OpenDevice
	p := profiler.New(profiler.Options{})
	defer p.Close()
	graphics, err := dev.Queue(0, 0)
	if err != nil {
		log.Fatal(err)
	}
	gpu, err := p.GPU(dev, graphics, profiler.GPUOptions{FramesInFlight: 3})
	if err != nil {
		log.Fatal(err) // no timestamps on that family, a queue the device lacks, bad options
	}
	fmt.Println(gpu.Track())
}

// A zone brackets the commands recorded between Zone and End with two
// timestamps; zones nest.
func ExampleGPU_Zone() {
	var (
		gpu *profiler.GPU
		cmd vk.CommandBuffer // recording
		p   *profiler.Profiler
	)
	shadow, draw := p.Name("shadow"), p.Name("draw") // once, at start-up
	func() {
		defer gpu.Zone(cmd, shadow).End()
		for range 4 {
			z := gpu.Zone(cmd, draw)
			// vkCmdDraw...
			z.End()
		}
	}()
}

// Collect never waits: it returns the zones whose frames the GPU has
// finished, the frames in flight later, with their host times.
func ExampleGPU_Collect() {
	var gpu *profiler.GPU
	var zones []profiler.ZoneResult // reused frame after frame: no allocation
	zones = gpu.Collect(zones[:0])
	if err := gpu.Err(); err != nil {
		log.Print(err) // e.g. ErrNoCalibration: the zones are counted, not lost silently
	}
	for _, z := range zones {
		fmt.Println(z.Name, z.Frame, time.Duration(z.Dur()))
	}
}

// CPU work goes on CPU tracks, one per thread of the application; the
// whole timeline is written with an exporter.
func ExampleProfiler_CPUTrack() {
	p := profiler.New(profiler.Options{})
	update := p.Name("update")
	main := p.CPUTrack("main thread")

	p.BeginFrame()
	s := main.Span(update)
	time.Sleep(time.Millisecond)
	s.End()
	p.EndFrame()

	t := p.Dump()
	for _, sp := range t.Spans {
		fmt.Println(t.Track(sp.Track).Name, t.Name(sp.Name))
	}
	if err := perfetto.Write(discard{}, t); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Frames frame
	// main thread update
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
