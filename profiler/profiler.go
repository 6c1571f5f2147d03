package profiler

import (
	"sync"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// Name is a zone or span name registered once with Profiler.Name.
type Name = timeline.NameID

// Options configure a Profiler.
type Options struct {
	// Recorder configures the timeline: flight-recorder window, sink for
	// streaming, frame budgets that dump the window (CPUBudget,
	// GPUBudget, OnBudget), limits.
	Recorder timeline.Options
}

// Profiler holds the timeline (names, frames, CPU tracks, GPU tracks) and
// the GPU contexts feeding it.
type Profiler struct {
	rec *timeline.Recorder

	mu   sync.Mutex
	gpus []*GPU

	frameMu sync.Mutex // BeginFrame, one at a time
	scratch []*GPU     // under frameMu: the contexts BeginFrame collects

	done      chan struct{} // closed by Close
	closeOnce sync.Once

	labelMu sync.RWMutex
	labels  []vk.Label // debug labels by Name, made on first use
}

// New makes a Profiler.
func New(o Options) *Profiler {
	return &Profiler{rec: timeline.NewRecorder(o.Recorder), done: make(chan struct{})}
}

// Done returns a channel that Close closes, once it has collected and
// flushed everything: what watches the profiler (the live view's poller)
// stops then, rather than outlive it.
func (p *Profiler) Done() <-chan struct{} { return p.done }

// Recorder returns the timeline the profiler feeds: for CPU tracks,
// counters, Dump and Flush.
func (p *Profiler) Recorder() *timeline.Recorder { return p.rec }

// GPUs returns the GPU contexts open on the profiler, in the order they
// were made: for tools that show each queue's clock model
// ([GPU.Clock]) or counts ([GPU.Stats]).
func (p *Profiler) GPUs() []*GPU {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*GPU(nil), p.gpus...)
}

// Name registers a name once; use the handle on the hot path.
func (p *Profiler) Name(s string) Name { return p.rec.Name(s) }

// CPUTrack returns a named CPU track (a logical thread: render loop,
// worker). Use one track from one goroutine at a time.
func (p *Profiler) CPUTrack(name string) *timeline.CPUTrack { return p.rec.CPUTrack(name) }

// BeginFrame is the frame boundary: it ends the frame in progress (as
// EndFrame does), collects every GPU context into the timeline without
// waiting (but those the application collects itself, see [GPU.Collect]),
// and starts the next frame, returning its id. GPU zones recorded until
// the next boundary carry it, however late their results arrive.
func (p *Profiler) BeginFrame() uint64 {
	p.frameMu.Lock()
	defer p.frameMu.Unlock()
	p.endOpenFrame()
	p.mu.Lock()
	gpus := append(p.scratch[:0], p.gpus...)
	p.mu.Unlock()
	for _, g := range gpus {
		if !g.manual.Load() {
			g.auto, _ = g.collect(g.auto[:0], g.pool.Collect) // a buffer reused: no allocation once warm
		}
	}
	clear(gpus)
	p.scratch = gpus[:0]
	return p.rec.BeginFrame()
}

// endOpenFrame ends the frame in progress, if any: at a frame boundary
// that is no misuse. The caller holds frameMu.
func (p *Profiler) endOpenFrame() {
	if p.rec.Frame() != 0 {
		p.rec.EndFrame()
	}
}

// EndFrame ends the current frame and returns its CPU time in ns, from
// BeginFrame (0, counted as misuse, when no frame was begun). The next
// BeginFrame ends the frame itself: call EndFrame for a frame's CPU time,
// or to end the last frame before Close (which ends it too). It checks
// the frame budgets of Options.Recorder, calling OnBudget for this frame
// when it went over the CPU budget, and for an older frame whose GPU time
// settled now when that went over the GPU budget.
func (p *Profiler) EndFrame() int64 { return p.rec.EndFrame() }

// Frame returns the current frame id (0 before the first BeginFrame).
func (p *Profiler) Frame() uint64 { return p.rec.Frame() }

// Dump returns the timeline so far (or its flight-recorder window).
func (p *Profiler) Dump() *timeline.Trace { return p.rec.Dump() }

// Close ends the frame in progress, closes every GPU context (see
// [GPU.Close]: each collects what the GPU has finished and counts the
// rest), then the recorder, flushing it to its sink. Call it once the
// application has waited for its GPU work (vkDeviceWaitIdle), before it
// destroys its device.
func (p *Profiler) Close() error {
	p.frameMu.Lock()
	p.endOpenFrame()
	p.frameMu.Unlock()
	p.mu.Lock()
	gpus := append([]*GPU(nil), p.gpus...)
	p.mu.Unlock()
	for _, g := range gpus {
		g.Close()
	}
	err := p.rec.Close()
	p.closeOnce.Do(func() { close(p.done) })
	return err
}

// forget drops a closed context from the profiler's list.
func (p *Profiler) forget(g *GPU) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.gpus {
		if x == g {
			p.gpus = append(p.gpus[:i], p.gpus[i+1:]...)
			return
		}
	}
}
