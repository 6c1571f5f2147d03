package loopcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// run is one loop being run: the application, the profiler made on its
// device, the frames in flight, and the journal.
type run struct {
	l   Loop
	a   *app
	dir string // where the traces go

	p     *profiler.Profiler
	dev   *profiler.Device
	gpus  []*profiler.GPU // per profiled queue
	all   []*profiler.GPU // every context made, closed ones too
	main  profiler.CPUTrack
	recs  []profiler.CPUTrack // per recording goroutine
	queue sync.Mutex          // the application's lock around its queues (FallbackLock)

	namesMu sync.Mutex
	names   map[string]profiler.Name

	slots []slot
	j     journal
	sink  *perfetto.Writer
	out   *os.File
	live  *liveView

	// Loop.Timeline: a timeline semaphore a queue, and the value its
	// next frame signals.
	timelines []semaphore
	tnext     []uint64
	twin      *twin // Loop.Twin

	collected  []profiler.ZoneResult
	submitting bool    // the frame being recorded calls GPU.Submit
	noEnds     int     // recordings left without Recording.End (misuse)
	errs       []error // what went wrong, for the report
	calErrs    int     // GPU.Calibrate calls that failed with frames in flight
}

// slot is one frame in flight: per goroutine and queue a command pool and
// the command buffers allocated from it, per queue a fence and a
// semaphore, and the submissions the fences wait for.
type slot struct {
	pools    [][]cmdPool // [goroutine][queue]
	prim     [][][]cmdBuf
	sec      [][][]cmdBuf
	fences   []fence
	sems     []semaphore
	inFlight []bool
	tvals    []uint64 // Loop.Timeline: per queue, the value its submissions signal
	submits  []*submitRec
	stale    *stale      // Loop.Resubmit
	recs     []*recorded // by queue (Loop.Recordings); nil where none
	secRecs  []*recorded // by queue (Loop.CachedSecondaries); nil where none
}

// Names of the CPU spans.
const (
	spanFrame   = "frame"
	spanRecord  = "record"
	spanCollect = "collect"
	spanAgain   = "make again"
)

// name returns the handle of s, registering it once.
func (r *run) name(s string) profiler.Name {
	r.namesMu.Lock()
	defer r.namesMu.Unlock()
	n, ok := r.names[s]
	if !ok {
		n = r.p.Name(s)
		r.names[s] = n
	}
	return n
}

// start makes the profiler on the application's device: its options, the
// device wrapped, a context on each profiled queue.
func (r *run) start() error {
	l := r.l
	o := profiler.Options{WindowFrames: l.Window, MaxSpans: l.MaxSpans, FramesNoWait: l.FramesNoWait}
	if l.Sink {
		f, err := os.Create(filepath.Join(r.dir, "sink.perfetto-trace"))
		if err != nil {
			return err
		}
		r.out = f
		r.sink = perfetto.NewWriter(f, perfetto.Options{})
		o.Sink, o.FlushEvery = r.sink, l.FlushEvery
	}
	r.p = profiler.New(o)
	r.names = map[string]profiler.Name{}
	r.main = r.p.CPUTrack("loop")
	for g := range l.Goroutines {
		r.recs = append(r.recs, r.p.CPUTrack(fmt.Sprint("recorder ", g)))
	}
	if err := r.wrap(); err != nil {
		return err
	}
	if l.Twin {
		if err := r.startTwin(); err != nil {
			return err
		}
	}
	if l.Live {
		r.live = startLive(r.p)
	}
	return r.makeSlots()
}

// wrap hands the device to the profiler and makes a context on each
// profiled queue.
func (r *run) wrap() error {
	ids := make([]profiler.QueueID, len(r.a.queues))
	for i, q := range r.a.queues {
		ids[i] = profiler.QueueID{Family: q.family, Index: q.index}
	}
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: r.a.instance(), Physical: r.a.physical(), Device: r.a.device(), Queues: ids,
		HostQueryReset: r.l.HostReset, CalibratedTimestamps: r.l.Calibrated, DebugUtils: r.a.debugUtils,
		PipelineStatisticsQuery: r.a.pipelineStats, APIVersion: r.a.apiVersion(),
	})
	if err != nil {
		return err
	}
	r.dev = dev
	return r.contexts()
}

// contexts makes a context on each profiled queue.
func (r *run) contexts() error {
	r.gpus = r.gpus[:0]
	for q := range r.l.Queues {
		gq, err := r.dev.Queue(r.a.queues[q].family, r.a.queues[q].index)
		if err != nil {
			return err
		}
		o := profiler.GPUOptions{FramesInFlight: r.l.Declared, QueriesPerFrame: r.l.Queries, MaxQueriesPerFrame: r.l.MaxQueries,
			DebugLabels: r.l.Labels && r.a.debugUtils, PipelineStatistics: r.stats(q)}
		if !r.l.Calibrated && r.l.Calibrate == 0 {
			o.FallbackQueue, o.FallbackLock = &gq, &r.queue
		}
		g, err := r.p.GPU(r.dev, gq, o)
		if err != nil {
			return err
		}
		r.gpus = append(r.gpus, g)
		r.all = append(r.all, g)
		if !r.l.Calibrated && r.l.Calibrate > 0 {
			// Without calibrated timestamps or a fallback queue, the
			// application calibrates each context it makes before its
			// zones come back, and every Calibrate frames.
			if err := g.Calibrate(); err != nil {
				return fmt.Errorf("calibrating: %w", err)
			}
		}
	}
	return nil
}

// makeSlots makes the objects of every frame in flight.
func (r *run) makeSlots() error {
	r.slots = make([]slot, r.l.Ring)
	if r.l.Timeline {
		r.timelines, r.tnext = make([]semaphore, r.l.Queues), make([]uint64, r.l.Queues)
		for q := range r.timelines {
			r.timelines[q] = r.a.timelineSemaphore()
		}
	}
	for s := range r.slots {
		sl := &r.slots[s]
		sl.pools = make([][]cmdPool, r.l.Goroutines)
		sl.prim = make([][][]cmdBuf, r.l.Goroutines)
		sl.sec = make([][][]cmdBuf, r.l.Goroutines)
		for g := range sl.pools {
			sl.prim[g] = make([][]cmdBuf, r.l.Queues)
			sl.sec[g] = make([][]cmdBuf, r.l.Queues)
			for q := range r.l.Queues {
				p, err := r.a.pool(r.a.queues[q].family)
				if err != nil {
					return err
				}
				sl.pools[g] = append(sl.pools[g], p)
			}
		}
		for range r.l.Queues {
			sl.fences = append(sl.fences, r.a.fence())
			sl.sems = append(sl.sems, r.a.semaphore())
			sl.inFlight = append(sl.inFlight, false)
			sl.tvals = append(sl.tvals, 0)
		}
		if err := r.makeRecordings(sl); err != nil {
			return err
		}
		if err := r.newStale(sl); err != nil {
			return err
		}
	}
	return nil
}

// destroySlots waits for the device and destroys the frames' objects.
func (r *run) destroySlots() {
	r.waitAll()
	for s, sl := range r.slots {
		for _, ps := range sl.pools {
			for _, p := range ps {
				r.a.destroyPool(p)
			}
		}
		for q := range sl.fences {
			r.a.destroyFence(sl.fences[q])
			r.a.destroySemaphore(sl.sems[q])
		}
		for _, rc := range append(slicesClip(sl.recs), sl.secRecs...) {
			if rc != nil && (!rc.simultaneous || s == 0) { // shared: slot 0's
				r.a.destroyPool(rc.pool)
			}
		}
		if sl.stale != nil {
			r.a.destroyPool(sl.stale.pool)
		}
	}
	for _, t := range r.timelines {
		r.a.destroySemaphore(t)
	}
	r.slots, r.timelines, r.tnext = nil, nil, nil
}

// wait waits for the submissions of slot s, as the application does
// before it uses the slot again, and notes when the wait returned.
func (r *run) wait(s int) error {
	sl := &r.slots[s]
	for q, on := range sl.inFlight {
		if !on {
			continue
		}
		var err error
		if r.l.Timeline {
			err = r.a.waitTimeline(r.timelines[q], sl.tvals[q], int64(30*time.Second))
		} else {
			err = r.a.wait(sl.fences[q], int64(30*time.Second))
		}
		if err != nil {
			return err
		}
		sl.inFlight[q] = false
	}
	now := timeline.Now()
	for _, sub := range sl.submits {
		sub.done = now
	}
	sl.submits = sl.submits[:0]
	return nil
}

// waitAll waits for every frame in flight.
func (r *run) waitAll() error {
	errs := []error{r.twinWait()}
	for s := range r.slots {
		errs = append(errs, r.wait(s))
	}
	return errors.Join(errs...)
}

// again makes contexts, the wrapped device or the device itself again, as
// a renderer does when its swapchain or device changes: it waits for its
// frames, and closes what it made before.
func (r *run) again(kind Recreate) error {
	s := r.main.Span(r.name(spanAgain))
	defer r.endSpan(s)
	if err := r.waitAll(); err != nil {
		return err
	}
	if !r.l.Boundary {
		r.collect(false)
	}
	for _, g := range r.gpus {
		g.Close()
	}
	r.forgetRecordings(r.p.Frame())
	r.staleAgain()
	r.zonesAfterClose()
	r.faults()
	switch kind {
	case RecreateContexts:
		return r.contexts()
	case RecreateWrapper:
		r.dev.Close()
		return r.wrap()
	}
	r.dev.Close()
	r.destroySlots()
	if err := r.a.remakeDevice(); err != nil {
		return err
	}
	if err := r.wrap(); err != nil {
		return err
	}
	return r.makeSlots()
}

// zonesAfterClose, in a loop with misuse, begins and ends a zone on each
// context just closed, as a renderer's straggling thread might: each is
// refused, and counted as Drops.Closed in the context and in the trace.
// It names no command buffer: a closed context touches none.
func (r *run) zonesAfterClose() {
	if r.l.MisuseEvery == 0 {
		return
	}
	for _, g := range r.gpus {
		g.Zone(nil, r.name("after close")).End()
		r.j.calls++
		r.j.afterClose++
	}
}

// collect collects every context: Collect, or Drain.
func (r *run) collect(drain bool) {
	s := r.main.Span(r.name(spanCollect))
	defer r.endSpan(s)
	for _, g := range r.contextsOpen() {
		var err error
		if drain {
			r.collected, err = g.Drain(r.collected[:0])
		} else {
			r.collected = g.Collect(r.collected[:0])
		}
		if err == nil {
			err = g.Err()
		}
		if err != nil && !(errors.Is(err, profiler.ErrNoCalibration) && !r.l.Calibrated) {
			r.errs = append(r.errs, fmt.Errorf("collecting: %w", err))
		}
	}
}

// faults notes the contexts' lasting faults (GPU.Err) but the want of a
// calibration the loop chose.
func (r *run) faults() {
	for _, g := range r.contextsOpen() {
		if err := g.Err(); err != nil && !(errors.Is(err, profiler.ErrNoCalibration) && !r.l.Calibrated) {
			r.errs = append(r.errs, fmt.Errorf("GPU.Err: %w", err))
		}
	}
}

// contextsOpen returns the contexts the loop uses now: one a profiled
// queue, and the second device's.
func (r *run) contextsOpen() []*profiler.GPU {
	if r.twin == nil || r.twin.g == nil {
		return r.gpus
	}
	return append(slices.Clip(r.gpus), r.twin.g)
}

func (r *run) endSpan(s profiler.Span) {
	s.End()
	r.j.cpuSpans++
}

// loop runs every frame.
func (r *run) loop() error {
	for f := range r.l.Frames {
		if kind := r.l.Recreate[f]; kind != 0 {
			if err := r.again(kind); err != nil {
				return fmt.Errorf("frame %d: making %s again: %w", f, kind, err)
			}
		}
		if err := r.frame(f); err != nil {
			return fmt.Errorf("frame %d: %w", f, err)
		}
	}
	return nil
}

// finish waits for the GPU, closes the profiler and the device wrapper,
// and writes the traces: the sink's, or a Dump's.
func (r *run) finish() (string, error) {
	if err := r.waitAll(); err != nil {
		return "", err
	}
	// vkDeviceWaitIdle covers every queue: under the lock the profiler
	// takes around its own submissions (FallbackLock).
	r.queue.Lock()
	err := r.a.waitIdle()
	r.queue.Unlock()
	if err != nil {
		return "", err
	}
	if r.live != nil {
		r.live.stop()
	}
	if err := r.p.Close(); err != nil {
		return "", fmt.Errorf("Profiler.Close: %w", err)
	}
	r.forgetRecordings(0)
	r.faults()
	r.dev.Close()
	if err := r.stopTwin(); err != nil {
		return "", err
	}
	path := filepath.Join(r.dir, "dump.perfetto-trace")
	if r.sink != nil {
		path = r.out.Name()
		if err := r.sink.Close(); err != nil {
			return "", err
		}
		return path, r.out.Close()
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = perfetto.Write(f, r.p.Dump())
	return path, errors.Join(err, f.Close())
}

// liveView is the live view mounted on a server of its own, with a
// client that reads it while the loop runs: the page's JSON, a capture.
type liveView struct {
	srv  *httptest.Server
	quit chan struct{}
	done chan struct{}
	err  error
	once sync.Once
}

func startLive(p *profiler.Profiler) *liveView {
	h, err := live.New(p, live.Options{PollEvery: 50 * time.Millisecond, WindowFrames: 60})
	v := &liveView{quit: make(chan struct{}), done: make(chan struct{}), err: err}
	if err != nil {
		close(v.done)
		return v
	}
	v.srv = httptest.NewServer(h)
	go v.read()
	return v
}

func (v *liveView) read() {
	defer close(v.done)
	c := v.srv.Client()
	defer c.CloseIdleConnections()
	get := func(path string) error {
		resp, err := c.Get(v.srv.URL + "/debug/framescope/" + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %.200s", path, resp.Status, b)
		}
		if path == "trace?seconds=1" {
			_, err = perfetto.Read(bytes.NewReader(b))
		}
		return err
	}
	for i := 0; ; i++ {
		select {
		case <-v.quit:
			return
		case <-time.After(20 * time.Millisecond):
		}
		path := "json"
		if i == 3 {
			path = "trace?seconds=1"
		}
		if err := get(path); err != nil && v.err == nil {
			v.err = err
		}
	}
}

func (v *liveView) stop() {
	if v.srv == nil {
		return
	}
	v.once.Do(func() {
		close(v.quit)
		<-v.done
		v.srv.Close()
	})
}

// stats is what queue q's context counts in a loop with Loop.Stats: every
// statistic its family can count.
func (r *run) stats(q int) profiler.PipelineStats {
	if !r.l.Stats || !r.a.pipelineStats || q == twinQueue {
		return 0
	}
	var st profiler.PipelineStats
	if f := r.a.queues[q].flags; f&queueGraphics != 0 {
		st |= timeline.GraphicsPipelineStats
	}
	if r.a.queues[q].flags&queueCompute != 0 {
		st |= timeline.ComputeShaderInvocations
	}
	return st
}

// dispatches reports whether queue q's command buffers dispatch the
// count pipeline (Loop.Stats, a family with compute).
func (r *run) dispatches(q int) bool { return r.stats(q)&timeline.ComputeShaderInvocations != 0 }
