// Package profiler is Framescope's public API: what an application calls
// to profile its Vulkan frames.
//
// A Profiler holds the names, frames and CPU tracks (a timeline.Recorder).
// A GPU is one VkQueue's context: zones are recorded into command buffers
// with vkCmdWriteTimestamp, read back without ever stalling the render
// loop, converted to host CLOCK_MONOTONIC by a calibrated clock model, and
// merged into the timeline.
//
//	p := profiler.New(profiler.Options{})
//	draw := p.Name("draw")                       // once
//	gpu, _ := p.GPU(dev, queue, profiler.GPUOptions{})
//	for {
//		p.BeginFrame()
//		gpu.BeginFrame(cmd)                       // cmd: first command buffer of the frame
//		func() {
//			defer gpu.Zone(cmd, draw).End()
//			// vkCmdDraw...
//		}()
//		gpu.EndFrame(cmd)                         // cmd: last command buffer of the frame
//		key := gpu.Submitted(cmd)                 // for the submit-to-GPU arrow
//		// vkEndCommandBuffer, vkQueueSubmit...
//		p.EndFrame()
//		zones, _ = gpu.Collect(zones[:0])         // never waits
//	}
//
// Pipeline stages: by default a zone's begin timestamp is written at
// TOP_OF_PIPE and its end at BOTTOM_OF_PIPE, so a zone covers all the work
// recorded between them and nested zones stay inside their parents.
// GPUOptions.BeginStage and EndStage choose others; GPU refuses, with an
// error, a stage vkCmdWriteTimestamp may not take on the queue.
//
// Misuse never panics: ending a zone twice (Stats.Misuse), ending the zero
// Zone (Stats.ZeroEnds, claimed by the next context to report, as the zero
// Zone names none), zones never ended (Unended), ended too late
// (LateEnds), or never submitted (Unwritten), collecting with nothing
// submitted, or using a GPU after Close (NoSlot) are refused and counted,
// and show in the trace's Drops.
//
// Closing a Device closes the GPU contexts made on it first: calibration
// stops, the device is waited for, the query pools are destroyed; their
// later calls return ErrDeviceClosed (zones are refused and counted) and
// never reach Vulkan. A device the application made (WrapDevice) is not
// destroyed by the profiler: close the contexts, or the Device wrapping
// it, before destroying it.
package profiler
