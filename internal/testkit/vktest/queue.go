package vktest

import (
	"runtime"
	"sync"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Queue records and submits command buffers on one queue, for tests.
// Everything it creates is destroyed at the test's cleanup.
type Queue struct {
	tb     testing.TB
	Dev    *vk.Device
	Q      vk.Queue
	pool   vkg.CommandPool
	fences []vkg.Fence
	events []vkg.Event
	gone   bool // Destroy ran
	// Lock, when set, is held around every call that Vulkan wants the
	// queue externally synchronized for (vkQueueSubmit, vkDeviceWaitIdle):
	// the lock the test gives the profiler as GPUOptions.FallbackLock.
	Lock sync.Locker
}

func (q *Queue) lock() {
	if q.Lock != nil {
		q.Lock.Lock()
	}
}

func (q *Queue) unlock() {
	if q.Lock != nil {
		q.Lock.Unlock()
	}
}

// NewQueue makes a command pool on q's family.
func NewQueue(tb testing.TB, dev *vk.Device, q vk.Queue) *Queue {
	tb.Helper()
	ci := vkg.CommandPoolCreateInfo{
		SType:            vkg.StructureTypeCommandPoolCreateInfo,
		Flags:            vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit),
		QueueFamilyIndex: q.Family,
	}
	var pool vkg.CommandPool
	if r := vkg.CreateCommandPool(dev.Handle, &ci, nil, &pool); r != vkg.Success {
		tb.Fatalf("vkCreateCommandPool: %v", vkg.Error(r))
	}
	tq := &Queue{tb: tb, Dev: dev, Q: q, pool: pool}
	tb.Cleanup(tq.Destroy)
	return tq
}

// Destroy waits for the device to go idle and destroys the queue's command
// pool (and its command buffers), fences and events: for tests that close
// the device themselves. The test's cleanup calls it too; a second call
// does nothing.
func (q *Queue) Destroy() {
	if q.gone {
		return
	}
	q.gone = true
	if q.Dev.Closed() {
		q.tb.Errorf("vktest: the device was closed before the queue's objects were destroyed: call Queue.Destroy first")
		return
	}
	h := q.Dev.Handle
	q.lock()
	vkg.DeviceWaitIdle(h)
	q.unlock()
	for _, f := range q.fences {
		vkg.DestroyFence(h, f, nil)
	}
	for _, e := range q.events {
		vkg.DestroyEvent(h, e, nil)
	}
	vkg.DestroyCommandPool(h, q.pool, nil)
	q.fences, q.events = nil, nil
}

// Graphics opens a device (Open) and returns its first graphics queue.
func Graphics(tb testing.TB, cfg vk.Config) *Queue {
	tb.Helper()
	d := Open(tb, cfg)
	q, ok := d.QueueFor("graphics")
	if !ok {
		q = d.Queues[0]
	}
	return NewQueue(tb, d, q)
}

// Cmds allocates n primary command buffers, each begun for one-time submit.
func (q *Queue) Cmds(n int) []vkg.CommandBuffer {
	q.tb.Helper()
	cmds := q.alloc(vkg.CommandBufferLevelPrimary, n)
	for _, c := range cmds {
		q.Begin(c)
	}
	return cmds
}

// Secondaries allocates n secondary command buffers, not begun: see
// BeginSecondary.
func (q *Queue) Secondaries(n int) []vkg.CommandBuffer {
	q.tb.Helper()
	return q.alloc(vkg.CommandBufferLevelSecondary, n)
}

// alloc allocates n command buffers of level from the queue's pool.
func (q *Queue) alloc(level vkg.CommandBufferLevel, n int) []vkg.CommandBuffer {
	q.tb.Helper()
	ai := vkg.CommandBufferAllocateInfo{
		SType:              vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        q.pool,
		Level:              level,
		CommandBufferCount: uint32(n),
	}
	cmds := make([]vkg.CommandBuffer, n)
	if r := vkg.AllocateCommandBuffers(q.Dev.Handle, &ai, cmds); r != vkg.Success {
		q.tb.Fatalf("vkAllocateCommandBuffers: %v", vkg.Error(r))
	}
	return cmds
}

// BeginSecondary begins a secondary command buffer for one-time submit,
// to be executed outside a render pass.
func (q *Queue) BeginSecondary(cmd vkg.CommandBuffer) {
	q.tb.Helper()
	q.BeginSecondaryWith(cmd, vkg.CommandBufferUsageOneTimeSubmitBit)
}

// BeginSecondaryWith begins a secondary command buffer with the usage
// flags given, to be executed outside a render pass.
func (q *Queue) BeginSecondaryWith(cmd vkg.CommandBuffer, flags vkg.CommandBufferUsageFlagBits) {
	q.tb.Helper()
	bi := &vkg.CommandBufferBeginInfo{
		SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(flags),
		PInheritanceInfo: []vkg.CommandBufferInheritanceInfo{{
			SType: vkg.StructureTypeCommandBufferInheritanceInfo,
		}},
	}
	r := vkg.BeginCommandBuffer(cmd, bi)
	runtime.KeepAlive(bi) // its C copy is freed with it
	if r != vkg.Success {
		q.tb.Fatalf("vkBeginCommandBuffer (secondary): %v", vkg.Error(r))
	}
}

// Execute ends the secondaries and records their execution into primary.
func (q *Queue) Execute(primary vkg.CommandBuffer, secondaries ...vkg.CommandBuffer) {
	q.tb.Helper()
	for _, c := range secondaries {
		if r := vkg.EndCommandBuffer(c); r != vkg.Success {
			q.tb.Fatalf("vkEndCommandBuffer (secondary): %v", vkg.Error(r))
		}
	}
	vkg.CmdExecuteCommands(primary, uint32(len(secondaries)), secondaries)
}

// Cmd allocates one begun command buffer.
func (q *Queue) Cmd() vkg.CommandBuffer { return q.Cmds(1)[0] }

// Begin begins (or, after a reset, re-begins) cmd for one-time submit.
func (q *Queue) Begin(cmd vkg.CommandBuffer) {
	q.tb.Helper()
	q.BeginWith(cmd, vkg.CommandBufferUsageOneTimeSubmitBit)
}

// BeginWith begins (or re-begins) cmd with the usage flags given: 0 for a
// command buffer submitted many times, one at a time;
// SIMULTANEOUS_USE for one that may be pending more than once.
func (q *Queue) BeginWith(cmd vkg.CommandBuffer, flags vkg.CommandBufferUsageFlagBits) {
	q.tb.Helper()
	bi := vkg.CommandBufferBeginInfo{
		SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(flags),
	}
	if r := vkg.BeginCommandBuffer(cmd, &bi); r != vkg.Success {
		q.tb.Fatalf("vkBeginCommandBuffer: %v", vkg.Error(r))
	}
}

// Free frees command buffers the GPU is done with.
func (q *Queue) Free(cmds ...vkg.CommandBuffer) {
	vkg.FreeCommandBuffers(q.Dev.Handle, q.pool, uint32(len(cmds)), cmds)
}

// Fence makes an unsignalled fence.
func (q *Queue) Fence() vkg.Fence {
	q.tb.Helper()
	ci := vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}
	var f vkg.Fence
	if r := vkg.CreateFence(q.Dev.Handle, &ci, nil, &f); r != vkg.Success {
		q.tb.Fatalf("vkCreateFence: %v", vkg.Error(r))
	}
	q.fences = append(q.fences, f)
	return f
}

// Event makes an unset event.
func (q *Queue) Event() vkg.Event {
	q.tb.Helper()
	ci := vkg.EventCreateInfo{SType: vkg.StructureTypeEventCreateInfo}
	var e vkg.Event
	if r := vkg.CreateEvent(q.Dev.Handle, &ci, nil, &e); r != vkg.Success {
		q.tb.Fatalf("vkCreateEvent: %v", vkg.Error(r))
	}
	q.events = append(q.events, e)
	return e
}

// Submit ends the command buffers and submits them in one batch, signalling
// fence (which may be nil).
func (q *Queue) Submit(fence vkg.Fence, cmds ...vkg.CommandBuffer) {
	q.tb.Helper()
	q.End(cmds...)
	q.Resubmit(fence, cmds...)
}

// End ends the command buffers' recording.
func (q *Queue) End(cmds ...vkg.CommandBuffer) {
	q.tb.Helper()
	for _, c := range cmds {
		if r := vkg.EndCommandBuffer(c); r != vkg.Success {
			q.tb.Fatalf("vkEndCommandBuffer: %v", vkg.Error(r))
		}
	}
}

// Resubmit submits command buffers already recorded (ended), in one
// batch, signalling fence (which may be nil).
func (q *Queue) Resubmit(fence vkg.Fence, cmds ...vkg.CommandBuffer) {
	q.tb.Helper()
	q.lock()
	err := q.Dev.QueueSubmit(q.Q.Handle, cmds, fence)
	q.unlock()
	if err != nil {
		q.tb.Fatal(err)
	}
}

// Wait waits for fences (up to 10 s each) and resets them.
func (q *Queue) Wait(fences ...vkg.Fence) {
	q.tb.Helper()
	if r := vkg.WaitForFences(q.Dev.Handle, uint32(len(fences)), fences, vkg.True, 10e9); r != vkg.Success {
		q.tb.Fatalf("vkWaitForFences: %v", vkg.Error(r))
	}
	vkg.ResetFences(q.Dev.Handle, uint32(len(fences)), fences)
}

// SubmitWait submits and waits for completion.
func (q *Queue) SubmitWait(cmds ...vkg.CommandBuffer) {
	q.tb.Helper()
	f := q.Fence()
	q.Submit(f, cmds...)
	q.Wait(f)
}

// WaitEvent records a wait on ev, set by the host, before all later commands.
func (q *Queue) WaitEvent(cmd vkg.CommandBuffer, ev vkg.Event) { q.Dev.CmdWaitEvent(cmd, ev) }
