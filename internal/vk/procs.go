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

// Dispatch names the entry points through which Framescope calls Vulkan
// for a device made elsewhere (Wrap): a Vulkan layer gives the next
// layer's, so that its calls go down the chain from it, never back
// through the loader's top and the layers above, and never through
// vulkan-go's table, which every instance made in the process loads
// again. Nil fields: the loader's, as the application calls.
type Dispatch struct {
	GetInstanceProcAddr unsafe.Pointer // PFN_vkGetInstanceProcAddr
	GetDeviceProcAddr   unsafe.Pointer // PFN_vkGetDeviceProcAddr
	// SetDeviceLoaderData is the loader's PFN_vkSetDeviceLoaderData, with
	// which a layer gives the command buffers it allocates their
	// dispatch; nil: Framescope copies the device's.
	SetDeviceLoaderData unsafe.Pointer
}

// useProcs loads the instance's entry points through gipa.
func (in *Instance) useProcs(gipa unsafe.Pointer) error {
	if missing := C.fs_load_instance_procs(C.fsPFN(gipa), C.fsVkInstance(unsafe.Pointer(in.Handle)), &in.procs); missing != nil {
		return fmt.Errorf("vk: the instance has no %s", C.GoString(missing))
	}
	return nil
}

// lookup loads the first of names the instance answers.
func (in *Instance) lookup(names ...string) (proc, string) {
	for _, n := range names {
		cn := C.CString(n)
		p := C.fs_gipa_proc(in.procs.gipa, C.fsVkInstance(unsafe.Pointer(in.Handle)), cn)
		C.free(unsafe.Pointer(cn))
		if p != nil {
			return proc(p), n
		}
	}
	return nil, ""
}

// useProcs loads the device's entry points through gdpa (nil: the
// instance's vkGetDeviceProcAddr).
func (d *Device) useProcs(gdpa, setLoaderData unsafe.Pointer) error {
	if gdpa == nil {
		gdpa = unsafe.Pointer(d.Instance.procs.getDeviceProcAddr)
	}
	if missing := C.fs_load_device_procs(C.fsPFN(gdpa), C.fsPFN(setLoaderData), C.fsVkDevice(unsafe.Pointer(d.Handle)), &d.procs); missing != nil {
		return fmt.Errorf("vk: the device has no %s", C.GoString(missing))
	}
	return nil
}

// lookup loads the first of names the device answers.
func (d *Device) lookup(names ...string) (proc, string) {
	for _, n := range names {
		cn := C.CString(n)
		p := C.fs_gdpa_proc(d.procs.gdpa, C.fsVkDevice(unsafe.Pointer(d.Handle)), cn)
		C.free(unsafe.Pointer(cn))
		if p != nil {
			return proc(p), n
		}
	}
	return nil, ""
}

func (d *Device) dev() C.fsVkDevice { return C.fsVkDevice(unsafe.Pointer(d.Handle)) }

// queue returns the device's queue family.index.
func (d *Device) queue(family, index uint32) vk.Queue {
	return vk.Queue(C.fs_get_device_queue(&d.procs, d.dev(), C.uint32_t(family), C.uint32_t(index)))
}

// WaitIdle waits for the device to finish all its work (vkDeviceWaitIdle).
func (d *Device) WaitIdle() error {
	if r := C.fs_device_wait_idle(&d.procs, d.dev()); r != 0 {
		return fmt.Errorf("vk: vkDeviceWaitIdle: %w", vk.Error(vk.Result(r)))
	}
	return nil
}

// CreateQueryPool makes a query pool of count queries of typ; stats are
// the pipeline statistics of a pipeline-statistics pool.
func (d *Device) CreateQueryPool(typ vk.QueryType, count, stats uint32) (vk.QueryPool, error) {
	var h C.fsVkQueryPool
	if r := C.fs_create_query_pool(&d.procs, d.dev(), C.int32_t(typ), C.uint32_t(count), C.uint32_t(stats), &h); r != 0 {
		return vk.NullQueryPool, vk.Error(vk.Result(r))
	}
	return *(*vk.QueryPool)(unsafe.Pointer(&h)), nil
}

// DestroyQueryPool destroys a pool CreateQueryPool made.
func (d *Device) DestroyQueryPool(pool vk.QueryPool) {
	C.fs_destroy_query_pool(d.procs.destroyQueryPool, d.dev(), C.fsVkQueryPool(handle64(pool)))
}

// QueryResults reads count queries from first into data (size bytes,
// stride apart) with flags (vkGetQueryPoolResults).
func (d *Device) QueryResults(pool vk.QueryPool, first, count uint32, size uint64, data unsafe.Pointer, stride uint64, flags vk.QueryResultFlags) vk.Result {
	return vk.Result(C.fs_query_results(d.procs.getQueryPoolResults, d.dev(), C.fsVkQueryPool(handle64(pool)),
		C.uint32_t(first), C.uint32_t(count), C.size_t(size), data, C.uint64_t(stride), C.uint32_t(flags)))
}

// CmdResetQueryPool records the reset of count queries from first.
func (d *Device) CmdResetQueryPool(cmd vk.CommandBuffer, pool vk.QueryPool, first, count uint32) {
	C.fs_cmd_reset_query_pool(d.procs.cmdResetQueryPool, C.uintptr_t(uintptr(unsafe.Pointer(cmd))),
		C.fsVkQueryPool(handle64(pool)), C.uint32_t(first), C.uint32_t(count))
}

// CmdBeginQuery and CmdEndQuery record a query's begin and end.
func (d *Device) CmdBeginQuery(cmd vk.CommandBuffer, pool vk.QueryPool, query uint32) {
	C.fs_cmd_begin_query(d.procs.cmdBeginQuery, C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.fsVkQueryPool(handle64(pool)), C.uint32_t(query))
}

func (d *Device) CmdEndQuery(cmd vk.CommandBuffer, pool vk.QueryPool, query uint32) {
	C.fs_cmd_end_query(d.procs.cmdEndQuery, C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.fsVkQueryPool(handle64(pool)), C.uint32_t(query))
}

// Probe is a command buffer that writes one timestamp, for calibrating
// without calibrated timestamps: recorded, submitted, waited for, read.
type Probe struct {
	d *Device
	p C.fsProbe
}

// NewProbe makes a probe for queues of family.
func (d *Device) NewProbe(family uint32) (*Probe, error) {
	b := &Probe{d: d, p: C.fs_probe_make(&d.procs, d.dev(), C.uint32_t(family))}
	if b.p.failed != nil {
		err := fmt.Errorf("vk: %s: %w", C.GoString(b.p.failed), vk.Error(vk.Result(b.p.rc)))
		b.Destroy()
		return nil, err
	}
	return b, nil
}

// Record records the timestamp again, its query reset on the host where
// the device allows it (a transfer-only queue may not reset queries in a
// command buffer), else in the command buffer.
func (b *Probe) Record() error {
	hostReset := b.d.ResetQueryPool(b.pool(), 0, 1) == nil
	if r := C.fs_probe_record(&b.d.procs, b.d.dev(), &b.p, cbool(hostReset), C.fsPFN(b.d.writeTS)); r != 0 {
		return fmt.Errorf("vk: recording the probe: %w", vk.Error(vk.Result(r)))
	}
	return nil
}

func (b *Probe) pool() vk.QueryPool { return *(*vk.QueryPool)(unsafe.Pointer(&b.p.queryPool)) }

// Submit submits the probe to q, which must be of its family.
func (b *Probe) Submit(q vk.Queue) error {
	var fence vk.Fence
	*(*uint64)(unsafe.Pointer(&fence)) = uint64(b.p.fence)
	return b.d.QueueSubmit(q, []vk.CommandBuffer{vk.CommandBuffer(b.p.cmd)}, fence)
}

// ErrProbeTimeout: the probe's submission did not finish in time.
var ErrProbeTimeout = errors.New("vk: the probe did not finish in time")

// Wait waits up to timeout ns for the probe's submission.
func (b *Probe) Wait(timeout int64) error {
	switch r := vk.Result(C.fs_probe_wait(&b.d.procs, b.d.dev(), &b.p, C.uint64_t(max(timeout, 1)))); r {
	case vk.Success:
		return nil
	case vk.Timeout:
		return ErrProbeTimeout
	default:
		return vk.Error(r)
	}
}

// Done reports whether the probe's submission finished.
func (b *Probe) Done() bool {
	return vk.Result(C.fs_probe_status(&b.d.procs, b.d.dev(), &b.p)) == vk.Success
}

// Timestamp reads the timestamp the probe wrote.
func (b *Probe) Timestamp() (uint64, error) {
	var res [2]uint64
	r := b.d.QueryResults(b.pool(), 0, 1, 16, unsafe.Pointer(&res[0]), 16, vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWithAvailabilityBit))
	if r != vk.Success || res[1] == 0 {
		return 0, fmt.Errorf("vk: the probe's timestamp is unavailable (%v)", vk.Error(r))
	}
	return res[0], nil
}

// Destroy destroys what the probe made; its submission must be over.
func (b *Probe) Destroy() { C.fs_probe_destroy(&b.d.procs, b.d.dev(), &b.p) }
