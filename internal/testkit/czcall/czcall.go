// Package czcall calls a recording's zone path for C code
// (profiler.Recording.C, framescope_czones.h) from Go tests, as C code
// would: tests cannot use cgo themselves.
package czcall

/*
#cgo CFLAGS: -I${SRCDIR}/../../../profiler
#include "framescope_czones.h"

static int64_t czcall_begin(void *z, uintptr_t cmd, uint32_t name) {
	framescope_czones *c = z;
	return c->begin(c->slot, cmd, c->begin_stage, name);
}

static void czcall_end(void *z, int64_t pair, uintptr_t cmd) {
	framescope_czones *c = z;
	c->end(c->slot, (uint64_t)pair, cmd, c->end_stage, c->refused);
}
*/
import "C"

import (
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Begin begins a zone named name in cmd through z, and returns its pair,
// negative where the zone must go through Go.
func Begin(z unsafe.Pointer, cmd vkg.CommandBuffer, name uint32) int64 {
	return int64(C.czcall_begin(z, C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(name)))
}

// End ends the zone of pair in cmd through z.
func End(z unsafe.Pointer, pair int64, cmd vkg.CommandBuffer) {
	C.czcall_end(z, C.int64_t(pair), C.uintptr_t(uintptr(unsafe.Pointer(cmd))))
}
