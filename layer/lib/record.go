package main

/*
#include <stdint.h>
#include <string.h>
*/
import "C"

import (
	"sync"
	"time"
	"unsafe"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// renderPassContinue is VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT:
// a secondary that runs wholly inside a render pass, where a recording's
// query reset may not be recorded; oneTimeSubmit,
// VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT: the program runs the
// command buffer once a recording, so that on a transfer-only queue
// (which may not record a recording's copy) its zones are timed all the
// same (GPU.RecordOnce).
const (
	renderPassContinue = 0x2
	oneTimeSubmit      = 0x1
)

// cmdBegin makes every command buffer a recording: the layer cannot know
// whether the program will submit it once or every frame, and a
// recording is timed at each execution either way. It returns the
// recording's zone path for the C half (Recording.C), which records the
// command buffer's zones with no call into Go, or nil.
func (l *layer) cmdBegin(cmd unsafe.Pointer, flags uint32) unsafe.Pointer {
	s := l.state(cmd)
	if s == nil {
		return nil
	}
	l.inFrame()
	if s.recording && s.gpu != nil {
		// Begun again without an end: Vulkan allows that only after a
		// reset (vkResetCommandBuffer), so its recording was lost with it.
		s.gpu.Freed(vkg.CommandBuffer(cmd))
	}
	s.open, s.secondaries, s.recording = s.open[:0], s.secondaries[:0], false
	if s.gpu = l.context(s.dev, s.family); s.gpu == nil {
		return nil
	}
	if s.secondary && flags&renderPassContinue != 0 {
		// Its zones go through Zone, which refuses them and counts them
		// at each execution.
		s.gpu.RecordUntimed(vkg.CommandBuffer(cmd))
		return nil
	}
	if flags&oneTimeSubmit != 0 {
		s.rec = s.gpu.RecordOnce(vkg.CommandBuffer(cmd))
	} else {
		s.rec = s.gpu.Record(vkg.CommandBuffer(cmd))
	}
	s.recording = true
	return s.rec.C()
}

// name is the name of a zone of kind with label, for the C half.
func (l *layer) name(label *C.char, kind int) profiler.Name {
	p := l.profiler()
	if p == nil {
		return ^profiler.Name(0)
	}
	if n, ok := kindNames[kind]; ok {
		return l.names.own(n, p)
	}
	return l.names.ofC(label, p)
}

// cmdEnd ends the zones still open through Go but labels, then the
// recording. A primary's labels still open span command buffers (Vulkan
// lets a later one of the queue end them): the recording carries them
// (Recording.EndKeepingOpen), and a later command buffer's end of a label
// it did not begin ends the innermost (zoneEnd). A secondary may not
// leave a label open: its recording counts one left so (unended).
func (l *layer) cmdEnd(cmd unsafe.Pointer) {
	s := l.state(cmd)
	if s == nil {
		return
	}
	for i := len(s.open) - 1; i >= 0; i-- {
		if k := s.open[i].kind; k != zoneLabel && k != zoneMarker {
			s.open[i].z.End()
		}
	}
	s.open = s.open[:0]
	switch {
	case !s.recording:
	case s.secondary:
		s.rec.End()
	default:
		s.rec.EndKeepingOpen()
	}
	s.recording = false
}

// execute notes the secondaries a primary executes, before it does (none:
// a render pass whose contents they will be begins): where the context
// counts work, the primary's counts end first (GPU.BeforeSecondaries).
func (l *layer) execute(primary unsafe.Pointer, secondaries []unsafe.Pointer) {
	if s := l.state(primary); s != nil {
		s.secondaries = append(s.secondaries, secondaries...)
		if s.recording {
			s.gpu.BeforeSecondaries(vkg.CommandBuffer(primary))
		}
	}
}

// statsQuery tells the command buffer's context that the program begins
// (begun) or ended a pipeline statistics query of its own in it: where
// the context counts work, its counts there end first, and none begins
// until the program's ends (GPU.BeforeStatisticsQuery).
func (l *layer) statsQuery(cmd unsafe.Pointer, begun bool) {
	s := l.state(cmd)
	if s == nil || s.gpu == nil {
		return
	}
	if begun {
		s.gpu.BeforeStatisticsQuery(vkg.CommandBuffer(cmd))
	} else {
		s.gpu.AfterStatisticsQuery(vkg.CommandBuffer(cmd))
	}
}

// zoneBegin begins a zone the C half could not: past its stack, refused
// by the recording's zone path, or in a command buffer that is no
// recording (a secondary that continues a render pass), where Zone
// refuses it and counts it (no_frame); and, where the context counts
// each zone's work (framescope run -work), every zone, with the zone path
// off. A zone begun inside a render pass or rendering instance says so
// (ZoneInRenderPass): a statistics query begun outside one may not end
// inside it.
func (l *layer) zoneBegin(cmd unsafe.Pointer, label *C.char, kind int) {
	s := l.state(cmd)
	if s == nil || s.gpu == nil {
		return // no context: the device could not be profiled, as the layer said
	}
	name := l.name(label, kind)
	var z profiler.Zone
	inside := s.inRenderPass(-1)
	if inside {
		z = s.gpu.ZoneInRenderPass(vkg.CommandBuffer(cmd), name)
	} else {
		z = s.gpu.Zone(vkg.CommandBuffer(cmd), name)
	}
	s.open = append(s.open, openZone{z: z, kind: kind, inside: inside})
}

// inRenderPass reports whether a render pass or rendering instance is
// open among the command buffer's zones through Go, but the zone at
// index but.
func (s *cmdState) inRenderPass(but int) bool {
	for i, o := range s.open {
		if i != but && (o.kind == zoneRenderPass || o.kind == zoneRendering) {
			return true
		}
	}
	return false
}

// endAt ends the open zone at index i: inside a render pass or rendering
// instance it was not begun in, as Vulkan lets a label end there.
func (s *cmdState) endAt(i int) {
	if o := s.open[i]; !o.inside && s.inRenderPass(i) {
		o.z.EndInRenderPass()
	} else {
		o.z.End()
	}
}

// zoneEnd ends the innermost open zone of kind: labels and render passes
// may interleave, zones may not, and the profiler counts what that
// breaks. The end of a label the command buffer has not begun, in a
// primary, ends one an earlier command buffer of the queue left open
// (Recording.EndCarried).
func (l *layer) zoneEnd(cmd unsafe.Pointer, kind int) {
	s := l.state(cmd)
	if s == nil {
		return
	}
	for i := len(s.open) - 1; i >= 0; i-- {
		if s.open[i].kind == kind {
			s.endAt(i)
			s.open = append(s.open[:i], s.open[i+1:]...)
			return
		}
	}
	if kind == zoneLabel && s.recording && !s.secondary {
		s.rec.EndCarried()
	}
}

// submitBegin begins the span of a submission on thread tid (cpuEnd
// ends it) and names its command buffers (submit): one call into Go
// before the driver's vkQueueSubmit, where there were two.
func (l *layer) submitBegin(queue unsafe.Pointer, tid int, cmds []unsafe.Pointer) uint64 {
	id, sp := l.cpuSpanBegin(cpuSubmit, tid)
	if id != 0 {
		l.submit(queue, sp, cmds)
	}
	return id
}

// submit names the submission's command buffers, and the secondaries
// they execute, to their contexts, with the submit span's arrow, as run
// on queue: a context is a family's, and its zones go on the track of
// the queue that ran them (GPU.SubmitOn). It runs inside the program's
// vkQueueSubmit, and allocates nothing once its scratch has grown to the
// program's submissions.
func (l *layer) submit(queue unsafe.Pointer, sp profiler.Span, cmds []unsafe.Pointer) {
	b := submits.Get().(*submitBatch)
	l.mu.Lock()
	q := l.queues[queue].q // unknown: the zero Queue, which SubmitOn takes as the context's own
	for _, c := range cmds {
		s := l.cmds[c]
		if s == nil || s.gpu == nil {
			continue
		}
		b.add(s.gpu, c)
		for _, sec := range s.secondaries {
			if t := l.cmds[sec]; t != nil && t.gpu != nil {
				b.add(t.gpu, sec)
			}
		}
	}
	l.mu.Unlock()
	for i, g := range b.gpus {
		g.SubmitOn(q, sp, b.cmds[i]...)
	}
	b.reset()
	submits.Put(b)
}

// submitBatch is command buffers by context: a submission's, or those
// of a pool reset (poolGone).
type submitBatch struct {
	gpus []*profiler.GPU
	cmds [][]vkg.CommandBuffer
}

var submits = sync.Pool{New: func() any { return new(submitBatch) }}

func (b *submitBatch) add(g *profiler.GPU, c unsafe.Pointer) {
	i := 0
	for i < len(b.gpus) && b.gpus[i] != g {
		i++
	}
	if i == len(b.gpus) {
		b.gpus = append(b.gpus, g)
		if i == len(b.cmds) {
			b.cmds = append(b.cmds, nil)
		}
	}
	b.cmds[i] = append(b.cmds[i], vkg.CommandBuffer(c))
}

func (b *submitBatch) reset() {
	for i := range b.gpus {
		b.gpus[i], b.cmds[i] = nil, b.cmds[i][:0]
	}
	b.gpus = b.gpus[:0]
}

// present ends the frame: a frame per vkQueuePresentKHR, from the first
// acquire, recording or submission after the last present (waits
// between frames belong to none); with $FRAMESCOPE_FRAME_EVERY=N, every
// N submissions instead; in a program that marks its frames' ends
// (VK_EXT_frame_boundary), at those marks instead (boundary).
func (l *layer) present(queue unsafe.Pointer) {
	l.presented.Store(true)
	if l.frameEvery == 0 && !l.boundaries.Load() {
		l.endFrame()
	}
}

// boundary ends the frame at a frame end the program marked: from the
// first, its presents end none (a program that marks its frames renders
// offscreen, or presents more than once a frame); -frame-every still
// rules where given.
func (l *layer) boundary() {
	l.boundaries.Store(true)
	if l.frameEvery == 0 {
		l.endFrame()
	}
}

// timedFrame is the frame of a program that neither presents nor marks
// its frames, without -frame-every: a frame ends at the first submission
// that ends timedFrame or more after it began; the first, firstTimed
// (a program that presents sets up in less, and keeps its frames as its
// presents make them). (Before, such a program was one frame: nothing was
// streamed until its exit, and its spans and arrows outgrew the
// recorder's bounds.)
const (
	timedFrame = 100 * time.Millisecond
	firstTimed = time.Second
)

// submitted ends the frame where a submission ends one: every
// -frame-every submissions, or, in a program that has not presented nor
// marked a frame, by timedFrame.
func (l *layer) submitted() {
	switch {
	case l.frameEvery > 0:
		if l.submits.Add(1)%l.frameEvery == 0 {
			l.endFrame()
		}
	case l.presented.Load() || l.boundaries.Load():
	default:
		age, most := timeline.Now()-l.frameBegun.Load(), timedFrame
		if l.timedFrames.Load() == 0 {
			most = l.cfg.firstTimed
		}
		if age >= int64(most) {
			l.timedFrames.Add(1)
			l.endFrame()
		}
	}
}

// endFrame ends the frame open, or an empty one.
func (l *layer) endFrame() {
	p := l.profiler()
	if p == nil {
		return
	}
	l.inFrame()
	if l.frameOpen.Swap(false) {
		p.EndFrame()
		l.collect.ended()
	}
}

// inFrame begins a frame if none is open.
func (l *layer) inFrame() {
	if p := l.profiler(); p != nil && l.frameOpen.CompareAndSwap(false, true) {
		l.frameBegun.Store(timeline.Now())
		p.BeginFrame()
	}
}

func (l *layer) profiler() *profiler.Profiler {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p
}

// names are the zone names the layer registered: each once, at most
// maxNames distinct labels (a program that labels with a counter in the
// text would grow them without bound), the rest sharing otherName; the
// layer's own names (kindNames, otherName) besides, never under the cap.
type names struct {
	mu     sync.Mutex
	ids    map[string]profiler.Name
	labels int // of ids, the labels'
}

const (
	maxNames  = 4096
	otherName = "(other labels)"
)

// of is the name of label s.
func (n *names) of(s string, p *profiler.Profiler) profiler.Name {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.ids[s]; ok {
		return id
	}
	if n.labels >= maxNames {
		return n.ownLocked(otherName, p)
	}
	n.labels++
	return n.ownLocked(s, p)
}

// own is the name of one of the layer's own zones (kindNames).
func (n *names) own(s string, p *profiler.Profiler) profiler.Name {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ownLocked(s, p)
}

func (n *names) ownLocked(s string, p *profiler.Profiler) profiler.Name {
	if id, ok := n.ids[s]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = map[string]profiler.Name{}
	}
	id := p.Name(s)
	n.ids[s] = id
	return id
}

// ofC is of for a label's C string, without a Go string for one seen
// before.
func (n *names) ofC(label *C.char, p *profiler.Profiler) profiler.Name {
	if label == nil {
		return n.own("(no name)", p)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(label)), C.strlen(label))
	n.mu.Lock()
	id, ok := n.ids[string(b)]
	full := n.labels >= maxNames
	n.mu.Unlock()
	switch {
	case ok:
		return id
	case full: // no Go string made for a label past the cap
		return n.own(otherName, p)
	}
	return n.of(string(b), p)
}
