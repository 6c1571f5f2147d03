// Command lib is the Go half of Framescope's Vulkan layer, built as a C
// shared library (libframescope_go.so) that the layer's C half
// (layer/shim) loads on the first instance and calls at the commands it
// hooks. It profiles the program through the public profiler API, as any
// program would: a GPU context per device and queue family, a recording
// per command buffer (so that command buffers recorded once and
// submitted many times are timed at every execution), a zone per render
// pass, dynamic-rendering instance and debug label, a frame per present,
// and CPU spans for the calls that submit, present and wait. At exit it
// writes the trace to $FRAMESCOPE_OUT.
//
// Build it with `make layer`; run a program under it with
// `framescope run -- PROGRAM`.
package main

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/framescope/framescope/profiler"
)

func main() {}

// The entry points the shim looks up (framescope_go_*), one per hooked
// event; see layer/shim/shim.h for when each is called.

//export framescope_go_device_created
func framescope_go_device_created(instance, physical, device, gipa, gdpa, setLoaderData unsafe.Pointer, api, flags C.uint32_t, n C.uint32_t, families, counts *C.uint32_t) {
	fam := unsafe.Slice((*uint32)(unsafe.Pointer(families)), int(n))
	cnt := unsafe.Slice((*uint32)(unsafe.Pointer(counts)), int(n))
	chain := profiler.Dispatch{GetInstanceProcAddr: gipa, GetDeviceProcAddr: gdpa, SetDeviceLoaderData: setLoaderData}
	the.deviceCreated(instance, physical, device, chain, uint32(api), uint32(flags), fam, cnt)
}

//export framescope_go_device_destroyed
func framescope_go_device_destroyed(device unsafe.Pointer) { the.deviceDestroyed(device) }

//export framescope_go_queue
func framescope_go_queue(device, queue unsafe.Pointer, family, index C.uint32_t) {
	the.queue(device, queue, uint32(family), uint32(index))
}

//export framescope_go_pool
func framescope_go_pool(device unsafe.Pointer, pool C.uint64_t, family C.uint32_t) {
	the.pool(device, uint64(pool), uint32(family))
}

//export framescope_go_pool_gone
func framescope_go_pool_gone(device unsafe.Pointer, pool C.uint64_t, destroyed C.int) {
	the.poolGone(device, uint64(pool), destroyed != 0)
}

//export framescope_go_allocated
func framescope_go_allocated(device unsafe.Pointer, pool C.uint64_t, n C.uint32_t, cmds *unsafe.Pointer, secondary C.int) {
	the.allocated(device, uint64(pool), unsafe.Slice(cmds, int(n)), secondary != 0)
}

//export framescope_go_freed
func framescope_go_freed(device unsafe.Pointer, n C.uint32_t, cmds *unsafe.Pointer) {
	the.freed(unsafe.Slice(cmds, int(n)))
}

//export framescope_go_cmd_begin
func framescope_go_cmd_begin(cmd unsafe.Pointer, flags C.uint32_t) unsafe.Pointer {
	return the.cmdBegin(cmd, uint32(flags))
}

//export framescope_go_name
func framescope_go_name(label *C.char, kind C.int) C.uint32_t {
	return C.uint32_t(the.name(label, int(kind)))
}

//export framescope_go_cmd_end
func framescope_go_cmd_end(cmd unsafe.Pointer) { the.cmdEnd(cmd) }

//export framescope_go_execute
func framescope_go_execute(primary unsafe.Pointer, n C.uint32_t, secondaries *unsafe.Pointer) {
	the.execute(primary, unsafe.Slice(secondaries, int(n)))
}

//export framescope_go_stats_query
func framescope_go_stats_query(cmd unsafe.Pointer, begun C.int) { the.statsQuery(cmd, begun != 0) }

//export framescope_go_zone_begin
func framescope_go_zone_begin(cmd unsafe.Pointer, name *C.char, kind C.int) {
	the.zoneBegin(cmd, name, int(kind))
}

//export framescope_go_zone_end
func framescope_go_zone_end(cmd unsafe.Pointer, kind C.int) { the.zoneEnd(cmd, int(kind)) }

//export framescope_go_cpu_begin
func framescope_go_cpu_begin(what, tid C.int) C.uint64_t {
	return C.uint64_t(the.cpuBegin(int(what), int(tid)))
}

//export framescope_go_cpu_end
func framescope_go_cpu_end(span C.uint64_t) { the.cpuEnd(uint64(span)) }

//export framescope_go_submit_begin
func framescope_go_submit_begin(queue unsafe.Pointer, tid C.int, n C.uint32_t, cmds *unsafe.Pointer) C.uint64_t {
	return C.uint64_t(the.submitBegin(queue, int(tid), unsafe.Slice(cmds, int(n))))
}

//export framescope_go_present
func framescope_go_present(queue unsafe.Pointer) { the.present(queue) }

//export framescope_go_boundary
func framescope_go_boundary() { the.boundary() }

//export framescope_go_at_exit
func framescope_go_at_exit() {
	the.collect.flushing(nil) // the profiler's close makes the last batch
	the.atExit()
}
