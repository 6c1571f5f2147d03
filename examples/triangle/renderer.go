package main

import (
	"fmt"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// renderer owns the Vulkan objects of the render loop: the pipelines, the
// vertex buffer, and per frame slot a render target, a command buffer and
// a fence. It knows nothing of the profiler; the loop drives it.
type renderer struct {
	dev   vkg.Device
	queue vkg.Queue
	w, h  int
	mem   *memoryTypes
	pipes *pipelines
	vbuf  *hostBuffer
	pool  vkg.CommandPool
	slots []slot
	clear []vkg.ClearValue
	vbufs []vkg.Buffer
	voffs []vkg.DeviceSize
	push  *pushConstants // an allocation of its own: cgo may be handed a pointer to it
	// beginInfo is made once: vulkan-go keeps the C copy of a struct
	// with it and frees it only on Free, so a new one per frame would leak.
	beginInfo *vkg.CommandBufferBeginInfo
	region    []vkg.BufferImageCopy
}

// slot is what one frame in flight uses.
type slot struct {
	target    *target
	cmd       vkg.CommandBuffer
	cmds      []vkg.CommandBuffer // {cmd}, for vkQueueSubmit
	fence     []vkg.Fence         // one fence, as vkWaitForFences wants it
	begin     *vkg.RenderPassBeginInfo
	submitted bool
}

func newRenderer(dev vkg.Device, pd vkg.PhysicalDevice, queue vkg.Queue, family uint32, slots, w, h int) (*renderer, error) {
	r := &renderer{dev: dev, queue: queue, w: w, h: h, mem: newMemoryTypes(pd), push: new(pushConstants)}
	var err error
	if r.pipes, err = newPipelines(dev, w, h); err != nil {
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
	r.clear = []vkg.ClearValue{vkg.NewClearValue(clearColor[:])}
	r.region = []vkg.BufferImageCopy{{
		ImageSubresource: vkg.ImageSubresourceLayers{AspectMask: vkg.ImageAspectFlags(vkg.ImageAspectColorBit), LayerCount: 1},
		ImageExtent:      vkg.Extent3D{Width: uint32(w), Height: uint32(h), Depth: 1},
	}}

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
		t, err := newTarget(dev, r.mem, r.pipes.renderPass, w, h)
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
		// Made once: vulkan-go keeps its C copy with the struct, so
		// recording a frame converts nothing.
		r.slots[i].begin = &vkg.RenderPassBeginInfo{
			SType:           vkg.StructureTypeRenderPassBeginInfo,
			RenderPass:      r.pipes.renderPass,
			Framebuffer:     t.fb,
			RenderArea:      vkg.Rect2D{Extent: vkg.Extent2D{Width: uint32(w), Height: uint32(h)}},
			ClearValueCount: 1,
			PClearValues:    r.clear,
		}
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
	vkg.CmdBeginRenderPass(cmd, r.slots[i].begin, vkg.SubpassContentsInline)
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

// copyOut copies the slot's image (left in TRANSFER_SRC_OPTIMAL by the
// render pass) into its host buffer, visible to the host once the fence
// signals.
func (r *renderer) copyOut(cmd vkg.CommandBuffer, i int) {
	t := r.slots[i].target
	vkg.CmdCopyImageToBuffer(cmd, t.image, vkg.ImageLayoutTransferSrcOptimal, t.readback.buf, 1, r.region)
	vkg.CmdPipelineBarrier(cmd,
		vkg.PipelineStageFlags(vkg.PipelineStageTransferBit), vkg.PipelineStageFlags(vkg.PipelineStageHostBit), 0,
		0, nil,
		1, []vkg.BufferMemoryBarrier{{
			SType:               vkg.StructureTypeBufferMemoryBarrier,
			SrcAccessMask:       vkg.AccessFlags(vkg.AccessTransferWriteBit),
			DstAccessMask:       vkg.AccessFlags(vkg.AccessHostReadBit),
			SrcQueueFamilyIndex: vkg.QueueFamilyIgnored,
			DstQueueFamilyIndex: vkg.QueueFamilyIgnored,
			Buffer:              t.readback.buf,
			Size:                vkg.DeviceSize(vkg.WholeSize),
		}},
		0, nil)
}

// submit ends the slot's command buffer and submits it with its fence.
func (r *renderer) submit(i int) error {
	s := &r.slots[i]
	if res := vkg.EndCommandBuffer(s.cmd); res != vkg.Success {
		return fmt.Errorf("vkEndCommandBuffer: %w", vkg.Error(res))
	}
	si := []vkg.SubmitInfo{{
		SType:              vkg.StructureTypeSubmitInfo,
		CommandBufferCount: 1,
		PCommandBuffers:    s.cmds,
	}}
	if res := vkg.QueueSubmit(r.queue, 1, si, s.fence[0]); res != vkg.Success {
		return fmt.Errorf("vkQueueSubmit: %w", vkg.Error(res))
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
		if s.begin != nil {
			s.begin.Free()
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
