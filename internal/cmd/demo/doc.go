// Package demo is the render loop behind examples/triangle and the
// overhead rig internal/cmd/overhead: a headless Vulkan renderer of a
// rotating triangle, profiled throughout, that writes its profile as a
// Perfetto trace, a Chrome JSON trace and a pprof profile.
//
// Each frame renders into an offscreen RGBA8 image and copies it into host
// memory, with up to eight frames in flight. The GPU side is measured with
// zones (frame, render pass, load, draw, copy), the CPU side with spans on a
// "render loop" track (wait, collect, update, record, submit), tied by
// frames and by arrows from each submit to the GPU work it carried.
//
// The overhead rig's flags add what measures the library against the
// hardware: -rawzones wraps the load draws in N pairs of bare
// vkCmdWriteTimestamp into a query pool of the rig's own (read back once
// the frame's fence has signalled), -cmdgpu times each command buffer whole
// with two raw timestamps, the profiler's readback copy included, and
// -stages picks the pipeline stages of zones and raw pairs (BEGIN-END, each
// of top, bottom, all, graphics, vertex, fragment, color, transfer).
//
// The render pass, pipelines, framebuffers, the readback and the submits go
// through internal/vk (vk.Graphics, Device.QueueSubmit), not vulkan-go:
// vulkan-go copies slices into C memory that a finalizer can free while the
// driver reads it. A test reads these sources and allows only the vulkan-go
// calls that take scalars, handles or slice-free structs.
package demo
