package vk

/*
#include <stdlib.h>
#include "procs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// HostBuffer is a buffer in host-visible, host-coherent memory, mapped for
// the life of the buffer.
type HostBuffer struct {
	d      *Device
	b      C.fsHostBuffer
	Buffer vk.Buffer
	Size   uint64
	Ptr    unsafe.Pointer
}

// HostBuffer makes a mapped buffer of size bytes with the given usage, in
// host-visible, host-coherent memory, cached on the host where the device
// has such a type: the host reads it (query results), and reading
// uncached memory costs a trip over the bus for every line.
func (d *Device) HostBuffer(size uint64, usage vk.BufferUsageFlagBits) (*HostBuffer, error) {
	hb := &HostBuffer{d: d, Size: size}
	C.fs_host_buffer_create(&d.procs, d.dev(), C.uint64_t(size), C.uint32_t(usage), &hb.b)
	if hb.b.failed != nil {
		return nil, fmt.Errorf("vk: %s(%d bytes): %w", C.GoString(hb.b.failed), size, vk.Error(vk.Result(hb.b.rc)))
	}
	typ := d.Instance.hostType(d.Physical, uint32(hb.b.memoryTypes))
	if typ < 0 {
		hb.Destroy()
		return nil, errors.New("vk: no host-visible, host-coherent memory type for a buffer")
	}
	C.fs_host_buffer_bind(&d.procs, d.dev(), C.uint32_t(typ), &hb.b)
	if hb.b.failed != nil {
		err := fmt.Errorf("vk: %s(%d bytes): %w", C.GoString(hb.b.failed), uint64(hb.b.memorySize), vk.Error(vk.Result(hb.b.rc)))
		hb.Destroy()
		return nil, err
	}
	hb.Buffer = *(*vk.Buffer)(unsafe.Pointer(&hb.b.buffer))
	hb.Ptr = hb.b.ptr
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
	C.fs_host_buffer_destroy(&b.d.procs, b.d.dev(), &b.b)
	b.Ptr, b.Buffer = nil, vk.NullBuffer
}

// hostType returns the memory type of pd, among those allowed by bits,
// that is host-visible and host-coherent, preferring one also
// host-cached; -1 for none.
func (in *Instance) hostType(pd vk.PhysicalDevice, bits uint32) int {
	buf := C.malloc(C.fs_properties_size)
	defer C.free(buf)
	C.fs_get_memory_properties(&in.procs, C.fsVkPhysicalDevice(unsafe.Pointer(pd)), buf)
	props := vk.NewPhysicalDeviceMemoryPropertiesRef(buf)
	props.Deref()
	return hostType(props, bits)
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
