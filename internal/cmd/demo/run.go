package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Config is what the flags set.
type Config struct {
	frames     int    // 0: until interrupted
	http       string // address of the live view; "" for none
	fps        int    // frames a second at most; 0: as fast as it can
	out        string // directory for the traces
	device     string // index or name substring
	png        string // the last frame as PNG; "" for none
	load       int    // extra full-screen draws per frame
	iterations int    // loop count of the load shader
	zones      int    // extra profiler zones around the load draws
	rawZones   int    // raw timestamp pairs around the load draws
	cmdGPU     bool   // a raw timestamp pair around each command buffer
	stages     stages
	inFlight   int
	queries    int // per-frame query cap; 0: room for every zone
	validation bool
	quiet      bool
	json       bool
	size       int // the image is size x size
	warmup     int // frames left out of the summary's statistics
	// pipelineStats counts every pipeline statistic the queue offers in
	// every zone; renderStages also writes the GPU zones to the Perfetto
	// trace as render stages, with the work as GPU counters.
	pipelineStats, renderStages bool

	// flushEvery is how many frames go to the trace files in one batch.
	flushEvery int
	// dev, when set, is a device opened by the caller (tests): run uses
	// it and leaves it open.
	dev *vk.Device
}

func defaultConfig() Config {
	return Config{
		frames: 300, out: "out", iterations: 256, inFlight: 3, size: 256, flushEvery: 30,
		stages: stages{begin: vkg.PipelineStageTopOfPipeBit, end: vkg.PipelineStageBottomOfPipeBit},
	}
}

// hasLoadZone says whether frames have a "load" zone: with load draws,
// extra zones or raw pairs, and with -cmdgpu, so that the runs an overhead
// measurement compares have the same library zones.
func (c *Config) hasLoadZone() bool {
	return c.load > 0 || c.zones > 0 || c.rawZones > 0 || c.cmdGPU
}

func (c *Config) check() error {
	switch {
	case c.fps < 0 || c.fps > 100_000:
		return fmt.Errorf("-fps %d: want 0 (as fast as it can) to 100000", c.fps)
	case c.frames < 0:
		return fmt.Errorf("-frames %d: want 0 (until interrupted) or more", c.frames)
	case c.load < 0 || c.zones < 0 || c.rawZones < 0 || c.iterations < 0 || c.queries < 0:
		return errors.New("-load, -iterations, -zones, -rawzones and -queries cannot be negative")
	case c.inFlight < 1 || c.inFlight > 8:
		return fmt.Errorf("-inflight %d: want 1 to 8", c.inFlight)
	case c.size < 8 || c.size > 4096:
		return fmt.Errorf("-size %d: want 8 to 4096", c.size)
	case c.warmup < 0 || (c.frames > 0 && c.warmup >= c.frames):
		return fmt.Errorf("-warmup %d: want 0 to frames-1 (%d)", c.warmup, c.frames-1)
	case c.out == "":
		return errors.New("-out: want a directory")
	}
	return nil
}

// run renders cfg.frames frames, writes the traces and the PNG, and
// returns the summary, which it also prints on stdout (as JSON with
// cfg.json; not at all with cfg.quiet). On error the trace files still
// hold everything recorded up to it.
func run(cfg Config, stdout io.Writer) (summary, error) {
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

	tf, err := createTraceFiles(cfg.out, cfg.frames > 0, cfg.renderStages)
	if err != nil {
		return summary{}, err
	}
	defer tf.close() // on error paths; a second close does nothing
	l, err := newLoop(cfg, d, tf)
	if err != nil {
		return summary{}, err
	}
	defer l.close() // on error paths, as above

	if cfg.http != "" {
		stop, err := serveLive(cfg.http, l.p, os.Stderr)
		if err != nil {
			return summary{}, err
		}
		defer stop()
	}
	ctx := context.Background()
	if cfg.frames == 0 {
		var cancel context.CancelFunc
		ctx, cancel = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer cancel()
	}
	heap := startHeapSampler()

	var frameCPU, recordMs []int64
	var last int64
	f := 0
	paced := time.Now()
	for ; (cfg.frames == 0 || f < cfg.frames) && ctx.Err() == nil; f++ {
		if cfg.fps > 0 {
			paced = paced.Add(time.Second / time.Duration(cfg.fps))
			time.Sleep(time.Until(paced))
		}
		t0 := timeline.Now()
		rec, err := l.frame(f)
		if err != nil {
			return summary{}, fmt.Errorf("frame %d: %w", f+1, err)
		}
		if f < cfg.warmup {
			last = t0
			continue
		}
		recordMs = keep(recordMs, rec)
		if f > 0 {
			frameCPU = keep(frameCPU, t0-last)
		}
		last = t0
	}
	img, err := l.finish()
	if err != nil {
		return summary{}, err
	}

	s := l.summary()
	s.Frames = f
	s.FrameCPU, s.Record = summarizeMs(frameCPU), summarizeMs(recordMs)
	hs := heap.stop()
	s.HeapMaxMB, s.HeapMeanMB, s.HeapLiveMaxMB, s.HeapLiveMeanMB = hs.ObjectsMax, hs.ObjectsMean, hs.LiveMax, hs.LiveMean
	s.AllocMBPerS, s.GCCycles = hs.AllocPerS, hs.Cycles
	if err := l.close(); err != nil {
		return s, fmt.Errorf("flushing the trace: %w", err)
	}
	if s.Files, err = tf.close(); err != nil {
		return s, fmt.Errorf("writing traces: %w", err)
	}
	s.ZonesDropped = books.GPUZones(tf.drops)
	s.SpansDropped = tf.drops.Spans + tf.drops.Evicted
	s.GPULanes = tf.lanes
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

func (s *summary) print(cfg Config, w io.Writer) error {
	switch {
	case cfg.json:
		return s.writeJSON(w)
	case cfg.quiet:
		return nil
	}
	return s.writeText(w)
}
