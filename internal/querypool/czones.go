package querypool

/*
#cgo CFLAGS: -I${SRCDIR}/../../profiler
#include <stdlib.h>
#include "guard.h"
#include "framescope_czones.h"

static int64_t fs_czone_begin(void *s, uintptr_t cmd, uint32_t stage, uint32_t name) {
	return fs_zone_begin((fsSlotHot *)s, cmd, stage, name);
}

static void fs_czone_end(void *s, uint64_t pair, uintptr_t cmd, uint32_t stage, uint64_t *refused) {
	fs_zone_end_first((fsSlotHot *)s, pair, cmd, stage, refused);
}

static void fs_czones_fill(framescope_czones *z) {
	z->begin = fs_czone_begin;
	z->end = fs_czone_end;
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// CZones is the zone path of one open recording for C code in the
// process (profiler/framescope_czones.h): in C memory, with the Go memory
// it points into (the recording's slot, the pool's books of refused
// ends) pinned, so that C may keep it between calls, until Free.
type CZones struct {
	z   *C.framescope_czones
	s   *Slot // the recording's slot it records into
	pin runtime.Pinner
}

// NewCZones returns the zone path of cmd's open recording, or nil where
// cmd has none: C's begin is then Begin's path for that recording's
// zones (fs_zone_begin on its slot), and its end EndQuiet's (all of a
// recording's pairs are of its slot's first block).
//
// old, a zone path this made for cmd before (nil: none), is returned
// again where it still serves (the same slot: a command buffer recorded
// again every frame makes no new one).
func (p *Pool) NewCZones(cmd vkg.CommandBuffer, begin, end vkg.PipelineStageFlagBits, old *CZones) *CZones {
	s, ok := p.openOf(cmdKey(cmd))
	if !ok || s == nil {
		return nil
	}
	if old != nil && old.s == s && old.z.begin_stage == C.uint32_t(begin) && old.z.end_stage == C.uint32_t(end) {
		return old
	}
	c := &CZones{z: (*C.framescope_czones)(C.calloc(1, C.sizeof_framescope_czones)), s: s}
	if c.z == nil {
		return nil
	}
	c.pin.Pin(s.slotHot)
	c.pin.Pin(&p.refusedEnds)
	c.z.slot = unsafe.Pointer(s.hotC())
	c.z.refused = (*C.uint64_t)(unsafe.Pointer(&p.refusedEnds))
	c.z.begin_stage, c.z.end_stage = C.uint32_t(begin), C.uint32_t(end)
	C.fs_czones_fill(c.z)
	return c
}

// Ptr is the framescope_czones C holds.
func (c *CZones) Ptr() unsafe.Pointer { return unsafe.Pointer(c.z) }

// Free ends the zone path: C must not use it any more.
func (c *CZones) Free() {
	c.pin.Unpin()
	C.free(unsafe.Pointer(c.z))
	c.z = nil
}
