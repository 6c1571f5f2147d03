package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// config is what the flags set.
type config struct {
	frames     int
	out        string // directory for the traces
	device     string // index or name substring
	png        string // the last frame as PNG; "" for none
	load       int    // extra full-screen draws per frame
	iterations int    // loop count of the load shader
	zones      int    // extra profiler zones around the load draws
	rawZones   int    // raw timestamp pairs around the load draws
	stages     stages
	inFlight   int
	queries    int // per-frame query cap; 0: room for every zone
	validation bool
	quiet      bool
	json       bool
	size       int // the image is size x size

	// dev, when set, is a device opened by the caller (tests): run uses
	// it and leaves it open.
	dev *vk.Device
}

func defaultConfig() config {
	return config{
		frames: 300, out: "out", iterations: 256, inFlight: 3, size: 256,
		stages: stages{begin: vkg.PipelineStageTopOfPipeBit, end: vkg.PipelineStageBottomOfPipeBit},
	}
}

func (c *config) check() error {
	switch {
	case c.frames < 1:
		return fmt.Errorf("-frames %d: want at least 1", c.frames)
	case c.load < 0 || c.zones < 0 || c.rawZones < 0 || c.iterations < 0 || c.queries < 0:
		return errors.New("-load, -iterations, -zones, -rawzones and -queries cannot be negative")
	case c.inFlight < 1 || c.inFlight > 8:
		return fmt.Errorf("-inflight %d: want 1 to 8", c.inFlight)
	case c.size < 8 || c.size > 4096:
		return fmt.Errorf("-size %d: want 8 to 4096", c.size)
	case c.out == "":
		return errors.New("-out: want a directory")
	}
	return nil
}

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
		wait: p.Name("wait"), collect: p.Name("collect"), update: p.Name("update"),
		record: p.Name("record"), submit: p.Name("submit"), calibrate: p.Name("calibrate"),
	}
}

// loop is one run's state.
type loop struct {
	cfg   config
	r     *renderer
	p     *profiler.Profiler
	gpu   *profiler.GPU
	cpu   *timeline.CPUTrack
	raw   *rawZones
	n     names
	draws timeline.Counter
	mask  uint64  // timestampValidBits
	tick  float64 // ns per device tick

	zones     []profiler.ZoneResult // reused by Collect
	frameGPU  []int64               // "frame" zone durations, ns
	nZones    uint64
	errMax    int64
	firstErr  error // the first Collect error, reported, not fatal
	lastStart int64 // host time the previous frame began
}

// run renders cfg.frames frames, writes the traces and returns the summary
// (also printed on stdout unless cfg.quiet).
func run(cfg config, stdout io.Writer) (summary, error) {
	if err := cfg.check(); err != nil {
		return summary{}, err
	}
	start := time.Now()
	d := cfg.dev
	if d == nil {
		var err error
		d, err = vk.Open(vk.Config{
			InstanceConfig: vk.InstanceConfig{AppName: "triangle", Validation: cfg.validation},
			Device:         cfg.device,
		})
		if err != nil {
			return summary{}, err
		}
		defer d.Close()
	}
	w0, e0 := vk.ValidationCounts()

	// The application made its device; the profiler is handed it.
	pdev, err := profiler.WrapDevice(profiler.Existing{
		Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		HostQueryReset:       d.HostQueryReset,
		CalibratedTimestamps: d.Calibrated != "",
		DebugUtils:           d.Instance.DebugUtils,
	})
	if err != nil {
		return summary{}, err
	}
	q, ok := pdev.QueueFor("graphics")
	if !ok {
		return summary{}, fmt.Errorf("%s has no graphics queue", pdev.Name())
	}
	caps := pdev.Caps()

	tf, err := createTraceFiles(cfg.out)
	if err != nil {
		return summary{}, err
	}
	defer tf.close() // on error paths; a second close does nothing

	l := &loop{cfg: cfg, tick: float64(caps.TimestampPeriod), mask: ^uint64(0)}
	if q.ValidBits < 64 {
		l.mask = 1<<q.ValidBits - 1
	}
	l.p = profiler.New(profiler.Options{Recorder: timeline.Options{
		Process:    timeline.Process{PID: int32(os.Getpid()), Name: "triangle"},
		Sink:       tf,
		FlushEvery: 30,
	}})
	l.n = registerNames(l.p)
	l.cpu = l.p.CPUTrack("render loop")
	l.draws = l.p.Recorder().Counter("draws", timeline.UnitCount)

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
	})
	if err != nil {
		return summary{}, err
	}
	defer l.p.Close()

	l.r, err = newRenderer(d.Handle, d.Physical, q.Handle, q.Family, cfg.inFlight, cfg.size, cfg.size)
	if err != nil {
		return summary{}, err
	}
	defer l.r.destroy()
	l.raw, err = newRawZones(d.Handle, cfg.inFlight, cfg.rawZones, cfg.stages, q.ValidBits, caps.TimestampPeriod)
	if err != nil {
		return summary{}, err
	}
	defer l.raw.destroy()

	if pdev.Calibrated() == "" {
		// No calibrated timestamps: sample by submit-and-wait on our own
		// queue, before the loop starts using it.
		if err := l.gpu.Calibrate(); err != nil {
			return summary{}, err
		}
	}

	last := -1
	frameCPU := make([]int64, 0, cfg.frames)
	record := make([]int64, 0, cfg.frames)
	for f := 0; f < cfg.frames; f++ {
		i := f % cfg.inFlight
		t0 := timeline.Now()
		rec, err := l.frame(f, i)
		if err != nil {
			return summary{}, fmt.Errorf("frame %d: %w", f+1, err)
		}
		record = append(record, rec)
		if f > 0 {
			frameCPU = append(frameCPU, t0-l.lastStart)
		}
		l.lastStart = t0
		last = i
	}

	// Shutdown: wait for the GPU, read back everything, then finish the
	// traces. The image of the last frame is in its slot's host buffer.
	if res := vkg.DeviceWaitIdle(d.Handle); res != vkg.Success {
		return summary{}, fmt.Errorf("vkDeviceWaitIdle: %w", vkg.Error(res))
	}
	for i := range l.r.slots {
		if err := l.r.wait(i, 0); err != nil {
			return summary{}, err
		}
		if err := l.raw.read(i); err != nil {
			return summary{}, err
		}
	}
	if pdev.Calibrated() == "" {
		if err := l.gpu.Calibrate(); err != nil {
			l.note(err)
		}
	}
	zs, err := l.gpu.Drain(l.zones[:0])
	l.note(err)
	l.take(zs)
	img := l.r.pixels(last)

	s := summary{
		Device: caps.Name, Driver: caps.DriverName + " " + caps.DriverInfo, Calibrated: pdev.Calibrated(),
		Frames: cfg.frames, FramesInFlight: cfg.inFlight, Load: cfg.load, Iterations: cfg.iterations,
		ExtraZones: cfg.zones, RawZones: cfg.rawZones, Stages: cfg.stages.String(),
		FrameGPU: summarizeMs(l.frameGPU), FrameCPU: summarizeMs(frameCPU), Record: summarizeMs(record),
		Zones: l.nZones, ZoneErrNsMax: l.errMax, RawPairs: l.raw.pairs,
	}
	if l.raw.pairs > 0 {
		s.RawPairNs = float64(l.raw.ns) / float64(l.raw.pairs)
	}
	cq := l.gpu.Clock().Quality()
	s.CalibrationErrNs, s.DriftPPM = cq.ErrNs, cq.DriftPPM

	if err := l.p.Close(); err != nil {
		return s, fmt.Errorf("flushing the trace: %w", err)
	}
	files, err := tf.close()
	if err != nil {
		return s, fmt.Errorf("writing traces: %w", err)
	}
	s.Files = files
	drops := tf.all.Drops
	s.ZonesDropped = drops.Zones + drops.Unmatched + drops.Unconverted
	s.SpansDropped = drops.Spans + drops.Evicted
	if cfg.png != "" {
		if err := writePNG(cfg.png, img); err != nil {
			return s, err
		}
		s.PNG = cfg.png
	}
	w1, e1 := vk.ValidationCounts()
	s.ValidationWarnings, s.ValidationErrors = w1-w0, e1-e0
	s.ElapsedS = time.Since(start).Seconds()
	if l.firstErr != nil {
		return s, fmt.Errorf("collecting GPU zones: %w", l.firstErr)
	}
	return s, s.print(cfg, stdout)
}

func (s *summary) print(cfg config, w io.Writer) error {
	switch {
	case cfg.json:
		return s.writeJSON(w)
	case cfg.quiet:
		return nil
	}
	return s.writeText(w)
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
		if z.Name == l.n.frame {
			l.frameGPU = append(l.frameGPU, int64(float64((z.End-z.Begin)&l.mask)*l.tick))
		}
		if z.Converted && z.ErrNs > l.errMax {
			l.errMax = z.ErrNs
		}
	}
	l.zones = zs[:0]
}

// frame runs frame f on slot i and returns the CPU time spent recording.
func (l *loop) frame(f, i int) (int64, error) {
	l.p.BeginFrame()
	defer l.p.EndFrame()

	ws := l.cpu.Span(l.n.wait)
	err := l.r.wait(i, uint64(10*time.Second))
	ws.End()
	if err != nil {
		return 0, err
	}

	cs := l.cpu.Span(l.n.collect)
	err = l.raw.read(i)
	zs, cerr := l.gpu.Collect(l.zones[:0])
	l.note(cerr)
	l.take(zs)
	cs.End()
	if err != nil {
		return 0, err
	}

	us := l.cpu.Span(l.n.update)
	l.r.push = pushConstants{
		angle:      float32(f) * 0.02,
		iterations: uint32(l.cfg.iterations),
		seed:       float32(f%1024) * 0.001,
	}
	l.draws.Set(float64(1 + l.cfg.load))
	us.End()

	rs := l.cpu.Span(l.n.record)
	t0 := timeline.Now()
	err = l.record(i)
	rec := timeline.Now() - t0
	rs.End()
	if err != nil {
		return 0, err
	}

	ss := l.cpu.Span(l.n.submit)
	ss.Submitted(l.gpu.Submitted(l.r.slots[i].cmd))
	err = l.r.submit(i)
	ss.End()
	return rec, err
}

// record records frame slot i's command buffer:
//
//	frame
//	├─ render pass
//	│  ├─ load            (with -load, -zones or -rawzones)
//	│  │  └─ zone ...     (-zones of them, around the load draws)
//	│  └─ draw
//	└─ copy
func (l *loop) record(i int) error {
	cmd, err := l.r.beginCmd(i)
	if err != nil {
		return err
	}
	g, n := l.gpu, &l.n
	_ = g.BeginFrame(cmd) // an error refuses this frame's zones and counts them
	l.raw.reset(cmd, i)

	fz := g.Zone(cmd, n.frame)
	pz := g.Zone(cmd, n.pass)
	l.r.beginPass(cmd, i)
	if l.cfg.load > 0 || l.cfg.zones > 0 || l.cfg.rawZones > 0 {
		lz := g.Zone(cmd, n.load)
		l.r.bindLoad(cmd)
		l.recordLoad(cmd, i)
		lz.End()
	}
	dz := g.Zone(cmd, n.draw)
	l.r.drawTriangle(cmd)
	dz.End()
	l.r.endPass(cmd)
	pz.End()

	cz := g.Zone(cmd, n.copy)
	l.r.copyOut(cmd, i)
	cz.End()
	fz.End()
	g.EndFrame(cmd)
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
			open = l.gpu.Zone(cmd, l.n.zone)
		case zoneEnd:
			open.End()
		case rawBegin:
			l.raw.begin(cmd, i, k)
		case rawEnd:
			l.raw.end(cmd, i, k)
		}
	})
}
