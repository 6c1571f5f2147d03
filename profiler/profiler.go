package profiler

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// Name is a zone or span name registered once with Profiler.Name.
type Name = timeline.NameID

// Options configure a Profiler. The zero Options keep the newest 1Mi
// spans in memory for [Profiler.Dump], with no sink.
type Options struct {
	// Process names the process in every trace (default: the
	// executable's name and its PID).
	Process timeline.Process

	// WindowFrames, when > 0, makes the profiler a flight recorder that
	// keeps the last WindowFrames ended frames and the one in progress;
	// older data leaves memory (counted in [timeline.Drops].Evicted when
	// neither a Dump nor the Sink had it).
	WindowFrames int
	// MaxSpans caps the spans held in memory, and on its own each of the
	// frames, counter samples, calibrations and arrows: the oldest go
	// first (default 1Mi each, about 180 MiB in all).
	MaxSpans int

	// Sink, when set, receives finished data in batches (see
	// [timeline.Sink]) every FlushEvery frames, at BeginFrame, and at
	// Close; data handed to it leaves memory unless the window keeps it.
	Sink       timeline.Sink
	FlushEvery int

	// CPUBudget and GPUBudget, when > 0, are the CPU and GPU time a frame
	// may take. OnBudget is called with each frame found over one, and
	// the window dumped then (with WindowFrames set, the frames before
	// it), on the goroutine whose call found it: BeginFrame or EndFrame.
	// After a call, frames over that budget are passed again only once
	// the window has moved on (WindowFrames frames, or 60), or when one is
	// worse than the one last passed.
	CPUBudget, GPUBudget time.Duration
	OnBudget             func(OverBudget)

	// FramesNoWait makes BeginFrame and EndFrame never wait for the
	// profiler's own work: they take the frame's ID and time and leave
	// the rest of the boundary (ending the frame on the timeline, the
	// budgets, FlushEvery's batch) to a goroutine of the profiler's, so
	// that a frame boundary costs the same while a batch is being built.
	// For a program whose frames end inside calls that must not slow,
	// such as a Vulkan layer's. The boundary wakes no goroutine either
	// (a wake is a system call on the caller's thread): that goroutine
	// applies it within about 16 ms, and OnBudget is called there, that
	// long after the frame's end at most. False keeps that work in the
	// call.
	FramesNoWait bool
}

// OverBudget is a frame found over a budget of [Options].
type OverBudget struct {
	Frame uint64        // the frame
	GPU   bool          // over GPUBudget (else CPUBudget)
	Took  time.Duration // its GPU or CPU time
	// Trace is the profiler's Dump when the frame was found over: at its
	// end for the CPU budget, a few frames later, once its GPU time was
	// known, for the GPU budget.
	Trace *timeline.Trace
}

// recorderOptions maps o to the recorder's options.
func (o Options) recorderOptions() record.Options {
	ro := record.Options{
		Process:      o.Process,
		WindowFrames: max(o.WindowFrames, 0),
		MaxSpans:     o.MaxSpans,
		Sink:         o.Sink,
		FlushEvery:   max(o.FlushEvery, 0),
		CPUBudget:    max(o.CPUBudget, 0),
		GPUBudget:    max(o.GPUBudget, 0),
		FramesNoWait: o.FramesNoWait,
	}
	if ro.Process == (timeline.Process{}) {
		ro.Process = timeline.Process{PID: int32(os.Getpid()), Name: filepath.Base(os.Args[0])}
	}
	if on := o.OnBudget; on != nil {
		ro.OnBudget = func(b record.OverBudget) {
			on(OverBudget{Frame: b.Frame, GPU: b.Budget == record.BudgetGPU, Took: b.Took, Trace: b.Trace})
		}
	}
	return ro
}

// Profiler holds the timeline (names, frames, CPU tracks, GPU tracks) and
// the GPU contexts feeding it.
type Profiler struct {
	rec *record.Recorder

	mu    sync.Mutex
	gpus  []*GPU
	seats map[string][]*seat // by physical device: see identity.go

	frameMu sync.Mutex // BeginFrame, one at a time
	scratch []*GPU     // under frameMu: the contexts BeginFrame collects

	done      chan struct{} // closed by Close
	closeOnce sync.Once

	labelMu sync.RWMutex
	labels  []vk.Label // debug labels by Name, made on first use
}

// New makes a Profiler.
func New(o Options) *Profiler { return newProfiler(o.recorderOptions()) }

// newProfiler makes a Profiler whose recorder runs with o.
func newProfiler(o record.Options) *Profiler {
	return &Profiler{rec: record.NewRecorder(o), done: make(chan struct{})}
}

func init() {
	reach.Profiler = func(p any) (*record.Recorder, <-chan struct{}) {
		q := p.(*Profiler)
		return q.rec, q.done
	}
}

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

// BeginFrame is the frame boundary: it ends the frame in progress (as
// EndFrame does), collects every GPU context into the timeline without
// waiting (but those the application collects itself, see [GPU.Collect]),
// and starts the next frame, returning its id. GPU zones recorded until
// the next boundary carry it, however late their results arrive.
func (p *Profiler) BeginFrame() uint64 {
	p.frameMu.Lock()
	defer p.frameMu.Unlock()
	p.endOpenFrame()
	// The frame begins first, so that this goroutine is done with the
	// recorder before it places what the collections deliver (on a
	// goroutine of its own). The collections count from the frame before:
	// an application may begin a frame before it waits for that frame's
	// fence, and then it has waited for frame id-1-FramesInFlight only.
	id := p.rec.BeginFrame()
	p.mu.Lock()
	gpus := append(p.scratch[:0], p.gpus...)
	p.mu.Unlock()
	for _, g := range gpus {
		if !g.manual.Load() {
			g.collect(nil, false, id-1, g.pool.Collect, true) // the timeline's alone: no results kept
		}
	}
	clear(gpus)
	p.scratch = gpus[:0]
	return id
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
// the frame budgets of [Options], calling OnBudget for this frame
// when it went over the CPU budget, and for an older frame whose GPU time
// settled now when that went over the GPU budget.
func (p *Profiler) EndFrame() int64 { return p.rec.EndFrame() }

// Flush hands everything finished since the last batch to the sink
// (Options.Sink) as one batch, as EndFrame does every FlushEvery frames;
// it returns the error of a batch that failed since the last Flush or
// Close. Any goroutine may call it: with FlushEvery 0, a program whose
// frames end inside calls it must not slow (a Vulkan layer, in the
// program's vkQueuePresentKHR) flushes on a goroutine of its own.
func (p *Profiler) Flush() error { return p.rec.Flush() }

// lastClosed is the newest frame that can take no more submissions: the
// one before the frame begun last (a Submit after EndFrame and before the
// next BeginFrame still belongs to the frame ended).
func (p *Profiler) lastClosed() uint64 {
	if f := p.rec.LastFrame(); f != 0 {
		return f - 1
	}
	return 0
}

// Frame returns the current frame id (0 before the first BeginFrame).
func (p *Profiler) Frame() uint64 { return p.rec.Frame() }

// Dump returns the timeline so far (or its flight-recorder window).
func (p *Profiler) Dump() *timeline.Trace { return p.rec.Dump() }

// Close ends the frame in progress, closes every GPU context (see
// [GPU.Close]: each collects what the GPU has finished and counts the
// rest), then the recorder, flushing it to its sink. Call it once the
// application has waited for its GPU work (vkDeviceWaitIdle), before it
// destroys its device.
func (p *Profiler) Close() error { return p.close(false) }

// CloseAtExit is Close for a process about to exit whose GPU work may
// still run, or whose other threads may still record: a program that
// exits without waiting, as a Vulkan layer's exit handler sees it. It
// collects what the GPU has finished, counts the rest, and hands the last
// batch to the sink as Close does, but destroys no Vulkan object and
// calls nothing on the devices: the GPU may still use the query pools,
// and the process's end frees them.
func (p *Profiler) CloseAtExit() error { return p.close(true) }

func (p *Profiler) close(atExit bool) error {
	p.frameMu.Lock()
	p.endOpenFrame()
	p.frameMu.Unlock()
	p.mu.Lock()
	gpus := append([]*GPU(nil), p.gpus...)
	p.mu.Unlock()
	for _, g := range gpus {
		g.close(atExit)
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
			p.gpus = slices.Delete(p.gpus, i, i+1) // the tail cleared: g is not kept from the collector
			g.seat.unseat()
			return
		}
	}
}
