package demo

import (
	"fmt"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// memoryTypes finds memory types on one physical device.
type memoryTypes struct {
	props vkg.PhysicalDeviceMemoryProperties
}

func newMemoryTypes(pd vkg.PhysicalDevice) *memoryTypes {
	var props vkg.PhysicalDeviceMemoryProperties
	vkg.GetPhysicalDeviceMemoryProperties(pd, &props)
	props.Deref()
	for i := uint32(0); i < props.MemoryTypeCount; i++ {
		props.MemoryTypes[i].Deref()
	}
	return &memoryTypes{props: props}
}

// find returns the first memory type allowed by bits that has every flag
// of want.
func (m *memoryTypes) find(bits uint32, want vkg.MemoryPropertyFlagBits) (uint32, error) {
	w := vkg.MemoryPropertyFlags(want)
	for i := uint32(0); i < m.props.MemoryTypeCount; i++ {
		if bits&(1<<i) != 0 && m.props.MemoryTypes[i].PropertyFlags&w == w {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no memory type with flags %#x among %#x", uint32(want), bits)
}

// allocate allocates memory for req with the wanted properties.
func (m *memoryTypes) allocate(dev vkg.Device, req vkg.MemoryRequirements, want vkg.MemoryPropertyFlagBits) (vkg.DeviceMemory, error) {
	typ, err := m.find(req.MemoryTypeBits, want)
	if err != nil {
		return vkg.NullDeviceMemory, err
	}
	ai := vkg.MemoryAllocateInfo{
		SType:           vkg.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: typ,
	}
	var mem vkg.DeviceMemory
	if r := vkg.AllocateMemory(dev, &ai, nil, &mem); r != vkg.Success {
		return vkg.NullDeviceMemory, fmt.Errorf("vkAllocateMemory(%d bytes): %w", req.Size, vkg.Error(r))
	}
	return mem, nil
}

// hostBuffer is a buffer in host-visible, host-coherent memory, mapped
// while it lives.
type hostBuffer struct {
	buf  vkg.Buffer
	mem  vkg.DeviceMemory
	size int
	ptr  unsafe.Pointer
}

func newHostBuffer(dev vkg.Device, m *memoryTypes, size int, usage vkg.BufferUsageFlagBits) (*hostBuffer, error) {
	ci := vkg.BufferCreateInfo{
		SType:       vkg.StructureTypeBufferCreateInfo,
		Size:        vkg.DeviceSize(size),
		Usage:       vkg.BufferUsageFlags(usage),
		SharingMode: vkg.SharingModeExclusive,
	}
	var buf vkg.Buffer
	if r := vkg.CreateBuffer(dev, &ci, nil, &buf); r != vkg.Success {
		return nil, fmt.Errorf("vkCreateBuffer(%d bytes): %w", size, vkg.Error(r))
	}
	b := &hostBuffer{buf: buf, size: size}
	var req vkg.MemoryRequirements
	vkg.GetBufferMemoryRequirements(dev, buf, &req)
	req.Deref()
	mem, err := m.allocate(dev, req, vkg.MemoryPropertyHostVisibleBit|vkg.MemoryPropertyHostCoherentBit)
	if err != nil {
		b.destroy(dev)
		return nil, err
	}
	b.mem = mem
	if r := vkg.BindBufferMemory(dev, buf, mem, 0); r != vkg.Success {
		b.destroy(dev)
		return nil, fmt.Errorf("vkBindBufferMemory: %w", vkg.Error(r))
	}
	var p unsafe.Pointer
	if r := vkg.MapMemory(dev, mem, 0, vkg.DeviceSize(size), 0, &p); r != vkg.Success {
		b.destroy(dev)
		return nil, fmt.Errorf("vkMapMemory: %w", vkg.Error(r))
	}
	b.ptr = p
	return b, nil
}

// bytes views the mapped memory.
func (b *hostBuffer) bytes() []byte { return unsafe.Slice((*byte)(b.ptr), b.size) }

func (b *hostBuffer) destroy(dev vkg.Device) {
	if b == nil {
		return
	}
	if b.ptr != nil {
		vkg.UnmapMemory(dev, b.mem)
		b.ptr = nil
	}
	if b.buf != vkg.NullBuffer {
		vkg.DestroyBuffer(dev, b.buf, nil)
		b.buf = vkg.NullBuffer
	}
	if b.mem != vkg.NullDeviceMemory {
		vkg.FreeMemory(dev, b.mem, nil)
		b.mem = vkg.NullDeviceMemory
	}
}

// target is one color image rendered into, with its view, framebuffer and
// the host buffer its pixels are copied to.
type target struct {
	image    vkg.Image
	mem      vkg.DeviceMemory
	view     vkg.ImageView
	fb       vkg.Framebuffer
	readback *hostBuffer
}

const colorFormat = vkg.FormatR8g8b8a8Unorm

func newTarget(g *vk.Graphics, dev vkg.Device, m *memoryTypes, rp vkg.RenderPass, w, h int) (*target, error) {
	t := &target{}
	ici := vkg.ImageCreateInfo{
		SType:         vkg.StructureTypeImageCreateInfo,
		ImageType:     vkg.ImageType2d,
		Format:        colorFormat,
		Extent:        vkg.Extent3D{Width: uint32(w), Height: uint32(h), Depth: 1},
		MipLevels:     1,
		ArrayLayers:   1,
		Samples:       vkg.SampleCount1Bit,
		Tiling:        vkg.ImageTilingOptimal,
		Usage:         vkg.ImageUsageFlags(vkg.ImageUsageColorAttachmentBit | vkg.ImageUsageTransferSrcBit),
		SharingMode:   vkg.SharingModeExclusive,
		InitialLayout: vkg.ImageLayoutUndefined,
	}
	var img vkg.Image
	if r := vkg.CreateImage(dev, &ici, nil, &img); r != vkg.Success {
		return nil, fmt.Errorf("vkCreateImage %dx%d: %w", w, h, vkg.Error(r))
	}
	t.image = img
	var req vkg.MemoryRequirements
	vkg.GetImageMemoryRequirements(dev, img, &req)
	req.Deref()
	mem, err := m.allocate(dev, req, vkg.MemoryPropertyDeviceLocalBit)
	if err != nil {
		t.destroy(dev)
		return nil, err
	}
	t.mem = mem
	if r := vkg.BindImageMemory(dev, img, mem, 0); r != vkg.Success {
		t.destroy(dev)
		return nil, fmt.Errorf("vkBindImageMemory: %w", vkg.Error(r))
	}
	vci := vkg.ImageViewCreateInfo{
		SType:            vkg.StructureTypeImageViewCreateInfo,
		Image:            img,
		ViewType:         vkg.ImageViewType2d,
		Format:           colorFormat,
		SubresourceRange: colorRange(),
	}
	var view vkg.ImageView
	if r := vkg.CreateImageView(dev, &vci, nil, &view); r != vkg.Success {
		t.destroy(dev)
		return nil, fmt.Errorf("vkCreateImageView: %w", vkg.Error(r))
	}
	t.view = view
	fb, err := g.CreateFramebuffer(rp, []vkg.ImageView{view}, uint32(w), uint32(h))
	if err != nil {
		t.destroy(dev)
		return nil, err
	}
	t.fb = fb
	t.readback, err = newHostBuffer(dev, m, w*h*4, vkg.BufferUsageTransferDstBit)
	if err != nil {
		t.destroy(dev)
		return nil, err
	}
	return t, nil
}

func (t *target) destroy(dev vkg.Device) {
	if t.readback != nil {
		t.readback.destroy(dev)
	}
	if t.fb != vkg.NullFramebuffer {
		vkg.DestroyFramebuffer(dev, t.fb, nil)
	}
	if t.view != vkg.NullImageView {
		vkg.DestroyImageView(dev, t.view, nil)
	}
	if t.image != vkg.NullImage {
		vkg.DestroyImage(dev, t.image, nil)
	}
	if t.mem != vkg.NullDeviceMemory {
		vkg.FreeMemory(dev, t.mem, nil)
	}
	*t = target{}
}

func colorRange() vkg.ImageSubresourceRange {
	return vkg.ImageSubresourceRange{
		AspectMask: vkg.ImageAspectFlags(vkg.ImageAspectColorBit),
		LevelCount: 1,
		LayerCount: 1,
	}
}
