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
package querypool
