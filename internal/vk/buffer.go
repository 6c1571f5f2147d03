package vk

import (
	"errors"
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// HostBuffer is a buffer in host-visible, host-coherent memory, mapped for
// the life of the buffer.
type HostBuffer struct {
	dev    vk.Device
	Buffer vk.Buffer
	Memory vk.DeviceMemory
	Size   uint64
	Ptr    unsafe.Pointer
}

// HostBuffer makes a mapped buffer of size bytes with the given usage, in
// host-visible, host-coherent memory, cached on the host where the device
// has such a type: the host reads it (query results), and reading
// uncached memory costs a trip over the bus for every line.
func (d *Device) HostBuffer(size uint64, usage vk.BufferUsageFlagBits) (*HostBuffer, error) {
	bci := vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(usage),
		SharingMode: vk.SharingModeExclusive,
	}
	var buf vk.Buffer
	r := vk.CreateBuffer(d.Handle, &bci, nil, &buf)
	bci.Free() // vulkan-go's C copy of it
	if r != vk.Success {
		return nil, fmt.Errorf("vk: vkCreateBuffer(%d bytes): %w", size, vk.Error(r))
	}
	hb := &HostBuffer{dev: d.Handle, Buffer: buf, Size: size}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.Handle, buf, &req)
	req.Deref()
	req.Free() // vulkan-go's C copies of out-parameters, read by Deref
	var props vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(d.Physical, &props)
	props.Deref()
	props.Free()
	typ := hostType(&props, req.MemoryTypeBits)
	if typ < 0 {
		hb.Destroy()
		return nil, errors.New("vk: no host-visible, host-coherent memory type for a buffer")
	}
	mai := vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: uint32(typ),
	}
	var mem vk.DeviceMemory
	r = vk.AllocateMemory(d.Handle, &mai, nil, &mem)
	mai.Free()
	if r != vk.Success {
		hb.Destroy()
		return nil, fmt.Errorf("vk: vkAllocateMemory(%d bytes): %w", req.Size, vk.Error(r))
	}
	hb.Memory = mem
	if r := vk.BindBufferMemory(d.Handle, buf, mem, 0); r != vk.Success {
		hb.Destroy()
		return nil, fmt.Errorf("vk: vkBindBufferMemory: %w", vk.Error(r))
	}
	var p unsafe.Pointer
	if r := vk.MapMemory(d.Handle, mem, 0, vk.DeviceSize(size), 0, &p); r != vk.Success {
		hb.Destroy()
		return nil, fmt.Errorf("vk: vkMapMemory: %w", vk.Error(r))
	}
	hb.Ptr = p
	return hb, nil
}

// Uint64s views the mapped memory as n uint64 values.
func (b *HostBuffer) Uint64s() []uint64 {
	return unsafe.Slice((*uint64)(b.Ptr), b.Size/8)
}

// Destroy unmaps and frees the buffer.
func (b *HostBuffer) Destroy() {
	if b == nil {
		return
	}
	if b.Ptr != nil {
		vk.UnmapMemory(b.dev, b.Memory)
		b.Ptr = nil
	}
	if b.Buffer != vk.NullBuffer {
		vk.DestroyBuffer(b.dev, b.Buffer, nil)
		b.Buffer = vk.NullBuffer
	}
	if b.Memory != vk.NullDeviceMemory {
		vk.FreeMemory(b.dev, b.Memory, nil)
		b.Memory = vk.NullDeviceMemory
	}
}

// hostType returns the memory type, among those allowed by bits, that is
// host-visible and host-coherent, preferring one also host-cached; -1 for
// none.
func hostType(props *vk.PhysicalDeviceMemoryProperties, bits uint32) int {
	want := vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	cached := want | vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit)
	typ := -1
	for i := uint32(0); i < props.MemoryTypeCount; i++ {
		props.MemoryTypes[i].Deref()
		f := props.MemoryTypes[i].PropertyFlags
		switch {
		case bits&(1<<i) == 0 || f&want != want:
		case f&cached == cached:
			return int(i)
		case typ < 0:
			typ = int(i)
		}
	}
	return typ
}
