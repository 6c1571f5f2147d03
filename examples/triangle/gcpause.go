package main

import "runtime/debug"

// vulkan-go converts a slice of structs (vkQueueSubmit's VkSubmitInfo,
// vkCmdPipelineBarrier's barriers, vkCmdCopyImageToBuffer's regions) into
// C memory that a finalizer frees, set on a variable that is unreachable
// as soon as the conversion returns: a garbage collection completing
// between the conversion and the end of the C call frees memory the
// driver is still reading. On lavapipe that corrupts its heap ("double
// free or corruption", with GOGC=2 in one run of two). The profiler's own
// barriers go through the same code.
//
// Until internal/vk offers these calls without finalizers, the loop keeps
// the collector off while it records and submits a frame: gcOff waits for
// a collection in progress to finish its marking, so none can complete
// before gcOn, and memory converted meanwhile outlives the calls that use
// it. The collector runs between frames as usual.

// gcOff turns the garbage collector off and returns the setting to restore.
func gcOff() int { return debug.SetGCPercent(-1) }

// gcOn restores the setting gcOff returned.
func gcOn(old int) { debug.SetGCPercent(old) }
