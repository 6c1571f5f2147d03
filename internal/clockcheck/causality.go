package clockcheck

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	vkg "github.com/vulkan-go/vulkan"
)

// causalityRig: a command buffer that waits on an event, then writes a
// timestamp. The host reads its clock, sets the event, and the timestamp,
// converted, must not be earlier than that reading.
type causalityRig struct {
	dev   *vk.Device
	q     profiler.Queue
	pool  vkg.CommandPool
	cmd   vkg.CommandBuffer
	qp    vkg.QueryPool
	ev    vkg.Event
	fence vkg.Fence
}

func newCausalityRig(d *vk.Device, q profiler.Queue) (*causalityRig, error) {
	r := &causalityRig{dev: d, q: q}
	h := d.Handle
	var cp vkg.CommandPool
	if res := vkg.CreateCommandPool(h, &vkg.CommandPoolCreateInfo{SType: vkg.StructureTypeCommandPoolCreateInfo,
		Flags: vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit), QueueFamilyIndex: q.Family}, nil, &cp); res != vkg.Success {
		return nil, vkg.Error(res)
	}
	r.pool = cp
	cmds := make([]vkg.CommandBuffer, 1)
	if res := vkg.AllocateCommandBuffers(h, &vkg.CommandBufferAllocateInfo{SType: vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool: cp, Level: vkg.CommandBufferLevelPrimary, CommandBufferCount: 1}, cmds); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.cmd = cmds[0]
	var qp vkg.QueryPool
	if res := vkg.CreateQueryPool(h, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 1}, nil, &qp); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.qp = qp
	var ev vkg.Event
	if res := vkg.CreateEvent(h, &vkg.EventCreateInfo{SType: vkg.StructureTypeEventCreateInfo}, nil, &ev); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.ev = ev
	var f vkg.Fence
	if res := vkg.CreateFence(h, &vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}, nil, &f); res != vkg.Success {
		r.destroy()
		return nil, vkg.Error(res)
	}
	r.fence = f
	return r, nil
}

// try runs one causality try and returns converted GPU time minus the host
// time read just before vkSetEvent (negative: a violation).
func (r *causalityRig) try(m *clock.Model, now func() int64) (int64, error) {
	h := r.dev.Handle
	vkg.ResetCommandBuffer(r.cmd, 0)
	vkg.BeginCommandBuffer(r.cmd, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit)})
	vkg.CmdResetQueryPool(r.cmd, r.qp, 0, 1)
	r.dev.CmdWaitEvent(r.cmd, r.ev)
	// BOTTOM_OF_PIPE: a TOP_OF_PIPE write may run ahead of the wait (seen on NVIDIA).
	vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageBottomOfPipeBit, r.qp, 0)
	if res := vkg.EndCommandBuffer(r.cmd); res != vkg.Success {
		return 0, vkg.Error(res)
	}
	vkg.ResetEvent(h, r.ev)
	if err := r.dev.QueueSubmit(r.q.Handle, []vkg.CommandBuffer{r.cmd}, r.fence); err != nil {
		return 0, err
	}
	time.Sleep(200 * time.Microsecond) // let the GPU reach the wait
	set := now()
	vkg.SetEvent(h, r.ev)
	if res := vkg.WaitForFences(h, 1, []vkg.Fence{r.fence}, vkg.True, uint64(5*time.Second)); res != vkg.Success {
		return 0, fmt.Errorf("waiting for the causality probe: %w", vkg.Error(res))
	}
	vkg.ResetFences(h, 1, []vkg.Fence{r.fence})
	var res [2]uint64
	if rc := vkg.GetQueryPoolResults(h, r.qp, 0, 1, 16, unsafe.Pointer(&res[0]), 16,
		vkg.QueryResultFlags(vkg.QueryResult64Bit|vkg.QueryResultWithAvailabilityBit)); rc != vkg.Success || res[1] == 0 {
		return 0, fmt.Errorf("causality timestamp unavailable (%v)", vkg.Error(rc))
	}
	host, _, ok := m.Convert(res[0], set)
	if !ok {
		return 0, errors.New("no calibration to convert with")
	}
	return host - set, nil
}

func (r *causalityRig) destroy() {
	h := r.dev.Handle
	vkg.DeviceWaitIdle(h)
	if r.fence != vkg.NullFence {
		vkg.DestroyFence(h, r.fence, nil)
	}
	if r.ev != vkg.NullEvent {
		vkg.DestroyEvent(h, r.ev, nil)
	}
	if r.qp != vkg.NullQueryPool {
		vkg.DestroyQueryPool(h, r.qp, nil)
	}
	if r.pool != vkg.NullCommandPool {
		vkg.DestroyCommandPool(h, r.pool, nil)
	}
}
