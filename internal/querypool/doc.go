// Package querypool owns Vulkan timestamp query pools for one queue: a ring
// of per-frame slots, each a VkQueryPool, over the frames in flight.
//
// Query pairs (begin, end) are handed out without locks, safely from many
// goroutines recording different command buffers at once. A slot is reset
// with vkResetQueryPool on the host where hostQueryReset is enabled, else
// with a vkCmdResetQueryPool recorded into a command buffer the caller
// passes to BeginFrame. Readback (Collect) uses availability and never
// waits: a slot whose queries are not all written yet is simply looked at
// again on the next call. Values are masked to the queue family's
// timestampValidBits.
//
// A full slot never overwrites and never makes the validation layer
// complain: further pairs are refused and counted as dropped, and slots
// grow for later frames, up to a limit. Nothing is dropped silently: Stats
// counts every pair refused, abandoned or never written.
//
// # Generations
//
// Each pair's record carries the generation of its slot when it was last
// written, and a Pair the generation it was handed out in, so that an End
// meant for an earlier use of a slot is refused rather than written into a
// later frame. Recycling a slot costs nothing per pair: it bumps the
// slot's generation, and a record of an earlier generation reads as open
// in the current one. That is sound because only pairs below the slot's
// next index are handed out, and each of those was ended or given up (in
// its own generation) before the slot was recycled; a stale End finds its
// own generation's ended or void record, or a later one, and is refused.
// Once every 2^27 generations a recycle writes every record, so that no
// record is old enough for the 29-bit comparison to wrap. A recycled slot
// is reset on the host only over the queries its frame handed out.
//
// Collect makes no reset: its caller calls ResetDue where it likes (the
// profiler, on the recorder's goroutine, which it wakes anyway to place
// the zones), which resets in place, or on the pool's goroutine when that
// is expected to cost more than waking it (offload.Ns, at the cost
// measured so far: lavapipe's vkResetQueryPool takes about 100 ns a
// query, more than the rest of the readback). BeginFrame takes a new
// slot, while the ring is below MaxSlots, rather than reset one itself,
// so that a frame begun just after a Collect does not do that reset on
// the caller's goroutine after all. Close waits for a ResetDue in
// progress, and one after Stop does nothing.
//
// Collect reads each slot in one pass: a pair lacking a value that may
// still come (a copy that ran early) puts back what the pass took from
// the slot, which is read again later.
//
// # The zone path
//
// Begin and End are each one cgo call, into C that records the timestamp
// through the device's own vkCmdWriteTimestamp and keeps the books with
// C11 orderings. Begin hands out pairs from a cursor per command buffer
// (up to 64 a frame): the cursor takes blocks of 1, 2, 4 ... 16 pairs from
// the slot with one compare-and-swap a block, and, as Vulkan has one
// thread record a command buffer at a time, hands them out with plain
// stores; goroutines recording their own command buffers share only the
// slot's next index, once a block, on a cache line apart from the fields
// every Begin reads (taking a block would otherwise evict them from every
// other recording thread's cache). A frame's end marks what the cursors
// took and did not hand out as unused: neither handed out nor lost. When
// the slot's first block has nothing left to give a cursor, Begin takes
// Go's path: its first call freezes the cursors, waits for
// the Begins in flight and hands out what the cursors held before it
// grows the frame, so a frame whose zones fit the first block never grows
// for the cursors' sake. Go's path counts its Begins in flight on the
// slot.
//
// A frame's end, and a slot's release, must know every Begin that read
// the slot as recording: they count the frame's pairs and, at release,
// destroy its query pool. A Begin says so without a locked instruction:
// each thread has a record whose busy word it sets around the Begin with
// plain stores, and the closer, after changing the slot's state, calls
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (every running thread of
// the process executes a full barrier) and waits until no busy word is
// set. So either the closer sees a Begin's busy word, or the Begin sees
// the new state and refuses. A closer calls membarrier only where another
// thread began zones since the last closer looked (each thread's first
// Begin after that says so with a full barrier), so a render loop that
// records every zone on one thread never pays it; closers wait one at a
// time. Where membarrier is missing (not Linux, or
// a kernel or sandbox without it) each Begin fences instead, and the
// argument is the usual one for sequentially consistent accesses;
// FRAMESCOPE_GUARD_FENCE=1 in the environment makes every Begin fence
// where membarrier works too, which is how the tests run that path. A
// thread's record goes back to a free list when the thread exits, so
// there are never more records than threads alive at once.
//
// End, in the command buffer its zone began in, also takes its pair with
// plain stores inside the same guard: it reads the pair open, marks it
// ending, records the timestamp and marks it ended. Two such Ends of one
// pair record into one command buffer, so the application orders them
// (Vulkan's rule again) and the second finds the pair ended: misuse,
// refused. What else may change an open pair changes it first and then
// waits as a closer does: an End in another command buffer (EndIn) takes
// the pair with a compare-and-swap, waits, and records its timestamp only
// if the pair is still as it left it, so that of two Ends racing on two
// threads exactly one records; a reader giving up a frame's open pairs
// voids them, waits, and then reads each pair's final state, ended or
// void. The C half counts a refused End itself, so that an End whose
// caller needs no answer (Pool.EndQuiet) returns none: cgo's wrapper of a
// C function with a result asks the runtime twice where the Go stack is.
//
// What each call marshals is kept to what a raw vkCmdWriteTimestamp
// call's is: five words. A slot's cursors, its hot fields (state,
// generation, query pool, the driver's entry point) and its first
// block's pair records are one allocation with no Go pointers, in that
// order, and cgo lets C use the whole allocation a pointer passed to it
// points into: so a Begin, or an End of a pair of the first block, passes
// the hot fields' address, and C finds the rest beside it. Begin's
// result is cgo's: a word of the caller's stack whose address went as an
// integer was cheaper, but a goroutine's stack may move at the cgo
// wrapper's entry, before the call, leaving the address stale
// (TestBeginResultSurvivesStackMoves).
// BenchmarkZonePath times the zone path alone, with a driver that does
// nothing, beside two bare cgo calls.
//
// # Work
//
// With Config.Stats each slot also has a pipeline statistics query pool
// of as many queries as its first block's timestamps: segments. A command
// buffer counting work holds a chain (up to 64 at once, the pool's, found
// by command buffer): the first zone's BeginWork takes a chain and begins
// a segment's query; every BeginWork and EndWork of a zone inside it ends
// the active segment and begins the next, which records its predecessor;
// the first zone's EndWork ends the last and gives the chain back. A
// zone's work is the sum of the segments from the one begun at its Begin
// to the one ended at its End, so the harvest sums each chain once, in
// segment order (a segment follows its predecessor), into running totals,
// and gives a zone the difference of two: linear in the segments. Only the
// thread recording a command buffer touches its chain (Vulkan's rule
// again), but for the chain's command buffer word, taken with a
// compare-and-swap; a chain whose slot has been read back since (a zone
// left open) is taken back by the next zone of its command buffer, or by
// a claim that finds no chain free. A zone that cannot take part says why
// (timeline.WorkMissing), once, and changes no chain: so a query is never
// ended where Vulkan forbids it, however the zones nest. EndFrame's copy
// leaves out the segment a chain has active in its command buffer (Vulkan
// copies no active query). Each readback records or reads the statistics
// with the timestamps, through the copy or the driver alike.
package querypool
