package main

import (
	"fmt"
	"math"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// pushConstants mirror shaders/push.glsl: one 16-byte range seen by the
// vertex and fragment stages of both pipelines.
type pushConstants struct {
	angle      float32
	iterations uint32
	seed       float32
	_          float32
}

const pushSize = uint32(unsafe.Sizeof(pushConstants{}))

const pushStages = vkg.ShaderStageFlags(vkg.ShaderStageVertexBit | vkg.ShaderStageFragmentBit)

// vertex is one vertex of the triangle: position and color.
type vertex struct {
	x, y    float32
	r, g, b float32
}

const vertexStride = uint32(unsafe.Sizeof(vertex{}))

// triangleVertices is an equilateral triangle whose centroid is the
// origin, red, green and blue at its corners: however it rotates, the
// centre pixel shows the average, (85, 85, 85) in 8 bits.
func triangleVertices() []vertex {
	const r = 0.8 // circumradius in clip space
	v := make([]vertex, 3)
	colors := [3][3]float32{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	for i := range v {
		a := math.Pi/2 + float64(i)*2*math.Pi/3
		v[i] = vertex{
			x: float32(r * math.Cos(a)), y: float32(-r * math.Sin(a)),
			r: colors[i][0], g: colors[i][1], b: colors[i][2],
		}
	}
	return v
}

// clearColor is the image's background, and what a corner pixel shows.
var clearColor = [4]float32{0.1, 0.2, 0.3, 1}

// pipelines holds the render pass and the two graphics pipelines: the
// triangle, and the full-screen load pass that leaves the image as it was.
type pipelines struct {
	renderPass vkg.RenderPass
	layout     vkg.PipelineLayout
	triangle   vkg.Pipeline
	load       vkg.Pipeline
}

func newRenderPass(dev vkg.Device) (vkg.RenderPass, error) {
	ci := vkg.RenderPassCreateInfo{
		SType:           vkg.StructureTypeRenderPassCreateInfo,
		AttachmentCount: 1,
		PAttachments: []vkg.AttachmentDescription{{
			Format:         colorFormat,
			Samples:        vkg.SampleCount1Bit,
			LoadOp:         vkg.AttachmentLoadOpClear,
			StoreOp:        vkg.AttachmentStoreOpStore,
			StencilLoadOp:  vkg.AttachmentLoadOpDontCare,
			StencilStoreOp: vkg.AttachmentStoreOpDontCare,
			InitialLayout:  vkg.ImageLayoutUndefined,
			FinalLayout:    vkg.ImageLayoutTransferSrcOptimal,
		}},
		SubpassCount: 1,
		PSubpasses: []vkg.SubpassDescription{{
			PipelineBindPoint:    vkg.PipelineBindPointGraphics,
			ColorAttachmentCount: 1,
			PColorAttachments:    []vkg.AttachmentReference{{Attachment: 0, Layout: vkg.ImageLayoutColorAttachmentOptimal}},
		}},
		DependencyCount: 2,
		PDependencies: []vkg.SubpassDependency{
			{ // earlier frames' writes and copies of this image come first
				SrcSubpass:    vkg.SubpassExternal,
				DstSubpass:    0,
				SrcStageMask:  vkg.PipelineStageFlags(vkg.PipelineStageColorAttachmentOutputBit | vkg.PipelineStageTransferBit),
				DstStageMask:  vkg.PipelineStageFlags(vkg.PipelineStageColorAttachmentOutputBit),
				SrcAccessMask: vkg.AccessFlags(vkg.AccessColorAttachmentWriteBit),
				DstAccessMask: vkg.AccessFlags(vkg.AccessColorAttachmentWriteBit),
			},
			{ // the copy to host memory reads what the pass wrote
				SrcSubpass:    0,
				DstSubpass:    vkg.SubpassExternal,
				SrcStageMask:  vkg.PipelineStageFlags(vkg.PipelineStageColorAttachmentOutputBit),
				DstStageMask:  vkg.PipelineStageFlags(vkg.PipelineStageTransferBit),
				SrcAccessMask: vkg.AccessFlags(vkg.AccessColorAttachmentWriteBit),
				DstAccessMask: vkg.AccessFlags(vkg.AccessTransferReadBit),
			},
		},
	}
	var rp vkg.RenderPass
	if r := vkg.CreateRenderPass(dev, &ci, nil, &rp); r != vkg.Success {
		return vkg.NullRenderPass, fmt.Errorf("vkCreateRenderPass: %w", vkg.Error(r))
	}
	return rp, nil
}

func newShaderModule(dev vkg.Device, name string, spv []byte) (vkg.ShaderModule, error) {
	words, err := spirvWords(spv)
	if err != nil {
		return vkg.NullShaderModule, fmt.Errorf("shader %s: %w", name, err)
	}
	ci := vkg.ShaderModuleCreateInfo{
		SType:    vkg.StructureTypeShaderModuleCreateInfo,
		CodeSize: uint(len(words) * 4),
		PCode:    words,
	}
	var m vkg.ShaderModule
	if r := vkg.CreateShaderModule(dev, &ci, nil, &m); r != vkg.Success {
		return vkg.NullShaderModule, fmt.Errorf("vkCreateShaderModule %s: %w", name, vkg.Error(r))
	}
	return m, nil
}

func newPipelines(dev vkg.Device, w, h int) (*pipelines, error) {
	p := &pipelines{}
	var err error
	if p.renderPass, err = newRenderPass(dev); err != nil {
		return nil, err
	}
	lci := vkg.PipelineLayoutCreateInfo{
		SType:                  vkg.StructureTypePipelineLayoutCreateInfo,
		PushConstantRangeCount: 1,
		PPushConstantRanges:    []vkg.PushConstantRange{{StageFlags: pushStages, Offset: 0, Size: pushSize}},
	}
	var layout vkg.PipelineLayout
	if r := vkg.CreatePipelineLayout(dev, &lci, nil, &layout); r != vkg.Success {
		p.destroy(dev)
		return nil, fmt.Errorf("vkCreatePipelineLayout: %w", vkg.Error(r))
	}
	p.layout = layout

	opaque := vkg.PipelineColorBlendAttachmentState{ColorWriteMask: 0xf}
	// The load pass writes alpha 0 over the image: dst*(1-0) + src*0 = dst.
	invisible := vkg.PipelineColorBlendAttachmentState{
		BlendEnable:         vkg.True,
		SrcColorBlendFactor: vkg.BlendFactorSrcAlpha,
		DstColorBlendFactor: vkg.BlendFactorOneMinusSrcAlpha,
		ColorBlendOp:        vkg.BlendOpAdd,
		SrcAlphaBlendFactor: vkg.BlendFactorZero,
		DstAlphaBlendFactor: vkg.BlendFactorOne,
		AlphaBlendOp:        vkg.BlendOpAdd,
		ColorWriteMask:      0xf,
	}
	triInput := &vkg.PipelineVertexInputStateCreateInfo{
		SType:                           vkg.StructureTypePipelineVertexInputStateCreateInfo,
		VertexBindingDescriptionCount:   1,
		PVertexBindingDescriptions:      []vkg.VertexInputBindingDescription{{Binding: 0, Stride: vertexStride, InputRate: vkg.VertexInputRateVertex}},
		VertexAttributeDescriptionCount: 2,
		PVertexAttributeDescriptions: []vkg.VertexInputAttributeDescription{
			{Location: 0, Binding: 0, Format: vkg.FormatR32g32Sfloat, Offset: 0},
			{Location: 1, Binding: 0, Format: vkg.FormatR32g32b32Sfloat, Offset: 8},
		},
	}
	noInput := &vkg.PipelineVertexInputStateCreateInfo{SType: vkg.StructureTypePipelineVertexInputStateCreateInfo}
	if p.triangle, err = p.graphics(dev, w, h, "triangle", triangleVert, triangleFrag, triInput, opaque); err != nil {
		p.destroy(dev)
		return nil, err
	}
	if p.load, err = p.graphics(dev, w, h, "load", loadVert, loadFrag, noInput, invisible); err != nil {
		p.destroy(dev)
		return nil, err
	}
	return p, nil
}

// graphics makes one pipeline of the render pass's only subpass, with a
// fixed viewport of w x h.
func (p *pipelines) graphics(dev vkg.Device, w, h int, name string, vs, fs []byte,
	input *vkg.PipelineVertexInputStateCreateInfo, blend vkg.PipelineColorBlendAttachmentState) (vkg.Pipeline, error) {
	vm, err := newShaderModule(dev, name+".vert", vs)
	if err != nil {
		return vkg.NullPipeline, err
	}
	defer vkg.DestroyShaderModule(dev, vm, nil)
	fm, err := newShaderModule(dev, name+".frag", fs)
	if err != nil {
		return vkg.NullPipeline, err
	}
	defer vkg.DestroyShaderModule(dev, fm, nil)

	ci := []vkg.GraphicsPipelineCreateInfo{{
		SType:      vkg.StructureTypeGraphicsPipelineCreateInfo,
		StageCount: 2,
		PStages: []vkg.PipelineShaderStageCreateInfo{
			{SType: vkg.StructureTypePipelineShaderStageCreateInfo, Stage: vkg.ShaderStageVertexBit, Module: vm, PName: "main\x00"},
			{SType: vkg.StructureTypePipelineShaderStageCreateInfo, Stage: vkg.ShaderStageFragmentBit, Module: fm, PName: "main\x00"},
		},
		PVertexInputState: input,
		PInputAssemblyState: &vkg.PipelineInputAssemblyStateCreateInfo{
			SType:    vkg.StructureTypePipelineInputAssemblyStateCreateInfo,
			Topology: vkg.PrimitiveTopologyTriangleList,
		},
		PViewportState: &vkg.PipelineViewportStateCreateInfo{
			SType:         vkg.StructureTypePipelineViewportStateCreateInfo,
			ViewportCount: 1,
			PViewports:    []vkg.Viewport{{Width: float32(w), Height: float32(h), MinDepth: 0, MaxDepth: 1}},
			ScissorCount:  1,
			PScissors:     []vkg.Rect2D{{Extent: vkg.Extent2D{Width: uint32(w), Height: uint32(h)}}},
		},
		PRasterizationState: &vkg.PipelineRasterizationStateCreateInfo{
			SType:       vkg.StructureTypePipelineRasterizationStateCreateInfo,
			PolygonMode: vkg.PolygonModeFill,
			CullMode:    vkg.CullModeFlags(vkg.CullModeNone),
			FrontFace:   vkg.FrontFaceCounterClockwise,
			LineWidth:   1,
		},
		PMultisampleState: &vkg.PipelineMultisampleStateCreateInfo{
			SType:                vkg.StructureTypePipelineMultisampleStateCreateInfo,
			RasterizationSamples: vkg.SampleCount1Bit,
		},
		PColorBlendState: &vkg.PipelineColorBlendStateCreateInfo{
			SType:           vkg.StructureTypePipelineColorBlendStateCreateInfo,
			AttachmentCount: 1,
			PAttachments:    []vkg.PipelineColorBlendAttachmentState{blend},
		},
		Layout:     p.layout,
		RenderPass: p.renderPass,
	}}
	out := make([]vkg.Pipeline, 1)
	if r := vkg.CreateGraphicsPipelines(dev, vkg.NullPipelineCache, 1, ci, nil, out); r != vkg.Success {
		return vkg.NullPipeline, fmt.Errorf("vkCreateGraphicsPipelines %s: %w", name, vkg.Error(r))
	}
	return out[0], nil
}

func (p *pipelines) destroy(dev vkg.Device) {
	if p.load != vkg.NullPipeline {
		vkg.DestroyPipeline(dev, p.load, nil)
	}
	if p.triangle != vkg.NullPipeline {
		vkg.DestroyPipeline(dev, p.triangle, nil)
	}
	if p.layout != vkg.NullPipelineLayout {
		vkg.DestroyPipelineLayout(dev, p.layout, nil)
	}
	if p.renderPass != vkg.NullRenderPass {
		vkg.DestroyRenderPass(dev, p.renderPass, nil)
	}
	*p = pipelines{}
}
