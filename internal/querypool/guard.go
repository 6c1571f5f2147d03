package querypool

/*
#include "guard.h"
*/
import "C"

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// The C half of the zone path keeps these in step with Go's.
const (
	genBits       = C.FS_GEN_BITS
	stateBits     = C.FS_STATE_BITS
	cursorSlots   = C.FS_CURSORS
	cursorBlock   = C.FS_CURSOR_BLOCK
	cSlotRecord   = C.FS_SLOT_RECORDING
	cSlotDead     = C.FS_SLOT_DEAD
	cPairVoid     = C.FS_PAIR_VOID
	cEndLate      = C.FS_END_LATE
	cEndMisuse    = C.FS_END_MISUSE
	cPairOpen     = C.FS_PAIR_OPEN
	cPairEnded    = C.FS_PAIR_ENDED
	cPairEnding   = C.FS_PAIR_ENDING
	cPairUnused   = C.FS_PAIR_UNUSED
	cBeginNoFrame = C.FS_BEGIN_NOFRAME
	cBeginSlow    = C.FS_BEGIN_SLOW
)

// Compile-time checks: the states and layouts C reads are Go's.
var (
	_ [cSlotRecord - slotRecording]struct{}
	_ [slotRecording - cSlotRecord]struct{}
	_ [cSlotDead - slotDead]struct{}
	_ [slotDead - cSlotDead]struct{}
	_ [cPairVoid - pairVoid]struct{}
	_ [pairVoid - cPairVoid]struct{}
	_ [unsafe.Offsetof(endRefusals{}.late) - cEndLate*8]struct{}
	_ [cEndLate*8 - unsafe.Offsetof(endRefusals{}.late)]struct{}
	_ [unsafe.Offsetof(endRefusals{}.misuse) - cEndMisuse*8]struct{}
	_ [cEndMisuse*8 - unsafe.Offsetof(endRefusals{}.misuse)]struct{}
	_ [unsafe.Sizeof(atomic.Bool{}) - 4]struct{}
	_ [4 - unsafe.Sizeof(atomic.Bool{})]struct{}
	_ [cPairOpen - pairOpen]struct{}
	_ [pairOpen - cPairOpen]struct{}
	_ [cPairEnded - pairEnded]struct{}
	_ [pairEnded - cPairEnded]struct{}
	_ [cPairEnding - pairEnding]struct{}
	_ [pairEnding - cPairEnding]struct{}
	_ [cPairUnused - pairUnused]struct{}
	_ [pairUnused - cPairUnused]struct{}
	_ [unsafe.Sizeof(cursor{}) - C.sizeof_fsCursor]struct{}
	_ [C.sizeof_fsCursor - unsafe.Sizeof(cursor{})]struct{}
	_ [unsafe.Sizeof(pairMeta{}) - C.sizeof_fsPairMeta]struct{}
	_ [C.sizeof_fsPairMeta - unsafe.Sizeof(pairMeta{})]struct{}
	_ [unsafe.Sizeof(slotHot{}) - C.sizeof_fsSlotHot]struct{}
	_ [C.sizeof_fsSlotHot - unsafe.Sizeof(slotHot{})]struct{}
	_ [unsafe.Offsetof(pairMeta{}.cmd) - 8]struct{}
	_ [8 - unsafe.Offsetof(pairMeta{}.cmd)]struct{}
	_ [unsafe.Offsetof(slotHot{}.qcap) - C.FS_HOT_CAP]struct{}
	_ [C.FS_HOT_CAP - unsafe.Offsetof(slotHot{}.qcap)]struct{}
	_ [unsafe.Offsetof(slotHot{}.frozen) - C.FS_HOT_FROZEN]struct{}
	_ [C.FS_HOT_FROZEN - unsafe.Offsetof(slotHot{}.frozen)]struct{}
	_ [unsafe.Offsetof(slotHot{}.qpool) - C.FS_HOT_POOL]struct{}
	_ [C.FS_HOT_POOL - unsafe.Offsetof(slotHot{}.qpool)]struct{}
	_ [unsafe.Offsetof(slotHot{}.writeTS) - C.FS_HOT_FN]struct{}
	_ [C.FS_HOT_FN - unsafe.Offsetof(slotHot{}.writeTS)]struct{}
	_ [unsafe.Offsetof(slotHot{}.elsewhere) - C.FS_HOT_ELSEWHERE]struct{}
	_ [C.FS_HOT_ELSEWHERE - unsafe.Offsetof(slotHot{}.elsewhere)]struct{}
	_ [unsafe.Offsetof(slotHot{}.next) - C.FS_HOT_NEXT]struct{}
	_ [C.FS_HOT_NEXT - unsafe.Offsetof(slotHot{}.next)]struct{}
	// slotMem's units: the hot fields take whole cursors' room.
	_ [unsafe.Sizeof(slotHot{}) % unsafe.Sizeof(cursor{})]struct{}
)

var (
	guardOnce sync.Once
	// guardFenceless: Begin goes without a fence (membarrier works).
	guardFenceless bool
)

// GuardFenceEnv, set to 1, makes every Begin fence where membarrier would
// spare it: the path taken where membarrier is missing, for its tests.
const GuardFenceEnv = "FRAMESCOPE_GUARD_FENCE"

// initGuard sets the guard up once per process, before a pool hands out
// its first pair.
func initGuard() {
	guardOnce.Do(func() {
		fence := C.int(0)
		if os.Getenv(GuardFenceEnv) == "1" {
			fence = 1
		}
		guardFenceless = C.fs_guard_init(fence) > 0
	})
}

// guardRecords returns how many thread records the guard has, and how
// many live threads hold one.
func guardRecords() (n, used int) {
	var u C.int
	n = int(C.fs_guard_records(&u))
	return n, int(u)
}

// guardSync returns once every Begin that may have read a slot's state
// before the caller changed it has finished.
func guardSync() { C.fs_guard_sync() }

// beginC hands out a pair of s's first block and records its begin
// timestamp (see fs_zone_begin): gen<<32 | query, or cBeginNoFrame, or
// cBeginSlow for Go's path. It is small enough to inline, as Begin is.
// The result comes back as cgo returns one (see fs_zone_begin).
func beginC(s *Slot, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, name uint32) int64 {
	return int64(C.fs_zone_begin(s.hotC(), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage), C.uint32_t(name)))
}

// hotC is s's hot fields as C has them; the cursors and the first
// block's records lie on either side (slotMem).
func (s *Slot) hotC() *C.fsSlotHot { return (*C.fsSlotHot)(unsafe.Pointer(s.slotHot)) }

// endFirstC ends the pair of s's first block that Begin handed out as
// gen<<32 | q (see fs_zone_end_first), and keeps the books as endC does.
func endFirstC(s *Slot, q, gen uint32, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, refused *endRefusals) {
	C.fs_zone_end_first(s.hotC(), C.uint64_t(uint64(gen)<<32|uint64(q)), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage),
		(*C.uint64_t)(unsafe.Pointer(refused)))
}

// endC ends the pair whose record is m, handed out in generation gen in
// slot s (see fs_zone_end), and keeps the books: s.elsewhere, and
// refused, where it returns false because the pair was not open in gen.
func endC(m *pairMeta, gen uint32, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, pool vkg.QueryPool, query uint32,
	s *Slot, refused *endRefusals) bool {
	return C.fs_zone_end((*C.fsPairMeta)(unsafe.Pointer(m)), C.uint32_t(gen), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage),
		C.uint64_t(uintptr(unsafe.Pointer(pool))), C.uint32_t(query), s.hotC(), (*C.uint64_t)(unsafe.Pointer(refused))) != 0
}

// endQuietC is endC without its answer (fs_zone_end_quiet).
func endQuietC(m *pairMeta, gen uint32, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, pool vkg.QueryPool, query uint32,
	s *Slot, refused *endRefusals) {
	C.fs_zone_end_quiet((*C.fsPairMeta)(unsafe.Pointer(m)), C.uint32_t(gen), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage),
		C.uint64_t(uintptr(unsafe.Pointer(pool))), C.uint32_t(query), s.hotC(), (*C.uint64_t)(unsafe.Pointer(refused)))
}

// olderC is C's older, for the test that both agree.
func olderC(w, g uint32) bool { return C.fs_older(C.uint32_t(w), C.uint32_t(g)) != 0 }

// noopTimestamp is a C function with vkCmdWriteTimestamp's signature that
// does nothing, and callTimestamp calls such a function from Go: the
// driver's stand-in and the floor of BenchmarkZonePath, which times the
// zone path alone.
func noopTimestamp() uintptr { return uintptr(C.fs_noop_timestamp) }

func callTimestamp(fn uintptr, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, query uint32) {
	C.fs_call_timestamp(C.uintptr_t(fn), C.uintptr_t(uintptr(unsafe.Pointer(cmd))), C.uint32_t(stage), 0, C.uint32_t(query))
}
