package vk

/*
#include "render.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Graphics records and creates what a simple render loop needs without
// vulkan-go's marshalling, which copies slices (and structs holding slices)
// into C memory freed by a finalizer that can run while the driver still
// reads it. Every call here hands the driver C memory built in C, or Go
// memory holding no Go pointers pinned for the call; the commands pass
// everything by value and allocate nothing.
//
// These vulkan-go calls are safe as they are and have no counterpart here:
// those taking only scalars and handles, raw pointers (vkCmdPushConstants,
// vkGetQueryPoolResults), handle slices passed straight through
// (vkWaitForFences, vkResetFences, vkCmdBindVertexBuffers,
// vkAllocateCommandBuffers' output), and structs without slice fields
// (vkAllocateMemory, vkCreateImageView, vkCreateCommandPool, vkCreateFence,
// vkCreateQueryPool, vkBeginCommandBuffer without inheritance info, and
// vkCreateBuffer and vkCreateImage with no queue family list). For
// vkQueueSubmit use Device.QueueSubmit.
type Graphics struct {
	dev *Device

	createRenderPass, createShaderModule, createPipelineLayout proc
	createFramebuffer, createGraphicsPipelines                 proc
	createComputePipelines                                     proc
	beginRenderPass, copyImageToBuffer, pipelineBarrier        proc
}

// proc loads one of the device's entry points; nil when absent.
func (d *Device) proc(name string) proc {
	p, _ := d.lookup(name)
	return p
}

// Graphics loads the entry points Graphics calls. It fails, naming the
// first one missing, on a device without them.
func (d *Device) Graphics() (*Graphics, error) {
	if d == nil || d.Handle == nil {
		return nil, fmt.Errorf("vk: Graphics: no device")
	}
	g := &Graphics{dev: d}
	for _, e := range []struct {
		name string
		p    *proc
	}{
		{"vkCreateRenderPass", &g.createRenderPass},
		{"vkCreateShaderModule", &g.createShaderModule},
		{"vkCreatePipelineLayout", &g.createPipelineLayout},
		{"vkCreateFramebuffer", &g.createFramebuffer},
		{"vkCreateGraphicsPipelines", &g.createGraphicsPipelines},
		{"vkCreateComputePipelines", &g.createComputePipelines},
		{"vkCmdBeginRenderPass", &g.beginRenderPass},
		{"vkCmdCopyImageToBuffer", &g.copyImageToBuffer},
		{"vkCmdPipelineBarrier", &g.pipelineBarrier},
	} {
		if *e.p = d.proc(e.name); *e.p == nil {
			return nil, &MissingError{e.name, "the driver of " + d.Caps.Name + " does not return it"}
		}
	}
	return g, nil
}

// The most entries of each kind a description may hold.
const (
	MaxAttachments      = C.FS_MAX_ATTACHMENTS
	MaxDependencies     = C.FS_MAX_DEPENDENCIES
	MaxPushRanges       = C.FS_MAX_PUSH_RANGES
	MaxVertexBindings   = C.FS_MAX_VERTEX_BINDINGS
	MaxVertexAttributes = C.FS_MAX_VERTEX_ATTRIBUTES
)

// Attachment is a VkAttachmentDescription.
type Attachment struct {
	Format                     vk.Format
	Samples                    vk.SampleCountFlagBits
	LoadOp, StencilLoadOp      vk.AttachmentLoadOp
	StoreOp, StencilStoreOp    vk.AttachmentStoreOp
	InitialLayout, FinalLayout vk.ImageLayout
}

// AttachmentRef is a VkAttachmentReference.
type AttachmentRef struct {
	Attachment uint32
	Layout     vk.ImageLayout
}

// Dependency is a VkSubpassDependency.
type Dependency struct {
	SrcSubpass, DstSubpass       uint32
	SrcStageMask, DstStageMask   vk.PipelineStageFlags
	SrcAccessMask, DstAccessMask vk.AccessFlags
	Flags                        vk.DependencyFlags
}

// RenderPass describes a render pass of one graphics subpass, which writes
// the Color attachments.
type RenderPass struct {
	Attachments  []Attachment
	Color        []AttachmentRef
	Dependencies []Dependency
}

// CreateRenderPass creates rp (vkCreateRenderPass).
func (g *Graphics) CreateRenderPass(rp RenderPass) (vk.RenderPass, error) {
	if len(rp.Attachments) > MaxAttachments || len(rp.Color) > MaxAttachments || len(rp.Dependencies) > MaxDependencies {
		return vk.NullRenderPass, fmt.Errorf("vk: CreateRenderPass: %d attachments, %d color references, %d dependencies (at most %d, %d, %d)",
			len(rp.Attachments), len(rp.Color), len(rp.Dependencies), MaxAttachments, MaxAttachments, MaxDependencies)
	}
	var d C.fsRenderPassDesc
	d.attachmentCount = C.uint32_t(len(rp.Attachments))
	for i, a := range rp.Attachments {
		d.attachments[i] = C.fsAttachmentDescription{
			format: C.uint32_t(a.Format), samples: C.uint32_t(a.Samples),
			loadOp: C.uint32_t(a.LoadOp), storeOp: C.uint32_t(a.StoreOp),
			stencilLoadOp: C.uint32_t(a.StencilLoadOp), stencilStoreOp: C.uint32_t(a.StencilStoreOp),
			initialLayout: C.uint32_t(a.InitialLayout), finalLayout: C.uint32_t(a.FinalLayout),
		}
	}
	d.colorCount = C.uint32_t(len(rp.Color))
	for i, c := range rp.Color {
		d.colors[i] = C.fsAttachmentReference{attachment: C.uint32_t(c.Attachment), layout: C.uint32_t(c.Layout)}
	}
	d.dependencyCount = C.uint32_t(len(rp.Dependencies))
	for i, dep := range rp.Dependencies {
		d.dependencies[i] = C.fsSubpassDependency{
			srcSubpass: C.uint32_t(dep.SrcSubpass), dstSubpass: C.uint32_t(dep.DstSubpass),
			srcStageMask: C.uint32_t(dep.SrcStageMask), dstStageMask: C.uint32_t(dep.DstStageMask),
			srcAccessMask: C.uint32_t(dep.SrcAccessMask), dstAccessMask: C.uint32_t(dep.DstAccessMask),
			dependencyFlags: C.uint32_t(dep.Flags),
		}
	}
	var out C.fsVkHandle
	if r := C.fs_create_render_pass(C.fsPFN(g.createRenderPass), g.device(), &d, &out); r != 0 {
		return vk.NullRenderPass, fmt.Errorf("vk: vkCreateRenderPass: %w", vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.RenderPass](out), nil
}

// CreateShaderModule creates a shader module from SPIR-V words
// (vkCreateShaderModule).
func (g *Graphics) CreateShaderModule(code []uint32) (vk.ShaderModule, error) {
	if len(code) == 0 {
		return vk.NullShaderModule, fmt.Errorf("vk: CreateShaderModule: no code")
	}
	var out C.fsVkHandle
	r := C.fs_create_shader_module(C.fsPFN(g.createShaderModule), g.device(),
		(*C.uint32_t)(unsafe.Pointer(&code[0])), C.size_t(4*len(code)), &out)
	if r != 0 {
		return vk.NullShaderModule, fmt.Errorf("vk: vkCreateShaderModule (%d words): %w", len(code), vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.ShaderModule](out), nil
}

// PushConstantRange is a VkPushConstantRange.
type PushConstantRange struct {
	Stages       vk.ShaderStageFlags
	Offset, Size uint32
}

// CreatePipelineLayout creates a pipeline layout with push constants and
// no descriptor sets (vkCreatePipelineLayout).
func (g *Graphics) CreatePipelineLayout(push []PushConstantRange) (vk.PipelineLayout, error) {
	if len(push) > MaxPushRanges {
		return vk.NullPipelineLayout, fmt.Errorf("vk: CreatePipelineLayout: %d push constant ranges (at most %d)", len(push), MaxPushRanges)
	}
	var ranges [MaxPushRanges]C.fsPushConstantRange
	for i, p := range push {
		ranges[i] = C.fsPushConstantRange{stageFlags: C.uint32_t(p.Stages), offset: C.uint32_t(p.Offset), size: C.uint32_t(p.Size)}
	}
	var out C.fsVkHandle
	if r := C.fs_create_pipeline_layout(C.fsPFN(g.createPipelineLayout), g.device(), &ranges[0], C.uint32_t(len(push)), &out); r != 0 {
		return vk.NullPipelineLayout, fmt.Errorf("vk: vkCreatePipelineLayout: %w", vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.PipelineLayout](out), nil
}

// CreateFramebuffer creates a one-layer framebuffer of w x h on views
// (vkCreateFramebuffer).
func (g *Graphics) CreateFramebuffer(rp vk.RenderPass, views []vk.ImageView, w, h uint32) (vk.Framebuffer, error) {
	if len(views) > MaxAttachments {
		return vk.NullFramebuffer, fmt.Errorf("vk: CreateFramebuffer: %d attachments (at most %d)", len(views), MaxAttachments)
	}
	var hs [MaxAttachments]C.fsVkHandle
	for i, v := range views {
		hs[i] = C.fsVkHandle(handle64(v))
	}
	var out C.fsVkHandle
	r := C.fs_create_framebuffer(C.fsPFN(g.createFramebuffer), g.device(), C.fsVkHandle(handle64(rp)),
		&hs[0], C.uint32_t(len(views)), C.uint32_t(w), C.uint32_t(h), &out)
	if r != 0 {
		return vk.NullFramebuffer, fmt.Errorf("vk: vkCreateFramebuffer %dx%d: %w", w, h, vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.Framebuffer](out), nil
}

// VertexBinding is a VkVertexInputBindingDescription.
type VertexBinding struct {
	Binding, Stride uint32
	Rate            vk.VertexInputRate
}

// VertexAttribute is a VkVertexInputAttributeDescription.
type VertexAttribute struct {
	Location, Binding uint32
	Format            vk.Format
	Offset            uint32
}

// Blend is a VkPipelineColorBlendAttachmentState.
type Blend struct {
	Enable             bool
	SrcColor, DstColor vk.BlendFactor
	ColorOp            vk.BlendOp
	SrcAlpha, DstAlpha vk.BlendFactor
	AlphaOp            vk.BlendOp
	WriteMask          vk.ColorComponentFlags
}

// Pipeline describes a graphics pipeline: a vertex and a fragment shader
// whose entry points are "main", a viewport and scissor fixed at Width x
// Height, line width 1, and no depth, stencil, tessellation or dynamic
// state.
type Pipeline struct {
	Vertex, Fragment vk.ShaderModule
	Bindings         []VertexBinding
	Attributes       []VertexAttribute
	Topology         vk.PrimitiveTopology
	Width, Height    uint32
	PolygonMode      vk.PolygonMode
	CullMode         vk.CullModeFlags
	FrontFace        vk.FrontFace
	Samples          vk.SampleCountFlagBits
	Blend            []Blend // one per color attachment of the subpass
	Layout           vk.PipelineLayout
	RenderPass       vk.RenderPass
	Subpass          uint32
}

// CreateGraphicsPipeline creates p without a pipeline cache
// (vkCreateGraphicsPipelines).
func (g *Graphics) CreateGraphicsPipeline(p Pipeline) (vk.Pipeline, error) {
	if len(p.Bindings) > MaxVertexBindings || len(p.Attributes) > MaxVertexAttributes || len(p.Blend) > MaxAttachments {
		return vk.NullPipeline, fmt.Errorf("vk: CreateGraphicsPipeline: %d vertex bindings, %d attributes, %d blend states (at most %d, %d, %d)",
			len(p.Bindings), len(p.Attributes), len(p.Blend), MaxVertexBindings, MaxVertexAttributes, MaxAttachments)
	}
	d := C.fsPipelineDesc{
		vertex: C.fsVkHandle(handle64(p.Vertex)), fragment: C.fsVkHandle(handle64(p.Fragment)),
		layout: C.fsVkHandle(handle64(p.Layout)), renderPass: C.fsVkHandle(handle64(p.RenderPass)),
		subpass:  C.uint32_t(p.Subpass),
		topology: C.uint32_t(p.Topology), width: C.uint32_t(p.Width), height: C.uint32_t(p.Height),
		polygonMode: C.uint32_t(p.PolygonMode), cullMode: C.uint32_t(p.CullMode), frontFace: C.uint32_t(p.FrontFace),
		samples: C.uint32_t(p.Samples),
	}
	d.bindingCount = C.uint32_t(len(p.Bindings))
	for i, b := range p.Bindings {
		d.bindings[i] = C.fsVertexBinding{binding: C.uint32_t(b.Binding), stride: C.uint32_t(b.Stride), inputRate: C.uint32_t(b.Rate)}
	}
	d.attributeCount = C.uint32_t(len(p.Attributes))
	for i, a := range p.Attributes {
		d.attributes[i] = C.fsVertexAttribute{location: C.uint32_t(a.Location), binding: C.uint32_t(a.Binding),
			format: C.uint32_t(a.Format), offset: C.uint32_t(a.Offset)}
	}
	d.blendCount = C.uint32_t(len(p.Blend))
	for i, b := range p.Blend {
		d.blend[i] = C.fsBlendAttachment{
			blendEnable:         C.uint32_t(cbool(b.Enable)),
			srcColorBlendFactor: C.uint32_t(b.SrcColor), dstColorBlendFactor: C.uint32_t(b.DstColor),
			colorBlendOp:        C.uint32_t(b.ColorOp),
			srcAlphaBlendFactor: C.uint32_t(b.SrcAlpha), dstAlphaBlendFactor: C.uint32_t(b.DstAlpha),
			alphaBlendOp:   C.uint32_t(b.AlphaOp),
			colorWriteMask: C.uint32_t(b.WriteMask),
		}
	}
	var out C.fsVkHandle
	if r := C.fs_create_graphics_pipeline(C.fsPFN(g.createGraphicsPipelines), g.device(), &d, &out); r != 0 {
		return vk.NullPipeline, fmt.Errorf("vk: vkCreateGraphicsPipelines: %w", vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.Pipeline](out), nil
}

// CreateComputePipeline creates a compute pipeline of module's "main"
// with layout, without a pipeline cache (vkCreateComputePipelines).
func (g *Graphics) CreateComputePipeline(module vk.ShaderModule, layout vk.PipelineLayout) (vk.Pipeline, error) {
	var out C.fsVkHandle
	if r := C.fs_create_compute_pipeline(C.fsPFN(g.createComputePipelines), g.device(),
		C.fsVkHandle(handle64(module)), C.fsVkHandle(handle64(layout)), &out); r != 0 {
		return vk.NullPipeline, fmt.Errorf("vk: vkCreateComputePipelines: %w", vk.Error(vk.Result(r)))
	}
	return fromHandle[vk.Pipeline](out), nil
}

// CmdBeginRenderPass begins rp on fb over w x h from the origin, its one
// attachment cleared to the float color clear, contents inline
// (vkCmdBeginRenderPass).
func (g *Graphics) CmdBeginRenderPass(cmd vk.CommandBuffer, rp vk.RenderPass, fb vk.Framebuffer, w, h uint32, clear [4]float32) {
	C.fs_cmd_begin_render_pass(C.fsPFN(g.beginRenderPass), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.fsVkHandle(handle64(rp)), C.fsVkHandle(handle64(fb)), C.uint32_t(w), C.uint32_t(h),
		C.float(clear[0]), C.float(clear[1]), C.float(clear[2]), C.float(clear[3]))
}

// CmdCopyImageToBuffer copies mip level 0, layer 0 of image (w x h, the
// aspect given) to the start of buf, tightly packed
// (vkCmdCopyImageToBuffer).
func (g *Graphics) CmdCopyImageToBuffer(cmd vk.CommandBuffer, image vk.Image, layout vk.ImageLayout, buf vk.Buffer,
	aspect vk.ImageAspectFlags, w, h uint32) {
	C.fs_cmd_copy_image_to_buffer(C.fsPFN(g.copyImageToBuffer), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.fsVkHandle(handle64(image)), C.uint32_t(layout), C.fsVkHandle(handle64(buf)),
		C.uint32_t(aspect), C.uint32_t(w), C.uint32_t(h))
}

// CmdBufferBarrier records a pipeline barrier with one buffer memory
// barrier over the whole of buf, no queue family transfer
// (vkCmdPipelineBarrier).
func (g *Graphics) CmdBufferBarrier(cmd vk.CommandBuffer, srcStage, dstStage vk.PipelineStageFlags,
	srcAccess, dstAccess vk.AccessFlags, buf vk.Buffer) {
	C.fs_cmd_buffer_barrier(C.fsPFN(g.pipelineBarrier), C.fsVkCommandBuffer(unsafe.Pointer(cmd)),
		C.uint32_t(srcStage), C.uint32_t(dstStage), C.uint32_t(srcAccess), C.uint32_t(dstAccess),
		C.fsVkHandle(handle64(buf)))
}

func (g *Graphics) device() C.fsVkDevice { return C.fsVkDevice(unsafe.Pointer(g.dev.Handle)) }

// fromHandle makes a non-dispatchable handle (8 bytes on 64-bit) of a uint64.
func fromHandle[T any](h C.fsVkHandle) T {
	var v T
	*(*uint64)(unsafe.Pointer(&v)) = uint64(h)
	return v
}
