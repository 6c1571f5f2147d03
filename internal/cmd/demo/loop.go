package demo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// names are the zone and span names, registered once.
type names struct {
	frame, pass, load, zone, draw, copy   profiler.Name
	wait, collect, update, record, submit profiler.Name
	calibrate                             profiler.Name
}

func registerNames(p *profiler.Profiler) names {
	return names{
		frame: p.Name("frame"), pass: p.Name("render pass"), load: p.Name("load"),
		zone: p.Name("zone"), draw: p.Name("draw"), copy: p.Name("copy"),
		wait: p.Name("vkWaitForFences"), collect: p.Name("collect"), update: p.Name("update"),
		record: p.Name("record"), submit: p.Name("submit"), calibrate: p.Name("calibrate"),
	}
}

// loop is one run's state.
type loop struct {
	cfg   Config
	dev   *profiler.Device
	r     *renderer
	p     *profiler.Profiler
	gpu   *profiler.GPU
	cpu   profiler.CPUTrack
	raw   *rawZones
	n     names
	draws profiler.Counter
	mask  uint64  // timestampValidBits
	tick  float64 // ns per device tick

	zones    []profiler.ZoneResult // reused by Collect
	frameGPU []int64               // "frame" zone durations, ns
	work     workSum               // "frame" zone work (-pipeline-stats)
	nZones   uint64
	errMax   int64
	firstErr error // the first Collect error, reported, not fatal
	lastCal  int64 // when the fallback calibration last ran
	last     int   // the slot of the last frame submitted
	closed   bool
}

// calibrateEvery is how often the loop samples the clocks itself on a
// device without calibrated timestamps.
const calibrateEvery = int64(time.Second)

// newLoop sets up a render loop on d, profiled into a recorder whose sink
// is sink (nil: none).
func newLoop(cfg Config, d *vk.Device, sink timeline.Sink) (*loop, error) {
	// The application made its device; the profiler is handed it.
	pdev, err := profiler.WrapDevice(profiler.Existing{
		Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues:                  queueIDs(d),
		HostQueryReset:          d.HostQueryReset,
		CalibratedTimestamps:    d.Calibrated != "",
		APIVersion:              d.Instance.APIVersion,
		DebugUtils:              d.Instance.DebugUtils,
		PipelineStatisticsQuery: d.PipelineStatistics,
	})
	if err != nil {
		return nil, err
	}
	q, ok := pdev.QueueFor(profiler.QueueGraphics)
	if !ok {
		return nil, fmt.Errorf("%s has no graphics queue", pdev.Name())
	}
	caps := pdev.Caps()

	l := &loop{cfg: cfg, dev: pdev, tick: float64(caps.TimestampPeriod), mask: ^uint64(0), last: -1}
	if q.ValidBits < 64 {
		l.mask = 1<<q.ValidBits - 1
	}
	l.p = profiler.New(profiler.Options{
		Process:    timeline.Process{PID: int32(os.Getpid()), Name: "triangle"},
		Sink:       sink,
		FlushEvery: cfg.flushEvery,
		// With the live view on, the recorder keeps the last frames in
		// memory after they go to the trace files, for the view to copy.
		WindowFrames: liveWindow(cfg),
	})
	l.n = registerNames(l.p)
	l.cpu = l.p.CPUTrack("render loop")
	l.draws = l.p.Counter("draws", timeline.UnitCount)

	// Two queries a zone: the frame, pass, load, draw and copy zones and
	// the extra ones, with room to spare; or the -queries cap.
	queries := uint32(min(2*(cfg.zones+16), math.MaxUint32/2))
	initial, limit := max(queries, 512), max(queries, 32768)
	if cfg.queries > 0 {
		initial = uint32(min(cfg.queries, math.MaxUint32/2))
		limit = initial
	}
	l.gpu, err = l.p.GPU(pdev, q, profiler.GPUOptions{
		BeginStage:         cfg.stages.begin,
		EndStage:           cfg.stages.end,
		FramesInFlight:     cfg.inFlight,
		QueriesPerFrame:    initial,
		MaxQueriesPerFrame: limit,
		PipelineStatistics: pipelineStats(cfg, q),
	})
	if err != nil {
		l.close()
		return nil, err
	}
	if l.r, err = newRenderer(d, q.Handle, q.Family, cfg.inFlight, cfg.size, cfg.size); err != nil {
		l.close()
		return nil, err
	}
	if l.raw, err = newRawZones(d, cfg.inFlight, cfg.rawZones, cfg.cmdGPU, cfg.warmup, cfg.stages, q.ValidBits, caps.TimestampPeriod); err != nil {
		l.close()
		return nil, err
	}
	if err := l.calibrate(true); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// calibrate samples the clocks by submit-and-wait on the loop's own queue,
// on a device without calibrated timestamps (with them, the profiler does
// it in the background): when forced, and otherwise once a second.
func (l *loop) calibrate(force bool) error {
	if l.dev.Calibrated() != "" {
		return nil
	}
	now := timeline.Now()
	if !force && now-l.lastCal < calibrateEvery {
		return nil
	}
	l.lastCal = now
	defer l.cpu.Span(l.n.calibrate).End()
	return l.gpu.Calibrate()
}

// finish waits for the GPU, reads everything back and returns the last
// frame's image.
func (l *loop) finish() (pixels, error) {
	if res := vkg.DeviceWaitIdle(l.dev.Handle()); res != vkg.Success {
		return pixels{}, fmt.Errorf("vkDeviceWaitIdle: %w", vkg.Error(res))
	}
	for i := range l.r.slots {
		if err := l.r.wait(i, 0); err != nil {
			return pixels{}, err
		}
		if err := l.raw.read(i); err != nil {
			return pixels{}, err
		}
	}
	l.note(l.calibrate(true))
	zs, err := l.gpu.Drain(l.zones[:0])
	l.note(err)
	l.take(zs)
	if l.last < 0 {
		return pixels{}, errors.New("no frame was rendered")
	}
	return l.r.pixels(l.last), nil
}

// summary reports what the loop measured; run adds the rest.
func (l *loop) summary() summary {
	caps, cfg := l.dev.Caps(), l.cfg
	s := summary{
		Device: caps.Name, Driver: caps.DriverName + " " + caps.DriverInfo, Calibrated: l.dev.Calibrated(),
		Frames: cfg.frames, Warmup: cfg.warmup, FramesInFlight: cfg.inFlight, Load: cfg.load, Iterations: cfg.iterations,
		ExtraZones: cfg.zones, RawZones: cfg.rawZones, Stages: cfg.stages.String(),
		FrameGPU: summarizeMs(l.frameGPU), CmdGPU: summarizeMs(l.raw.cmdNs), Zones: l.nZones, ZoneErrNsMax: l.errMax, RawPairs: l.raw.pairs,
	}
	if l.raw.pairs > 0 {
		s.RawPairNs = float64(l.raw.ns) / float64(l.raw.pairs)
	}
	s.Work, s.WorkMin, s.WorkMax = l.work.perFrame()
	q := l.gpu.Clock().Quality()
	s.CalibrationErrNs, s.DriftPPM = q.ErrNs, q.DriftPPM
	return s
}

// close waits for the device to go idle, destroys the loop's Vulkan
// objects and closes the profiler, flushing it to its sink. A second close
// does nothing.
func (l *loop) close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	// Frames may still be in flight (an error, a benchmark's cleanup):
	// nothing they use may go before the device is idle.
	vkg.DeviceWaitIdle(l.dev.Handle())
	if l.raw != nil {
		l.raw.destroy()
	}
	if l.r != nil {
		l.r.destroy()
	}
	return l.p.Close()
}

// note keeps the first error of a non-fatal step.
func (l *loop) note(err error) {
	if err != nil && l.firstErr == nil {
		l.firstErr = err
	}
}

// take tallies collected zones: the frame zones' GPU durations (device
// ticks, so that they do not depend on the clock model) and error bounds.
func (l *loop) take(zs []profiler.ZoneResult) {
	for i := range zs {
		z := &zs[i]
		l.nZones++
		if z.Name == l.n.frame && z.Frame > uint64(l.cfg.warmup) {
			l.frameGPU = keep(l.frameGPU, int64(float64((z.End-z.Begin)&l.mask)*l.tick))
			l.work.add(z.Work)
		}
		if z.Converted && z.ErrNs > l.errMax {
			l.errMax = z.ErrNs
		}
	}
	l.zones = zs[:0]
}

// frame runs frame f (from 0) and returns the CPU time spent recording
// it. Frame f uses slot f mod frames in flight, once the GPU is done with
// the frame that used it before.
func (l *loop) frame(f int) (int64, error) {
	i := f % len(l.r.slots)
	l.p.BeginFrame()
	defer l.p.EndFrame()

	ws := l.cpu.Span(l.n.wait) // named as the call it wraps: what limits a frame knows it as a wait
	err := l.r.wait(i, uint64(10*time.Second))
	ws.End()
	if err != nil {
		return 0, err
	}

	cs := l.cpu.Span(l.n.collect)
	err = l.raw.read(i)
	zs := l.gpu.Collect(l.zones[:0])
	l.note(l.gpu.Err())
	l.take(zs)
	cs.End()
	if err != nil {
		return 0, err
	}
	l.note(l.calibrate(false))

	us := l.cpu.Span(l.n.update)
	*l.r.push = pushConstants{
		angle:      float32(f) * 0.02,
		iterations: uint32(l.cfg.iterations),
		seed:       float32(f%1024) * 0.001,
	}
	l.draws.Set(float64(1 + l.cfg.load))
	us.End()

	rs := l.cpu.Span(l.n.record)
	t0 := timeline.Now()
	err = l.record(i, f)
	rec := timeline.Now() - t0
	rs.End()
	if err != nil {
		return 0, err
	}

	ss := l.cpu.Span(l.n.submit)
	l.gpu.Submit(ss, l.r.slots[i].cmd)
	err = l.r.submit(i)
	ss.End()
	if err == nil {
		l.last = i
	}
	return rec, err
}

// record records frame f into slot i's command buffer:
//
//	(-cmdgpu: a raw timestamp)
//	frame
//	├─ render pass
//	│  ├─ load            (with -load, -zones or -rawzones)
//	│  │  └─ zone ...     (-zones of them, around the load draws)
//	│  └─ draw
//	└─ copy
//	(the profiler's readback copy; -cmdgpu: a raw timestamp)
func (l *loop) record(i, f int) error {
	cmd, err := l.r.beginCmd(i)
	if err != nil {
		return err
	}
	g, n := l.gpu, &l.n
	l.raw.reset(cmd, i, f)
	l.raw.cmdBegin(cmd, i)
	g.BeginFrame(cmd) // when it cannot, this frame's zones are refused and counted

	fz := g.Zone(cmd, n.frame)
	pz := g.Zone(cmd, n.pass)
	l.r.beginPass(cmd, i)
	if l.cfg.hasLoadZone() {
		lz := g.ZoneInRenderPass(cmd, n.load)
		l.r.bindLoad(cmd)
		l.recordLoad(cmd, i)
		lz.End()
	}
	dz := g.ZoneInRenderPass(cmd, n.draw)
	l.r.drawTriangle(cmd)
	dz.End()
	l.r.endPass(cmd)
	pz.End()

	cz := g.Zone(cmd, n.copy)
	l.r.copyOut(cmd, i)
	cz.End()
	fz.End()
	g.EndFrame(cmd)
	l.raw.cmdEnd(cmd, i)
	return nil
}

// recordLoad records the load draws with the -zones zones and the
// -rawzones timestamp pairs around them (see spread).
func (l *loop) recordLoad(cmd vkg.CommandBuffer, i int) {
	var open profiler.Zone
	spread(l.cfg.load, l.cfg.zones, l.cfg.rawZones, func(ev event, k int) {
		switch ev {
		case draw:
			l.r.loadDraw(cmd)
		case zoneBegin:
			open = l.gpu.ZoneInRenderPass(cmd, l.n.zone)
		case zoneEnd:
			open.End()
		case rawBegin:
			l.raw.begin(cmd, i, k)
		case rawEnd:
			l.raw.end(cmd, i, k)
		}
	})
}

// pipelineStats is what -pipeline-stats counts on q: every statistic its
// family can count.
func pipelineStats(cfg Config, q profiler.Queue) profiler.PipelineStats {
	if !cfg.pipelineStats {
		return 0
	}
	st := timeline.AllPipelineStats
	if !q.Flags.Has(profiler.QueueCompute) {
		st &^= timeline.ComputeShaderInvocations
	}
	return st
}

// queueIDs lists the queues d was created with, for WrapDevice.
func queueIDs(d *vk.Device) []profiler.QueueID {
	ids := make([]profiler.QueueID, len(d.Queues))
	for i, q := range d.Queues {
		ids[i] = profiler.QueueID{Family: q.Family, Index: q.Index}
	}
	return ids
}
