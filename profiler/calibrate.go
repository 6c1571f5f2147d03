package profiler

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// calibration configures how a GPU context samples its device clock
// against the host's: GPUOptions sets some fields, the rest keep their
// defaults but in tests and the clock check. Zero fields take defaults.
type calibration struct {
	// Interval: GPUOptions.CalibrateEvery.
	Interval time.Duration
	// Burst is the most vkGetCalibratedTimestamps calls in one round; the
	// one with the smallest maxDeviation is kept. Default 8.
	Burst int
	// Budget bounds a round's time: no further call starts once it is
	// spent, so a round can never hang or stall. Default 300µs.
	Budget time.Duration
	// NoCalibrated samples by submit-and-wait even where calibrated
	// timestamps exist (to test the fallback).
	NoCalibrated bool
	// FallbackQueue, FallbackLock and Clock: those of GPUOptions.
	FallbackQueue *Queue
	FallbackLock  sync.Locker
	// FallbackTimeout bounds a submit-and-wait round. Default 100ms.
	FallbackTimeout time.Duration
	Clock           HostClock
}

// ErrNoCalibration is returned by Calibrate when no sampling method works.
var ErrNoCalibration = errors.New("profiler: no way to calibrate: no calibrated timestamps and no queue to sample on")

type calibrator struct {
	g      *GPU
	o      calibration
	useExt bool
	// calibrated is the vkGetCalibratedTimestamps call; tests wrap it.
	calibrated func(doms []vk.TimeDomain, ts []uint64) (maxDeviation uint64, err error)

	mu      sync.Mutex // one round at a time
	stopped bool       // no round any more: the context is closing
	doms    [2]vk.TimeDomain
	ts      [2]uint64
	fb      *fallback
	n       atomic.Uint64
	errs    atomic.Uint64
	lastErr atomic.Pointer[string] // the latest failed attempt's error
	// first: the first round is the background goroutine's and has not
	// been tried yet (a fallback's, which takes FallbackLock): collection
	// holds the zones it reads until it has, so that they convert.
	first     atomic.Bool
	firstDone chan struct{} // closed once the first round was tried
	stopc     chan struct{}
	done      chan struct{}
	stopMu    sync.Once
}

// Limits of calibration.
const (
	minCalibrationInterval = time.Millisecond
	maxCalibrationBurst    = 256
	maxCalibrationBudget   = time.Minute
	maxFallbackTimeout     = 10 * time.Second
)

// check validates o against the limits, naming the option.
func (o calibration) check() error {
	switch {
	case o.Interval > 0 && o.Interval < minCalibrationInterval:
		return fmt.Errorf("profiler: GPUOptions.CalibrateEvery %v: at least %v (negative: no background rounds)", o.Interval, minCalibrationInterval)
	case o.Burst > maxCalibrationBurst:
		return fmt.Errorf("profiler: calibration burst %d: at most %d", o.Burst, maxCalibrationBurst)
	case o.Budget > maxCalibrationBudget:
		return fmt.Errorf("profiler: calibration budget %v: at most %v", o.Budget, maxCalibrationBudget)
	case o.FallbackTimeout > maxFallbackTimeout:
		return fmt.Errorf("profiler: calibration fallback timeout %v: at most %v", o.FallbackTimeout, maxFallbackTimeout)
	}
	return o.Clock.check()
}

func newCalibrator(g *GPU, o calibration) (*calibrator, error) {
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	if o.Burst <= 0 {
		o.Burst = 8
	}
	if o.Budget <= 0 {
		o.Budget = 300 * time.Microsecond
	}
	if o.FallbackTimeout <= 0 {
		o.FallbackTimeout = 100 * time.Millisecond
	}
	if err := o.Clock.check(); err != nil {
		return nil, err
	}
	c := &calibrator{g: g, o: o, stopc: make(chan struct{}), done: make(chan struct{}), firstDone: make(chan struct{})}
	c.calibrated = g.dev.CalibratedTimestamps
	caps := g.dev.Caps
	c.useExt = !o.NoCalibrated && g.dev.Calibrated != "" &&
		caps.HasTimeDomain(vk.TimeDomainDevice) && caps.HasTimeDomain(o.Clock.domain())
	c.doms = [2]vk.TimeDomain{vk.TimeDomainDevice, o.Clock.domain()}
	switch {
	case c.useExt:
		// A first sample now, so that frame 1 converts: a few
		// microseconds, and no lock of the application's.
		c.failed(c.round(nil))
		if o.Interval > 0 {
			go c.loop(false)
			return c, nil
		}
	case o.FallbackQueue != nil:
		// The first sample submits under FallbackLock, which the
		// application may hold while it sets up: it is the goroutine's.
		c.first.Store(true)
		go c.loop(true)
		return c, nil
	}
	close(c.done)
	return c, nil
}

// failed counts a failed round and keeps its reason (Stats).
func (c *calibrator) failed(err error) {
	if err == nil || err == errStopped {
		return
	}
	c.errs.Add(1)
	msg := err.Error()
	c.lastErr.Store(&msg)
}

func (c *calibrator) queueForBackground() *Queue {
	if c.useExt {
		return nil
	}
	return c.o.FallbackQueue
}

// warmupEvery is the calibration interval during the first Interval of a
// context's life: dense samples then fix the rate before the model has to
// extrapolate far (an H100's clock runs 20 ppm slow: 20 µs a second).
const warmupEvery = 20 * time.Millisecond

// nextCalibration returns when the round after one at age (time since the
// first round) is due.
func nextCalibration(age, interval time.Duration) time.Duration {
	if age < interval && warmupEvery < interval {
		return warmupEvery
	}
	return interval
}

// loop recalibrates in the background: every warmupEvery during the first
// Interval, then every Interval; first: a round at once, and only that one
// when Interval is negative.
func (c *calibrator) loop(first bool) {
	defer close(c.done)
	if first {
		c.failed(c.round(c.queueForBackground()))
		c.first.Store(false)
		close(c.firstDone)
		if c.o.Interval <= 0 {
			return
		}
	}
	start := time.Now()
	t := time.NewTimer(nextCalibration(0, c.o.Interval))
	defer t.Stop()
	for {
		select {
		case <-c.stopc:
			return
		case <-t.C:
			c.failed(c.round(c.queueForBackground()))
			t.Reset(nextCalibration(time.Since(start), c.o.Interval))
		}
	}
}

// stop ends the background rounds and refuses every later one: no call
// into the device follows.
func (c *calibrator) stop() {
	c.stopMu.Do(func() { close(c.stopc) })
	<-c.done
	c.first.Store(false)
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// release destroys the fallback's objects; after stop, before the device
// goes.
func (c *calibrator) release() {
	c.mu.Lock()
	if c.fb != nil {
		c.fb.destroy()
		c.fb = nil
	}
	c.mu.Unlock()
}

// awaitFirst waits, at most twice FallbackTimeout, for the first round
// when it is the background's and still to come: for Drain, which may
// wait, and would otherwise convert nothing it reads.
func (c *calibrator) awaitFirst() {
	if !c.first.Load() {
		return
	}
	t := time.NewTimer(2 * c.o.FallbackTimeout)
	defer t.Stop()
	select {
	case <-c.firstDone:
	case <-c.stopc:
	case <-t.C:
	}
}

func (c *calibrator) counts() (n, errs uint64, last string) {
	if p := c.lastErr.Load(); p != nil {
		last = *p
	}
	return c.n.Load(), c.errs.Load(), last
}

// Calibrate runs one calibration round now. With calibrated timestamps it
// takes a few microseconds and may run on any goroutine. Without them it
// submits a timestamp to the context's queue and waits for it (up to
// FallbackTimeout): call it only from the goroutine that owns that queue,
// off the render path.
func (g *GPU) Calibrate() error {
	if g.state.Load() != stateOpen {
		return g.refusal()
	}
	q := &g.queue
	if g.cal.o.FallbackQueue != nil {
		q = g.cal.o.FallbackQueue
	}
	err := g.cal.round(q)
	if err == errStopped {
		return g.refusal()
	}
	g.cal.failed(err)
	return err
}

// testHookRound, set by tests, runs at the start of every round that
// goes ahead, under the round's lock.
var testHookRound func(c *calibrator)

// errStopped: the context closed while a round was asked for.
var errStopped = errors.New("profiler: calibration stopped")

// round takes one sample and feeds it to the clock model. q is the queue
// for the fallback; nil forbids it.
func (c *calibrator) round(q *Queue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return errStopped
	}
	if testHookRound != nil {
		testHookRound(c)
	}
	var s clock.Sample
	var err error
	if c.useExt {
		s, err = c.sampleExt()
	} else if q != nil {
		s, err = c.sampleFallback(q)
	} else {
		return ErrNoCalibration
	}
	if err != nil {
		return err
	}
	if err := c.g.clock.Add(s); err != nil {
		return err
	}
	c.n.Add(1)
	return nil
}

// sampleExt runs a bounded burst of vkGetCalibratedTimestamps and keeps the
// sample with the smallest maxDeviation.
func (c *calibrator) sampleExt() (clock.Sample, error) {
	var best clock.Sample
	deadline := timeline.Now() + int64(c.o.Budget)
	for i := 0; i < c.o.Burst; i++ {
		dev, err := c.calibrated(c.doms[:], c.ts[:])
		if err != nil {
			if i > 0 {
				break
			}
			return best, err
		}
		d := int64(dev)
		if d < 1 {
			d = 1
		}
		if i == 0 || d < best.Deviation {
			best = clock.Sample{Device: c.ts[0], Host: int64(c.ts[1]), Deviation: d}
		}
		if timeline.Now() > deadline {
			break
		}
	}
	return best, nil
}

// fallback holds what submit-and-wait sampling records into.
type fallback struct {
	probe   *vk.Probe
	q       Queue
	pending bool // a submission timed out and may still run
}

func (c *calibrator) fallbackFor(q *Queue) (*fallback, error) {
	if c.fb != nil && c.fb.q.Handle == q.Handle {
		return c.fb, nil
	}
	if c.fb != nil {
		c.fb.destroy()
		c.fb = nil
	}
	p, err := c.g.dev.NewProbe(q.Family)
	if err != nil {
		return nil, fmt.Errorf("profiler: calibration: %w", err)
	}
	c.fb = &fallback{probe: p, q: *q}
	return c.fb, nil
}

func (f *fallback) destroy() {
	if f.pending {
		f.probe.Wait(int64(time.Second))
	}
	f.probe.Destroy()
}

// sampleFallback writes timestamps on the GPU between two host reads: host
// time before the submit and after the fence. The GPU wrote its timestamp
// somewhere in between, and the round trip bounds where: the sample's host
// time is the later read and its deviation the round trip, so that the
// model can be late but never early (a GPU timestamp never converts to
// before the host event that caused it). A round takes a few such probes,
// within FallbackTimeout, and keeps the one with the shortest round trip.
func (c *calibrator) sampleFallback(q *Queue) (clock.Sample, error) {
	var best clock.Sample
	deadline := timeline.Now() + int64(c.o.FallbackTimeout)
	tries := min(c.o.Burst, 4)
	for i := 0; i < tries; i++ {
		s, err := c.probeFallback(q, deadline-timeline.Now())
		if err != nil {
			if i > 0 {
				break
			}
			return best, err
		}
		if i == 0 || s.Deviation < best.Deviation {
			best = s
		}
		if timeline.Now() > deadline {
			break
		}
	}
	return best, nil
}

func (c *calibrator) probeFallback(q *Queue, timeout int64) (clock.Sample, error) {
	var s clock.Sample
	f, err := c.fallbackFor(q)
	if err != nil {
		return s, err
	}
	if f.pending {
		if !f.probe.Done() {
			return s, errors.New("profiler: the previous calibration submission has not finished")
		}
		f.pending = false
	}
	if err := f.probe.Record(); err != nil {
		return s, fmt.Errorf("profiler: calibration: %w", err)
	}
	lock := c.o.FallbackLock
	if c.o.FallbackQueue == nil || q.Handle != c.o.FallbackQueue.Handle {
		lock = nil // the context's own queue, from the application's goroutine (Calibrate)
	}
	if lock != nil {
		lock.Lock()
	}
	h0 := c.o.Clock.now()
	err = f.probe.Submit(q.Handle)
	if lock != nil {
		lock.Unlock()
	}
	if err != nil {
		return s, fmt.Errorf("profiler: calibration submit: %w", err)
	}
	err = f.probe.Wait(timeout)
	h1 := c.o.Clock.now()
	if errors.Is(err, vk.ErrProbeTimeout) {
		f.pending = true
		return s, fmt.Errorf("profiler: calibration submission took over %v", c.o.FallbackTimeout)
	}
	if err != nil {
		return s, fmt.Errorf("profiler: calibration wait: %w", err)
	}
	ts, err := f.probe.Timestamp()
	if err != nil {
		return s, fmt.Errorf("profiler: calibration: %w", err)
	}
	return clock.Sample{Device: ts, Host: h1, Deviation: max(h1-h0, 1)}, nil
}
