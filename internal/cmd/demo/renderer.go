package demo

import (
	"fmt"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// renderer owns the Vulkan objects of the render loop: the pipelines, the
// vertex buffer, and per frame slot a render target, a command buffer and
// a fence. It knows nothing of the profiler; the loop drives it.
//
// Every Vulkan call that hands the driver a struct holding a slice, or a
// slice of structs, goes through vk (gfx, and vd.QueueSubmit): vulkan-go
// copies those into C memory that a finalizer frees, possibly while the
// driver still reads it. The vulkan-go calls left take scalars, handles,
// handle slices it passes as they are, or structs without slices.
type renderer struct {
	vd    *vk.Device
	gfx   *vk.Graphics
	dev   vkg.Device
	queue vkg.Queue
	w, h  int
	mem   *memoryTypes
	pipes *pipelines
	vbuf  *hostBuffer
	pool  vkg.CommandPool
	slots []slot
	vbufs []vkg.Buffer
	voffs []vkg.DeviceSize
	push  *pushConstants // an allocation of its own: cgo may be handed a pointer to it
	// beginInfo is made once: vulkan-go keeps the C copy of a struct
	// with it and frees it only on Free, so a new one per frame would leak.
	beginInfo *vkg.CommandBufferBeginInfo
}

// slot is what one frame in flight uses.
type slot struct {
	target    *target
	cmd       vkg.CommandBuffer
	cmds      []vkg.CommandBuffer // {cmd}, for vkQueueSubmit
	fence     []vkg.Fence         // one fence, as vkWaitForFences wants it
	submitted bool
}

func newRenderer(d *vk.Device, queue vkg.Queue, family uint32, slots, w, h int) (*renderer, error) {
	g, err := d.Graphics()
	if err != nil {
		return nil, err
	}
	dev := d.Handle
	r := &renderer{vd: d, gfx: g, dev: dev, queue: queue, w: w, h: h, mem: newMemoryTypes(d.Physical), push: new(pushConstants)}
	if r.pipes, err = newPipelines(g, dev, w, h); err != nil {
		return nil, err
	}
	verts := triangleVertices()
	size := len(verts) * int(vertexStride)
	if r.vbuf, err = newHostBuffer(dev, r.mem, size, vkg.BufferUsageVertexBufferBit); err != nil {
		r.destroy()
		return nil, err
	}
	copy(r.vbuf.bytes(), unsafe.Slice((*byte)(unsafe.Pointer(&verts[0])), size))
	r.beginInfo = &vkg.CommandBufferBeginInfo{
		SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit),
	}
	r.vbufs = []vkg.Buffer{r.vbuf.buf}
	r.voffs = []vkg.DeviceSize{0}

	pci := vkg.CommandPoolCreateInfo{
		SType:            vkg.StructureTypeCommandPoolCreateInfo,
		Flags:            vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit),
		QueueFamilyIndex: family,
	}
	var pool vkg.CommandPool
	if res := vkg.CreateCommandPool(dev, &pci, nil, &pool); res != vkg.Success {
		r.destroy()
		return nil, fmt.Errorf("vkCreateCommandPool: %w", vkg.Error(res))
	}
	r.pool = pool
	cmds := make([]vkg.CommandBuffer, slots)
	ai := vkg.CommandBufferAllocateInfo{
		SType:              vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              vkg.CommandBufferLevelPrimary,
		CommandBufferCount: uint32(slots),
	}
	if res := vkg.AllocateCommandBuffers(dev, &ai, cmds); res != vkg.Success {
		r.destroy()
		return nil, fmt.Errorf("vkAllocateCommandBuffers: %w", vkg.Error(res))
	}
	for i := 0; i < slots; i++ {
		t, err := newTarget(g, dev, r.mem, r.pipes.renderPass, w, h)
		if err != nil {
			r.destroy()
			return nil, err
		}
		s := slot{target: t, cmd: cmds[i], cmds: []vkg.CommandBuffer{cmds[i]}}
		r.slots = append(r.slots, s)
		fci := vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}
		var f vkg.Fence
		if res := vkg.CreateFence(dev, &fci, nil, &f); res != vkg.Success {
			r.destroy()
			return nil, fmt.Errorf("vkCreateFence: %w", vkg.Error(res))
		}
		r.slots[i].fence = []vkg.Fence{f}
	}
	return r, nil
}

// wait waits (up to timeoutNs) for the slot's previous frame and resets its
// fence. A slot never submitted has nothing to wait for.
func (r *renderer) wait(i int, timeoutNs uint64) error {
	s := &r.slots[i]
	if !s.submitted {
		return nil
	}
	if res := vkg.WaitForFences(r.dev, 1, s.fence, vkg.True, timeoutNs); res != vkg.Success {
		return fmt.Errorf("vkWaitForFences (frame slot %d): %w", i, vkg.Error(res))
	}
	if res := vkg.ResetFences(r.dev, 1, s.fence); res != vkg.Success {
		return fmt.Errorf("vkResetFences: %w", vkg.Error(res))
	}
	s.submitted = false
	return nil
}

// beginCmd resets and begins the slot's command buffer.
func (r *renderer) beginCmd(i int) (vkg.CommandBuffer, error) {
	cmd := r.slots[i].cmd
	if res := vkg.ResetCommandBuffer(cmd, 0); res != vkg.Success {
		return nil, fmt.Errorf("vkResetCommandBuffer: %w", vkg.Error(res))
	}
	if res := vkg.BeginCommandBuffer(cmd, r.beginInfo); res != vkg.Success {
		return nil, fmt.Errorf("vkBeginCommandBuffer: %w", vkg.Error(res))
	}
	return cmd, nil
}

// beginPass begins the render pass on the slot's target and pushes the
// frame's constants.
func (r *renderer) beginPass(cmd vkg.CommandBuffer, i int) {
	r.gfx.CmdBeginRenderPass(cmd, r.pipes.renderPass, r.slots[i].target.fb, uint32(r.w), uint32(r.h), clearColor)
	vkg.CmdPushConstants(cmd, r.pipes.layout, pushStages, 0, pushSize, unsafe.Pointer(r.push))
}

// bindLoad binds the load pipeline; loadDraw records one full-screen draw.
func (r *renderer) bindLoad(cmd vkg.CommandBuffer) {
	vkg.CmdBindPipeline(cmd, vkg.PipelineBindPointGraphics, r.pipes.load)
}

func (r *renderer) loadDraw(cmd vkg.CommandBuffer) { vkg.CmdDraw(cmd, 3, 1, 0, 0) }

// drawTriangle binds the triangle pipeline and draws it.
func (r *renderer) drawTriangle(cmd vkg.CommandBuffer) {
	vkg.CmdBindPipeline(cmd, vkg.PipelineBindPointGraphics, r.pipes.triangle)
	vkg.CmdBindVertexBuffers(cmd, 0, 1, r.vbufs, r.voffs)
	vkg.CmdDraw(cmd, 3, 1, 0, 0)
}

func (r *renderer) endPass(cmd vkg.CommandBuffer) { vkg.CmdEndRenderPass(cmd) }

// dispatch records groups workgroups of the count pipeline: groups x
// countGroup compute invocations. It must be outside the render pass.
func (r *renderer) dispatch(cmd vkg.CommandBuffer, groups uint32) {
	vkg.CmdBindPipeline(cmd, vkg.PipelineBindPointCompute, r.pipes.count)
	vkg.CmdDispatch(cmd, groups, 1, 1)
}

// copyOut copies the slot's image (left in TRANSFER_SRC_OPTIMAL by the
// render pass) into its host buffer, visible to the host once the fence
// signals.
func (r *renderer) copyOut(cmd vkg.CommandBuffer, i int) {
	t := r.slots[i].target
	r.gfx.CmdCopyImageToBuffer(cmd, t.image, vkg.ImageLayoutTransferSrcOptimal, t.readback.buf,
		vkg.ImageAspectFlags(vkg.ImageAspectColorBit), uint32(r.w), uint32(r.h))
	r.gfx.CmdBufferBarrier(cmd,
		vkg.PipelineStageFlags(vkg.PipelineStageTransferBit), vkg.PipelineStageFlags(vkg.PipelineStageHostBit),
		vkg.AccessFlags(vkg.AccessTransferWriteBit), vkg.AccessFlags(vkg.AccessHostReadBit), t.readback.buf)
}

// submit ends the slot's command buffer and submits it with its fence.
func (r *renderer) submit(i int) error {
	s := &r.slots[i]
	if res := vkg.EndCommandBuffer(s.cmd); res != vkg.Success {
		return fmt.Errorf("vkEndCommandBuffer: %w", vkg.Error(res))
	}
	if err := r.vd.QueueSubmit(r.queue, s.cmds, s.fence[0]); err != nil {
		return err
	}
	s.submitted = true
	return nil
}

// pixels copies the slot's last frame out of its host buffer. The slot
// must have been waited for.
func (r *renderer) pixels(i int) pixels {
	b := r.slots[i].target.readback.bytes()
	return pixels{w: r.w, h: r.h, pix: append([]byte(nil), b...)}
}

// destroy waits for the device to go idle and destroys everything.
func (r *renderer) destroy() {
	vkg.DeviceWaitIdle(r.dev)
	for i := range r.slots {
		s := &r.slots[i]
		if len(s.fence) == 1 && s.fence[0] != vkg.NullFence {
			vkg.DestroyFence(r.dev, s.fence[0], nil)
		}
		s.target.destroy(r.dev)
	}
	r.slots = nil
	if r.pool != vkg.NullCommandPool {
		vkg.DestroyCommandPool(r.dev, r.pool, nil)
		r.pool = vkg.NullCommandPool
	}
	r.vbuf.destroy(r.dev)
	r.vbuf = nil
	if r.beginInfo != nil {
		r.beginInfo.Free()
		r.beginInfo = nil
	}
	if r.pipes != nil {
		r.pipes.destroy(r.dev)
		r.pipes = nil
	}
}
