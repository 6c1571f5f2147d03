package demo

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
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
	// count is a compute pipeline of countGroup invocations a
	// workgroup, on countLayout (no push constants).
	countLayout vkg.PipelineLayout
	count       vkg.Pipeline
}

// countGroup is count.comp's workgroup size.
const countGroup = 64

// renderPassDesc: one color attachment, cleared, then left for the copy
// to host memory.
var renderPassDesc = vk.RenderPass{
	Attachments: []vk.Attachment{{
		Format:         colorFormat,
		Samples:        vkg.SampleCount1Bit,
		LoadOp:         vkg.AttachmentLoadOpClear,
		StoreOp:        vkg.AttachmentStoreOpStore,
		StencilLoadOp:  vkg.AttachmentLoadOpDontCare,
		StencilStoreOp: vkg.AttachmentStoreOpDontCare,
		InitialLayout:  vkg.ImageLayoutUndefined,
		FinalLayout:    vkg.ImageLayoutTransferSrcOptimal,
	}},
	Color: []vk.AttachmentRef{{Attachment: 0, Layout: vkg.ImageLayoutColorAttachmentOptimal}},
	Dependencies: []vk.Dependency{
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

func newShaderModule(g *vk.Graphics, name string, spv []byte) (vkg.ShaderModule, error) {
	words, err := spirvWords(spv)
	if err != nil {
		return vkg.NullShaderModule, fmt.Errorf("shader %s: %w", name, err)
	}
	m, err := g.CreateShaderModule(words)
	if err != nil {
		return vkg.NullShaderModule, fmt.Errorf("shader %s: %w", name, err)
	}
	return m, nil
}

// newPipelines makes the render pass, the layout and both pipelines through
// g: vulkan-go's own create calls hand the driver C copies of their slices
// that a finalizer may free during the call.
func newPipelines(g *vk.Graphics, dev vkg.Device, w, h int) (*pipelines, error) {
	p := &pipelines{}
	var err error
	if p.renderPass, err = g.CreateRenderPass(renderPassDesc); err != nil {
		return nil, err
	}
	if p.layout, err = g.CreatePipelineLayout([]vk.PushConstantRange{{Stages: pushStages, Offset: 0, Size: pushSize}}); err != nil {
		p.destroy(dev)
		return nil, err
	}

	opaque := vk.Blend{WriteMask: 0xf}
	// The load pass writes alpha 0 over the image: dst*(1-0) + src*0 = dst.
	invisible := vk.Blend{
		Enable:    true,
		SrcColor:  vkg.BlendFactorSrcAlpha,
		DstColor:  vkg.BlendFactorOneMinusSrcAlpha,
		ColorOp:   vkg.BlendOpAdd,
		SrcAlpha:  vkg.BlendFactorZero,
		DstAlpha:  vkg.BlendFactorOne,
		AlphaOp:   vkg.BlendOpAdd,
		WriteMask: 0xf,
	}
	tri := vk.Pipeline{
		Bindings: []vk.VertexBinding{{Binding: 0, Stride: vertexStride, Rate: vkg.VertexInputRateVertex}},
		Attributes: []vk.VertexAttribute{
			{Location: 0, Binding: 0, Format: vkg.FormatR32g32Sfloat, Offset: 0},
			{Location: 1, Binding: 0, Format: vkg.FormatR32g32b32Sfloat, Offset: 8},
		},
		Blend: []vk.Blend{opaque},
	}
	if p.triangle, err = p.graphics(g, dev, w, h, "triangle", triangleVert, triangleFrag, tri); err != nil {
		p.destroy(dev)
		return nil, err
	}
	if p.load, err = p.graphics(g, dev, w, h, "load", loadVert, loadFrag, vk.Pipeline{Blend: []vk.Blend{invisible}}); err != nil {
		p.destroy(dev)
		return nil, err
	}
	if err = p.compute(g, dev); err != nil {
		p.destroy(dev)
		return nil, err
	}
	return p, nil
}

// graphics makes one pipeline of the render pass's only subpass, with a
// fixed viewport of w x h; desc brings the vertex input and the blend.
func (p *pipelines) graphics(g *vk.Graphics, dev vkg.Device, w, h int, name string, vs, fs []byte, desc vk.Pipeline) (vkg.Pipeline, error) {
	vm, err := newShaderModule(g, name+".vert", vs)
	if err != nil {
		return vkg.NullPipeline, err
	}
	defer vkg.DestroyShaderModule(dev, vm, nil)
	fm, err := newShaderModule(g, name+".frag", fs)
	if err != nil {
		return vkg.NullPipeline, err
	}
	defer vkg.DestroyShaderModule(dev, fm, nil)

	desc.Vertex, desc.Fragment = vm, fm
	desc.Topology = vkg.PrimitiveTopologyTriangleList
	desc.Width, desc.Height = uint32(w), uint32(h)
	desc.PolygonMode = vkg.PolygonModeFill
	desc.CullMode = vkg.CullModeFlags(vkg.CullModeNone)
	desc.FrontFace = vkg.FrontFaceCounterClockwise
	desc.Samples = vkg.SampleCount1Bit
	desc.Layout, desc.RenderPass = p.layout, p.renderPass
	pl, err := g.CreateGraphicsPipeline(desc)
	if err != nil {
		return vkg.NullPipeline, fmt.Errorf("pipeline %s: %w", name, err)
	}
	return pl, nil
}

// compute makes the count pipeline and its layout.
func (p *pipelines) compute(g *vk.Graphics, dev vkg.Device) error {
	m, err := newShaderModule(g, "count.comp", countComp)
	if err != nil {
		return err
	}
	defer vkg.DestroyShaderModule(dev, m, nil)
	if p.countLayout, err = g.CreatePipelineLayout(nil); err != nil {
		return err
	}
	if p.count, err = g.CreateComputePipeline(m, p.countLayout); err != nil {
		return fmt.Errorf("pipeline count: %w", err)
	}
	return nil
}

func (p *pipelines) destroy(dev vkg.Device) {
	if p.count != vkg.NullPipeline {
		vkg.DestroyPipeline(dev, p.count, nil)
	}
	if p.countLayout != vkg.NullPipelineLayout {
		vkg.DestroyPipelineLayout(dev, p.countLayout, nil)
	}
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
