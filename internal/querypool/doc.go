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
// Once every 2^28 generations a recycle writes every record, so that no
// record is old enough for the 30-bit comparison to wrap. A recycled slot
// is reset on the host only over the queries its frame handed out.
package querypool
