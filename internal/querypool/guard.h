// The zone path's C half: a Begin or End is one call here, which records
// its timestamp through the device's vkCmdWriteTimestamp and keeps the
// pool's books with C11 orderings (see the package doc, "The zone path").
#ifndef FS_GUARD_H
#define FS_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define FS_GEN_BITS 29
#define FS_STATE_BITS 3

// Slot states shared with Go (slot.go's slotRecording, slotDead).
#define FS_SLOT_RECORDING 1
#define FS_SLOT_DEAD 7

// Pair states (slot.go's pairOpen ... pairEnding).
#define FS_PAIR_OPEN 0
#define FS_PAIR_ENDED 1
#define FS_PAIR_VOID 2
#define FS_PAIR_ENDING 3
#define FS_PAIR_UNUSED 4

// A slot's cursors: one per command buffer that records zones in its
// frame, FS_CURSORS at most (a probe of FS_CURSOR_PROBES finds one), each
// handing out the pairs of the blocks it took, of up to FS_CURSOR_BLOCK
// queries.
#define FS_CURSORS 64
#define FS_CURSOR_PROBES 8
#define FS_CURSOR_BLOCK 32

// The counts of refused Ends (Go's endRefusals), by cause.
#define FS_END_LATE 0
#define FS_END_MISUSE 1

// fs_zone_begin's refusals; a result >= 0 is gen<<32 | query.
#define FS_BEGIN_NOFRAME (-1) // the slot is not recording
#define FS_BEGIN_SLOW (-2)    // past the first block, or no guard: Go's path

// The layouts of Go's slotHot and pairMeta (checked in guard.go).
typedef struct {
	uint32_t state, gen, cap, frozen;
	uint64_t pool;
	uintptr_t fn;       // the device's vkCmdWriteTimestamp
	uint32_t elsewhere; // a pair of the frame was ended in another command buffer
	char pad0[28];      // next, written once a block, on a cache line apart
	uint32_t next;
	char pad1[60];
} fsSlotHot;

// Its offsets, for guard.go's checks against Go's slotHot.
enum {
	FS_HOT_CAP = offsetof(fsSlotHot, cap),
	FS_HOT_FROZEN = offsetof(fsSlotHot, frozen),
	FS_HOT_POOL = offsetof(fsSlotHot, pool),
	FS_HOT_FN = offsetof(fsSlotHot, fn),
	FS_HOT_ELSEWHERE = offsetof(fsSlotHot, elsewhere),
	FS_HOT_NEXT = offsetof(fsSlotHot, next),
};

typedef struct {
	uint32_t state, name;
	uint64_t cmd;
} fsPairMeta;

// fsCursor is Go's cursor: a cache line, written by the thread recording
// its command buffer (which Vulkan synchronizes externally). A slot's
// FS_CURSORS cursors lie just before its fsSlotHot, and its first block's
// pair records just after (Go's slotMem: one allocation), so that a
// Begin or End passes the slot alone.
typedef struct {
	uint64_t cmd; // the command buffer; 0: free
	uint32_t next, end, grow;
	char pad[44];
} fsCursor;

int fs_guard_init(int fence);
int fs_guard_records(int *used);
void fs_guard_sync(void);
int64_t fs_zone_begin(fsSlotHot *s, uintptr_t cmd, uint32_t stage, uint32_t name);
void fs_zone_end_first(fsSlotHot *s, uint64_t pair, uintptr_t cmd, uint32_t stage, uint64_t *refused);
int fs_zone_end(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, fsSlotHot *s, uint64_t *refused);
void fs_zone_end_quiet(fsPairMeta *m, uint32_t gen, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query, fsSlotHot *s,
	uint64_t *refused);
int fs_older(uint32_t w, uint32_t g);
void fs_noop_timestamp(void *cmd, uint32_t stage, uint64_t pool, uint32_t query);
void fs_call_timestamp(uintptr_t fn, uintptr_t cmd, uint32_t stage, uint64_t pool, uint32_t query);

#endif
