package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/framescope/framescope/profiler"
	vkg "github.com/vulkan-go/vulkan"
)

// layer is what the layer knows of the program. Its lock guards the maps
// only: it is never held across a call into the profiler, which calls
// Vulkan through the loader and so may come back into the layer's hooks.
type layer struct {
	mu      sync.Mutex
	p       *profiler.Profiler
	out     *output
	devices map[unsafe.Pointer]*device // by VkDevice
	queues  map[unsafe.Pointer]queueOf // by VkQueue
	pools   map[uint64]uint32          // VkCommandPool: its queue family
	cmds    map[unsafe.Pointer]*cmdState
	names   names
	cpu     cpuSpans
	collect collector
	// frameOpen: a frame began since the last present.
	frameOpen atomic.Bool
	// frameEvery, from $FRAMESCOPE_FRAME_EVERY: a frame ends every this
	// many submissions, not at presents (0); submits counts them.
	frameEvery uint64
	submits    atomic.Uint64
	// boundaries: the program marked a frame's end (VK_EXT_frame_boundary).
	boundaries atomic.Bool
	// presented: the program presented; frameBegun, when the frame open
	// began (ns, timeline.Now), for the rule of programs that never
	// present (idleFrame); timedFrames, the frames that rule ended.
	presented   atomic.Bool
	frameBegun  atomic.Int64
	timedFrames atomic.Uint64
	cfg         config
	overs       atomic.Uint64  // frames found over a budget
	writing     sync.WaitGroup // their traces being written
}

var the = &layer{
	devices: map[unsafe.Pointer]*device{},
	queues:  map[unsafe.Pointer]queueOf{},
	pools:   map[uint64]uint32{},
	cmds:    map[unsafe.Pointer]*cmdState{},
}

// device is one VkDevice: what it was made with, and, from its first
// command buffer on, the profiler's view of it and a GPU context per
// queue family (on the family's first queue).
type device struct {
	handle   unsafe.Pointer
	existing profiler.Existing
	wrap     sync.Once
	dev      *profiler.Device
	err      error
	ctxMu    sync.Mutex
	ctxs     map[uint32]*profiler.GPU
}

// cmdState is one command buffer: the context its zones go to, its
// recording, its open zones and the secondaries it executes.
type cmdState struct {
	dev         *device
	pool        uint64
	family      uint32
	secondary   bool
	gpu         *profiler.GPU
	rec         profiler.Recording
	recording   bool
	open        []openZone
	secondaries []unsafe.Pointer
}

type openZone struct {
	z    profiler.Zone
	kind int
	// inside: begun inside a render pass or rendering instance; a zone
	// begun outside and ended inside one ends so (Zone.EndInRenderPass).
	inside bool
}

// Zone kinds (shim.h's FS_ZONE_*).
const (
	zoneLabel      = 1
	zoneMarker     = 2
	zoneRenderPass = 3
	zoneRendering  = 4
	zoneCommands   = 5 // a primary command buffer
	zoneSecondary  = 6 // a secondary
	zoneDraw       = 7 // a draw command, with FRAMESCOPE_DRAWS=1
	zoneDispatch   = 8 // a dispatch command, likewise
)

// kindNames are the names of the zones that are no label.
var kindNames = map[int]string{
	zoneRenderPass: "render pass",
	zoneRendering:  "rendering",
	zoneCommands:   "command buffer",
	zoneSecondary:  "secondary command buffer",
	zoneDraw:       "draw",
	zoneDispatch:   "dispatch",
}

func (l *layer) deviceCreated(instance, physical, dev unsafe.Pointer, chain profiler.Dispatch, api, flags uint32, families, counts []uint32) {
	e := profiler.Existing{
		Instance:             vkg.Instance(instance),
		Physical:             vkg.PhysicalDevice(physical),
		Device:               vkg.Device(dev),
		Dispatch:             chain,
		HostQueryReset:       flags&1 != 0,
		CalibratedTimestamps: flags&2 != 0,
		DebugUtils:           flags&4 != 0,
		Properties2:          flags&8 != 0,
		// Enabled by the layer with FRAMESCOPE_WORK=1 (framescope run
		// -work), where the device supports it.
		PipelineStatisticsQuery: flags&16 != 0,
		APIVersion:              api,
	}
	for i, f := range families {
		for q := range counts[i] {
			e.Queues = append(e.Queues, profiler.QueueID{Family: f, Index: q})
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		l.start()
		l.collect.flushing(l.p)
	}
	l.devices[dev] = &device{handle: dev, existing: e, ctxs: map[uint32]*profiler.GPU{}}
}

// wrapped returns the profiler's view of d, made on first use. The
// profiler calls Vulkan down the chain from the layer (Existing.Dispatch),
// with the handles as the layer has them: never through the loader's top,
// where the layers above may hold a lock while they call into this one,
// and never through vulkan-go's process-wide table, which another
// thread's instance would load again under a recording thread.
func (d *device) wrapped() *profiler.Device {
	d.wrap.Do(func() {
		if d.dev, d.err = profiler.WrapDevice(d.existing); d.err != nil {
			fmt.Fprintf(os.Stderr, "framescope layer: %v: its zones are not profiled\n", d.err)
		}
	})
	return d.dev
}

// recordingQueries is each command buffer's queries (a recording has
// them at once, and cannot grow): 1,023 zones, the command buffer's own
// among them; more are refused and counted (query_limit). A query costs
// about 40 bytes, so 256 command buffers at once hold about 20 MiB.
const recordingQueries = 2048

// context returns the GPU context of d's queue family, made on first use
// on the family's first queue, or nil where there is none.
func (l *layer) context(d *device, family uint32) *profiler.GPU {
	p := l.profiler()
	dev := d.wrapped()
	if p == nil || dev == nil {
		return nil // closed at the program's exit, or the device not profiled
	}
	d.ctxMu.Lock()
	defer d.ctxMu.Unlock()
	if g, ok := d.ctxs[family]; ok {
		return g
	}
	var g *profiler.GPU
	q, err := dev.Queue(family, 0)
	if err == nil {
		o := profiler.GPUOptions{FramesInFlight: 16, QueriesPerFrame: recordingQueries}
		if d.existing.PipelineStatisticsQuery {
			o.PipelineStatistics = q.Flags.PipelineStats()
		}
		g, err = p.GPU(dev, q, o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: queue family %d: %v: its zones are not profiled\n", family, err)
		g = nil
	} else {
		// Collected by the collector alone from now: once Collect is
		// called, Profiler.BeginFrame leaves the context to it; before,
		// the program's first frames collected it in their
		// vkBeginCommandBuffer (100-300 us each on an H200).
		g.Collect(nil)
		l.collect.add(g)
	}
	d.ctxs[family] = g
	return g
}

func (l *layer) deviceDestroyed(dev unsafe.Pointer) {
	l.mu.Lock()
	d := l.devices[dev]
	delete(l.devices, dev)
	for q, qd := range l.queues {
		if qd.d == d {
			delete(l.queues, q)
		}
	}
	for c, s := range l.cmds {
		if s.dev == d {
			delete(l.cmds, c)
		}
	}
	l.mu.Unlock()
	if d != nil && d.dev != nil {
		d.ctxMu.Lock()
		for _, g := range d.ctxs {
			l.collect.remove(g)
		}
		d.ctxMu.Unlock()
		d.dev.Close() // closes its contexts, collecting what the GPU finished
	}
}

// queueOf is a VkQueue's device, family and index.
type queueOf struct {
	d *device
	q profiler.Queue
}

func (l *layer) queue(dev, q unsafe.Pointer, family, index uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := l.devices[dev]; d != nil {
		l.queues[q] = queueOf{d: d, q: profiler.Queue{Family: family, Index: index}}
	}
}

func (l *layer) pool(dev unsafe.Pointer, pool uint64, family uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pools[pool] = family
}

// poolGone forgets a destroyed pool and its command buffers. A reset one
// keeps them, recorded again or freed later; those it caught in the
// middle of a recording lose it, as the driver does: their zones can never
// run (the profiler counts them abandoned). The others' recordings are
// told reset (GPU.Reset): past the library's 256 recordings, a command
// buffer begun takes over one of theirs rather than be refused.
func (l *layer) poolGone(dev unsafe.Pointer, pool uint64, destroyed bool) {
	idle := submits.Get().(*submitBatch) // by context, one call each
	defer submits.Put(idle)
	l.mu.Lock()
	var gone, reset []unsafe.Pointer
	for c, s := range l.cmds {
		switch {
		case s.pool != pool || s.dev != l.devices[dev]:
		case destroyed:
			gone = append(gone, c)
		case s.recording:
			reset = append(reset, c)
		case s.gpu != nil:
			idle.add(s.gpu, c)
		}
	}
	if destroyed {
		delete(l.pools, pool)
	}
	l.mu.Unlock()
	for _, c := range reset { // the program holds the pool, and so these
		s := l.state(c)
		if s == nil || s.gpu == nil {
			continue
		}
		s.open, s.recording = s.open[:0], false
		s.gpu.Freed(vkg.CommandBuffer(c))
	}
	for i, g := range idle.gpus { // ended and reset: their recordings' slots may serve others
		g.Reset(idle.cmds[i]...)
	}
	idle.reset()
	l.freed(gone)
}

func (l *layer) allocated(dev unsafe.Pointer, pool uint64, cmds []unsafe.Pointer, secondary bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.devices[dev]
	family, ok := l.pools[pool]
	if d == nil || !ok {
		return
	}
	for _, c := range cmds {
		l.cmds[c] = &cmdState{dev: d, pool: pool, family: family, secondary: secondary}
	}
}

// freed forgets command buffers the program frees, and tells their
// contexts, which drop their recordings (GPU.Freed).
func (l *layer) freed(cmds []unsafe.Pointer) {
	type freedCmd struct {
		g   *profiler.GPU
		cmd unsafe.Pointer
	}
	var tell []freedCmd
	l.mu.Lock()
	for _, c := range cmds {
		if s := l.cmds[c]; s != nil && s.gpu != nil {
			tell = append(tell, freedCmd{s.gpu, c})
		}
		delete(l.cmds, c)
	}
	l.mu.Unlock()
	for _, f := range tell {
		f.g.Freed(vkg.CommandBuffer(f.cmd))
	}
}

func (l *layer) state(cmd unsafe.Pointer) *cmdState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cmds[cmd]
}
