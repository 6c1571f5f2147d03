package main

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/profiler"
)

// collectEvery is how often the collector reads the contexts back. A
// frame's end wakes it only when a batch is due (every flushEvery
// frames), and the tick has not come: a wake costs the program's thread
// a system call inside its vkQueueSubmit or vkQueuePresentKHR (on a
// 2-core machine, tens of microseconds, for the woken thread may take
// its core), and the layer's zones are in recordings, which wait for
// their reading in a slot of their own, not in the frames' ring.
const collectEvery = 5 * time.Millisecond

// collector reads every context's zones back on a goroutine of its own
// (GPU.Collect: from its first call, Profiler.BeginFrame leaves the
// context to it), and hands the stream its batches there every
// flushEvery frames (Profiler.Flush), so that the program's thread, where
// a frame ends inside its own Vulkan call, pays for the frame's boundary
// but not for converting the frame's zones into the timeline, nor for
// the batch (which made one frame in sixty 3.7 to 4.7 ms on lavapipe,
// against medians of 0.24 to 0.29 ms).
type collector struct {
	mu    sync.Mutex
	gpus  []*profiler.GPU
	start sync.Once
	kick  chan struct{}
	p     *profiler.Profiler // to flush, with a sink; nil: none
	// sink says whether c.p is set; ends counts the frames ended, and
	// flushed is ends at the last flush. (Not Profiler.Frame: with
	// FramesNoWait it is 0 from a frame's end to the next one's begin.)
	sink    atomic.Bool
	ends    atomic.Uint64
	flushed atomic.Uint64
}

func (c *collector) add(g *profiler.GPU) {
	c.start.Do(func() {
		c.kick = make(chan struct{}, 1)
		go c.run()
	})
	c.mu.Lock()
	c.gpus = append(c.gpus, g)
	c.mu.Unlock()
}

func (c *collector) remove(g *profiler.GPU) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gpus = slices.DeleteFunc(c.gpus, func(x *profiler.GPU) bool { return x == g })
}

// ended counts a frame's end, and wakes the collector when a batch is
// due. A wake already pending, or one sent while the collector runs,
// wakes no thread.
func (c *collector) ended() {
	n := c.ends.Add(1)
	if c.kick == nil || !c.sink.Load() || n < c.flushed.Load()+flushEvery {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *collector) run() {
	t := time.NewTicker(collectEvery)
	defer t.Stop()
	var buf []profiler.ZoneResult
	var gpus []*profiler.GPU
	for {
		select {
		case <-t.C:
		case <-c.kick:
		}
		c.mu.Lock()
		gpus = append(gpus[:0], c.gpus...)
		c.mu.Unlock()
		for _, g := range gpus {
			buf = g.Collect(buf[:0])
		}
		c.mu.Lock() // held, so that flushing(nil) waits for a flush under way
		if n := c.ends.Load(); c.p != nil && n >= c.flushed.Load()+flushEvery {
			c.p.Flush() // a batch the writer fails is counted (sink); the exit reports the writer's error
			c.flushed.Store(n)
		}
		c.mu.Unlock()
	}
}

// flushing makes the collector flush p's sink; nil, no longer (at exit,
// before the profiler closes).
func (c *collector) flushing(p *profiler.Profiler) {
	c.mu.Lock()
	c.p = p
	c.sink.Store(p != nil)
	c.mu.Unlock()
}
