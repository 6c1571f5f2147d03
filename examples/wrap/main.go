// Command wrap profiles an application that made its own Vulkan device.
// vulkan.go creates the instance, the device and what a frame needs, with
// vulkan-go alone, as the application would anyway (its notes say why some
// vulkan-go calls run under noGC). This file hands the device to
// profiler.WrapDevice and renders frames, the profiler's calls beside the
// Vulkan calls they belong with: seven nested GPU zones a frame, CPU spans
// on two goroutines, the submission marked for the trace's arrows. Then it
// writes a Perfetto trace, a Chrome JSON trace and a pprof profile, and a
// last line that says what it recorded.
//
//	go run ./examples/wrap -frames 120 -frames-in-flight 3 -validation
//
// vulkan-go opens libvulkan.so (Debian: libvulkan-dev).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vk "github.com/vulkan-go/vulkan"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wrap:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("wrap", flag.ContinueOnError)
	frames := fs.Int("frames", 60, "frames to render")
	fif := fs.Int("frames-in-flight", 3, "frames the CPU may be ahead of the GPU, 1..16")
	out := fs.String("out", "out", "directory for wrap.perfetto-trace, wrap.json, wrap.pb.gz")
	validation := fs.Bool("validation", false, "Khronos validation layer, synchronization checks included")
	var bc boundConfig
	fs.StringVar(&bc.mode, "bound", "", "frames whose limit is known instead: cpu (each spins the CPU), gpu (each fills a buffer, waited for) or mixed (drawn by -seed); prints the schedule and each frame's GPU ns by its own timestamps")
	fs.Uint64Var(&bc.seed, "seed", 1, "-bound mixed: the seed of the schedule")
	fs.DurationVar(&bc.spin, "spin", 20*time.Millisecond, "-bound: the CPU spin of a CPU-bound frame")
	fs.IntVar(&bc.fillMiB, "fill-mib", 128, "-bound: MiB a GPU-bound frame fills")
	fs.IntVar(&bc.fills, "fills", 1, "-bound: fills of a GPU-bound frame")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fif < 1 || *fif > 16 || *frames < 1 {
		return fmt.Errorf("-frames-in-flight %d (1..16) or -frames %d (1..)", *fif, *frames)
	}
	if bc.frames = *frames; bc.mode != "" {
		if err := bc.check(); err != nil {
			return err
		}
	}
	a, err := newApp(*validation, *fif)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.close()) }()

	// The profiler, on the device as the application made it: Existing
	// says what the application enabled and which queues it created.
	dev, err := profiler.WrapDevice(profiler.Existing{Instance: a.inst, Physical: a.pd, Device: a.dev,
		Queues: []profiler.QueueID{{Family: a.family, Index: 0}}, HostQueryReset: true,
		CalibratedTimestamps: a.calibrated, DebugUtils: a.validation, APIVersion: apiVersion})
	if err != nil {
		return err
	}
	defer dev.Close() // before a.close destroys the device; after p.Close
	queue, err := dev.Queue(a.family, 0)
	if err != nil {
		return err
	}
	p := profiler.New(profiler.Options{Process: timeline.Process{PID: int32(os.Getpid()), Name: "wrap"}})
	defer p.Close()
	gpu, err := p.GPU(dev, queue, profiler.GPUOptions{FramesInFlight: *fif, DebugLabels: a.validation})
	if err != nil {
		return err
	}
	if bc.mode != "" {
		if err := boundFrames(a, p, gpu, bc, stdout); err != nil {
			return err
		}
		if err := p.Close(); err != nil {
			return err
		}
		return writeTraces(*out, p.Dump())
	}
	// Names are registered once; the hot path uses the handles.
	nm := p.Name
	zFrame, zShadows, zClear, zDraw, zLight, zDispatch, zPost := nm("frame"), nm("shadows"), nm("clear"), nm("draw"), nm("lighting"), nm("dispatch"), nm("post")
	sRender, sWait, sRecord, sSubmit, sIdle, sSim, sPhysics, sAnimate := nm("render"), nm("wait fence"), nm("record"), nm("submit"),
		nm("wait idle"), nm("simulate"), nm("physics"), nm("animate")

	// A simulation worker on a goroutine and CPU track of its own, a frame
	// at a time, while the render loop records.
	work, done := make(chan int), make(chan int)
	go func() {
		sim, spans := p.CPUTrack("simulate"), 0
		for range work {
			s := sim.Span(sSim)
			for _, n := range []profiler.Name{sPhysics, sAnimate} {
				c := sim.Span(n)
				time.Sleep(100 * time.Microsecond) // the work
				c.End()
			}
			s.End()
			spans += 3
			done <- spans
		}
	}()

	// The render loop. Frame i uses slot i%FramesInFlight: its command
	// buffer, its fence and its part of the buffer, which the passes fill.
	render := p.CPUTrack("render")
	var nZones, nRender, nSim int
	for i := 0; i < *frames && err == nil; i++ {
		slot, cmd := i%*fif, a.cmds[i%*fif]
		p.BeginFrame() // ends the last frame, collects the zones the GPU finished, never waits
		frame := render.Span(sRender)
		w := render.Span(sWait) // for the frame that used the slot last
		err = vk.Error(vk.WaitForFences(a.dev, 1, a.fences[slot:slot+1], vk.True, math.MaxUint64))
		w.End()
		if err != nil {
			break // the device is lost
		}
		work <- i
		rec := render.Span(sRecord)
		vk.ResetFences(a.dev, 1, a.fences[slot:slot+1])
		vk.ResetCommandBuffer(cmd, 0)
		vk.BeginCommandBuffer(cmd, a.begin)
		gpu.BeginFrame(cmd)                                                  // first in the frame's first command buffer
		pass := func(name profiler.Name, part int, inner ...profiler.Name) { // a zone, and zones inside it
			z := gpu.Zone(cmd, name)
			a.fill(cmd, slot, part, uint32(i))
			for k, n := range inner {
				zi := gpu.Zone(cmd, n)
				a.fill(cmd, slot, part+1+k, uint32(i))
				zi.End()
			}
			z.End()
			nZones += 1 + len(inner)
		}
		f := gpu.Zone(cmd, zFrame)
		pass(zShadows, 0, zClear, zDraw)
		pass(zLight, 3, zDispatch)
		pass(zPost, 5)
		f.End()
		nZones++
		gpu.EndFrame(cmd) // last in the frame's last command buffer
		vk.EndCommandBuffer(cmd)
		rec.End()
		sub := render.Span(sSubmit)
		gpu.Submit(sub, cmd) // the trace's arrows from this span to the zones
		noGC(func() {
			err = vk.Error(vk.QueueSubmit(a.queue, 1, []vk.SubmitInfo{{SType: vk.StructureTypeSubmitInfo,
				CommandBufferCount: 1, PCommandBuffers: a.cmds[slot : slot+1]}}, a.fences[slot]))
		})
		sub.End()
		nSim = <-done
		frame.End()
		nRender += 4
	}
	close(work)
	idle := render.Span(sIdle)
	vk.DeviceWaitIdle(a.dev)
	idle.End()
	nRender++
	if err != nil {
		return err
	}
	if err := p.Close(); err != nil { // collects what the GPU finished, and counts what it did not
		return err
	}
	if err := gpu.Err(); err != nil { // a lasting fault (no calibration, a failed readback)
		return err
	}

	tr := p.Dump()
	if err := writeTraces(*out, tr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrap: device=%q frames=%d frames_in_flight=%d zones=%d flows=%d spans.render=%d spans.simulate=%d dropped=%d misuse=%d arrows_lost=%d validation=%d\n",
		dev.Name(), *frames, *fif, nZones, nZones, nRender, nSim, tr.Drops.Total(), tr.Drops.Misuse, tr.Drops.Flows, a.problems())
	return nil
}

// writeTraces writes tr to out as a Perfetto trace, a Chrome JSON trace
// and a pprof profile.
func writeTraces(out string, tr *timeline.Trace) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for file, write := range map[string]func(io.Writer, *timeline.Trace) error{
		"wrap.perfetto-trace": perfetto.Write, "wrap.json": chrome.Write, "wrap.pb.gz": pprof.Write} {
		f, err := os.Create(filepath.Join(out, file))
		if err == nil {
			err = errors.Join(write(f, tr), f.Close())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
