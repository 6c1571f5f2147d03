package profiler

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/framescope/framescope/internal/querypool"

	vkg "github.com/vulkan-go/vulkan"
)

// Recording is a command buffer recorded once and submitted many times: a
// small value, ended once with End.
type Recording struct {
	g   *GPU
	cmd vkg.CommandBuffer
}

// Record makes cmd, just begun (vkBeginCommandBuffer) and outside a render
// pass, a recording: a command buffer the application submits again
// without recording it again, such as one per swapchain image recorded at
// start-up, or a static one beside those recorded every frame. Its zones
// are timed at every execution, each execution in the frame of the
// Submit that names cmd, with that submission's arrow:
//
//	rec := gpu.Record(cmd) // once per recording, not per frame
//	gpu.Zone(cmd, draw).End()
//	rec.End()              // before vkEndCommandBuffer
//	...
//	gpu.Submit(s, cmd)     // every frame that submits it
//
// Record records the reset of the recording's queries into cmd, and End
// the copy of their results, so that each execution writes and copies its
// own; the application calls neither BeginFrame nor EndFrame for it.
// Recording cmd again begins with Record again. A recording should not
// run twice at once (a command buffer with the simultaneous-use flag
// pending twice): each execution resets and writes the same queries and
// copies them to the same memory, so one's results may be another's. An
// execution still running when the next is submitted, and every later
// one until the application has waited for a frame with no older one in
// flight, loses its zones, counted as [timeline.Drops].Overlapped: never
// given another execution's times. One submitted every frame with more
// than one frame in flight loses nearly all: give each frame in flight a
// recording of its own. An execution named by Submit that never
// runs is counted Unsubmitted; one submitted without Submit is not seen,
// and the next execution's results may be taken for it. Zones in a
// recording must end in it (but see EndKeepingOpen). With
// GPUOptions.PipelineStatistics, each execution's zones have the work
// they did, as a frame's do. Record refuses, keeping the error for
// [GPU.Err], on a transfer-only queue
// (but see RecordOnce), and past 256 recordings, where none of them is
// of a command buffer reset since (see Reset): the zones recorded into
// cmd until End are then refused and counted (NoFrame), once for each
// execution of cmd that Submit names.
func (g *GPU) Record(cmd vkg.CommandBuffer) Recording {
	return g.record(cmd, false)
}

// RecordOnce is Record for a command buffer that runs once each time it
// is recorded: begun with VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
// which is the caller's promise. On a transfer-only queue, which may not
// record the copy of a recording's results, it is then timed all the same
// where the device has host query reset (Existing.HostQueryReset, or a
// device the profiler made): its queries are reset on the host here and
// read through the driver after its execution. On other queues it is
// Record.
func (g *GPU) RecordOnce(cmd vkg.CommandBuffer) Recording {
	return g.record(cmd, true)
}

func (g *GPU) record(cmd vkg.CommandBuffer, once bool) Recording {
	if g == nil || g.state.Load() != stateOpen {
		return Recording{}
	}
	begin, what := g.pool.BeginRecording, "Record"
	if once {
		begin, what = g.pool.BeginRecordingOnce, "RecordOnce"
	}
	if err := begin(cmd); err != nil {
		g.keep(fmt.Errorf("profiler: %s: %w", what, g.poolErr(err)))
	}
	return Recording{g: g, cmd: cmd}
}

// End ends the recording: it records the copy of its results into the
// command buffer, which must be outside a render pass, before
// vkEndCommandBuffer. Zones of the recording still open will never be
// timed (Unended). Ending the zero Recording does nothing.
func (r Recording) End() {
	if r.g == nil || r.g.state.Load() != stateOpen {
		return
	}
	r.g.pool.EndRecording(r.cmd)
	// Its zone path (C) is kept for the command buffer's next recording,
	// which takes it again: freed with the command buffer (Freed) or the
	// context. C may not use it from End on, and its slot refuses it.
}

// EndKeepingOpen is End, but the recording's zones still open are carried
// onto its queue rather than left unended: Vulkan lets a debug label
// begun in a primary command buffer end in a later one submitted to the
// same queue, as engines label a frame. A later recording's EndCarried
// ends them, innermost first, in the order the two are submitted to the
// queue (Submit, or SubmitOn for another queue of the family): each
// execution of this recording carries its own, which the next executions
// of EndCarried on that queue end. A carried zone is timed from its begin
// in one command buffer to its end in another, the work between them on
// the queue included, and lies on a lane of the queue's track, for it
// crosses its command buffers' zones. One that nothing ends is counted
// Unended, as are those of an execution named before End, and the oldest
// once 64 are carried at once. Ending the zero Recording does nothing.
func (r Recording) EndKeepingOpen() {
	if r.g == nil || r.g.state.Load() != stateOpen {
		return
	}
	r.g.pool.EndRecordingCarry(r.cmd)
}

// EndCarried records, at this point of the recording (a primary command
// buffer, outside a render pass or in one), the end of the innermost zone
// carried on the queue (EndKeepingOpen) when the command buffer runs.
// Where none is carried then, it ends nothing, and nothing is counted;
// likewise for a recording Record refused. It is no zone: the zone
// carried is the one counted.
func (r Recording) EndCarried() {
	if r.g == nil || r.g.state.Load() != stateOpen {
		return
	}
	r.g.pool.EndCarried(r.cmd, r.g.end)
}

// C returns the recording's zone path for C code in the process that
// records zones into its command buffer itself, with no call into Go a
// zone (Framescope's Vulkan layer does): a pointer to a
// framescope_czones, declared in framescope_czones.h in this package's
// directory. It is valid until End, on the thread recording the command
// buffer, and not after the context closes. A zone begun through it ends
// through it; one it refuses (a negative pair) goes through Zone. C
// returns nil where zones must go through Zone: the context mirrors
// debug labels or counts pipeline statistics, or Record was refused.
func (r Recording) C() unsafe.Pointer {
	g := r.g
	if g == nil || g.state.Load() != stateOpen || g.extra {
		return nil
	}
	g.czMu.Lock()
	defer g.czMu.Unlock()
	old := g.czones[r.cmd]
	c := g.pool.NewCZones(r.cmd, g.begin, g.end, old)
	if c == old {
		if c == nil {
			return nil
		}
		return c.Ptr() // recorded again into the same slot
	}
	if c == nil {
		return nil // old stays, freed with the recording (GPU.Freed) or the context
	}
	if old != nil {
		old.Free()
	}
	if g.czones == nil {
		g.czones = map[vkg.CommandBuffer]*querypool.CZones{}
	}
	g.czones[r.cmd] = c
	return c.Ptr()
}

// freeCZones frees the zone path C was handed for cmd, or, for nil (the
// context closing), keeps them all, valid, for good: the thread that
// records cmd may be in one still, as at a process's exit, when C code
// closes the profiler while another thread records. Their slots are
// closed, so that a begin through them is refused (and goes to Zone,
// which refuses and counts it) and an end comes too late; it is C's
// memory that must stay. At most a context's recordings stay so, once.
func (g *GPU) freeCZones(cmd vkg.CommandBuffer) {
	g.czMu.Lock()
	defer g.czMu.Unlock()
	if cmd != nil {
		if c := g.czones[cmd]; c != nil {
			c.Free()
			delete(g.czones, cmd)
		}
		return
	}
	closedCZones.Lock()
	defer closedCZones.Unlock()
	for k, c := range g.czones {
		closedCZones.kept = append(closedCZones.kept, c)
		delete(g.czones, k)
	}
}

// closedCZones are the zone paths of closed contexts, kept (freeCZones).
var closedCZones struct {
	sync.Mutex
	kept []*querypool.CZones
}

// RecordUntimed tells the profiler that cmd, just begun
// (vkBeginCommandBuffer), is recorded in a way that lets none of its
// zones be timed: a secondary that continues a render pass
// (VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT), into which neither
// a recording's query reset nor its copy may be recorded. Its zones are
// refused, and counted (Drops.NoFrame) once for each execution Submit
// names (a secondary's, where the primaries that execute it are
// submitted), until it is recorded again or freed. Without it such a
// command buffer's zones are counted once, however often it runs.
func (g *GPU) RecordUntimed(cmd vkg.CommandBuffer) {
	if g == nil || g.state.Load() != stateOpen {
		return
	}
	if err := g.pool.BeginUntimed(cmd); err != nil {
		g.keep(fmt.Errorf("profiler: RecordUntimed: %w", g.poolErr(err)))
	}
}

// Reset tells the profiler that the application reset cmds
// (vkResetCommandPool, or vkResetCommandBuffer) after it ended their
// recordings: none of their executions is pending, and none runs again
// until recorded again. A recording among them keeps what it has for its
// next Record; but where a context keeps its 256 recordings, a Record of
// another command buffer takes over one so reset (its last execution
// read first) rather than be refused, so that a program that resets its
// pools and allocates command buffers afresh is timed however many it
// keeps. Command buffers without recordings, or reset while recorded
// (call Freed for those), are left as they are.
func (g *GPU) Reset(cmds ...vkg.CommandBuffer) {
	if g == nil || g.state.Load() != stateOpen {
		return
	}
	g.pool.Reset(cmds...)
}

// Freed tells the profiler that the application frees cmds
// (vkFreeCommandBuffers, or vkDestroyCommandPool, which frees its
// command buffers), before it does: a recording among them has its last
// execution read and is dropped, so that a program that records command
// buffers as recordings and frees them keeps within the 256 recordings a
// context keeps at once. Command buffers without recordings need no call.
// Call it too for a command buffer reset while it was being recorded as a
// recording (vkResetCommandBuffer, or vkResetCommandPool): its zones can
// never run, and are counted as Drops.Abandoned.
func (g *GPU) Freed(cmds ...vkg.CommandBuffer) {
	if g == nil || g.state.Load() != stateOpen {
		return
	}
	for _, c := range cmds {
		g.freeCZones(c)
		g.pool.Freed(c)
	}
}
