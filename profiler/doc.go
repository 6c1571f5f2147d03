// Package profiler is Framescope's public API: what an application calls
// to profile its Vulkan frames.
//
// A [Profiler] holds the names, frames, CPU tracks and counters of one
// timeline.
// A [GPU] is one VkQueue's context: zones are recorded into command buffers
// with vkCmdWriteTimestamp, read back without ever stalling the render
// loop, converted to host CLOCK_MONOTONIC by a calibrated clock model, and
// merged into the timeline.
//
//	p := profiler.New(profiler.Options{})
//	draw := p.Name("draw")                       // once
//	gpu, _ := p.GPU(dev, queue, profiler.GPUOptions{})
//	for {
//		p.BeginFrame()                            // ends the last frame, collects; never waits
//		gpu.BeginFrame(cmd)                       // cmd: first command buffer of the frame
//		func() {
//			defer gpu.Zone(cmd, draw).End()
//			// vkCmdDraw...
//		}()
//		gpu.EndFrame(cmd)                         // cmd: last command buffer of the frame
//		s := track.Span(submit)
//		gpu.Submit(s, cmd)                        // the submit-to-GPU arrow
//		// vkEndCommandBuffer, vkQueueSubmit...
//		s.End()
//	}
//	// vkDeviceWaitIdle, then:
//	err := p.Close()                              // collects what is still in flight
//	err = gpu.Err()                               // a lasting fault, or nil
//
// None of the calls in the loop returns an error: refusals and losses are
// counted ([Stats].Drops), and a fault that lasts is kept for [GPU.Err].
//
// Pipeline stages: by default a zone's begin timestamp is written at
// TOP_OF_PIPE and its end at BOTTOM_OF_PIPE, so a zone covers all the work
// recorded between them and nested zones stay inside their parents.
// [GPUOptions].BeginStage and EndStage choose others; GPU refuses, with an
// error, a stage vkCmdWriteTimestamp may not take on the queue.
//
// Frames in flight: [GPUOptions].FramesInFlight (1 to 16) is how many frames
// the application keeps in flight. A frame's zones are read back once the
// application has waited for it, and the timeline waits for each queue's
// word that a frame's results are all in, so
// that zones, their flows and the frame's GPU time arrive however late.
//
// Frames in flight count the application's frames: a context whose queue
// has no work in a frame needs no call in it, and a queue used once in
// many frames gets its zones back FramesInFlight application frames later.
//
// In a renderer: zones may be recorded on several goroutines at once, each
// into its own command buffer, between [GPU.BeginFrame] and [GPU.EndFrame]
// (called before and after the goroutines record). [GPU.Submit] names
// every command buffer a submission carries, secondaries included, so that
// their zones get the submission's arrow. With host query reset, a frame
// that needs more queries than its pool gets them in the frame. A context
// closed and made again on the same queue (a swapchain or device made
// again) continues the queue's track. [Existing] takes vulkan-go's handle
// types; an application that makes its Vulkan in C or through another
// binding converts its dispatchable handles, which are pointers:
// vk.Device(unsafe.Pointer(device)), and likewise for the instance, the
// physical device, queues and command buffers.
//
// A command buffer recorded once and submitted many times (one per
// swapchain image, a static one, a cached secondary) is made a recording
// with [GPU.Record] when it is recorded; each execution that a Submit
// names is timed in its frame:
//
//	rec := gpu.Record(cmd)
//	gpu.Zone(cmd, draw).End()
//	rec.End()
//	...
//	gpu.Submit(s, cmd) // each frame that submits it
//
// Without Record, its zones are delivered once, and each later execution
// writes their queries again without a reset, which Vulkan forbids: the
// profiler keeps those queries from later frames, counts such command
// buffers ([Stats].Resubmitted) and each later execution's zones in the
// trace's books ([timeline.Drops].RunAgain), but cannot time them.
//
// [Existing].APIVersion says the instance's version: the profiler calls
// only what it allows. Each queue's track belongs to its device: two GPUs
// of one model, or two logical devices alive at once, get tracks of their
// own.
//
// # Work
//
// Time on a GPU is noisy; the work behind it is not. With
// [GPUOptions].PipelineStatistics, every zone also counts the work its
// queue did between its Begin and End, nested zones included: Vulkan's
// pipeline statistics (vertices, primitives, shader invocations of each
// stage, fragments), in [ZoneResult].Work and on its span
// ([timeline.Span].Work), and from there in every trace, in framescope
// stats, in the live view, and in framescope diff, which calls a change
// in work from one run a side:
//
//	gpu, err := p.GPU(dev, queue, profiler.GPUOptions{
//		PipelineStatistics: timeline.FragmentShaderInvocations | timeline.ComputeShaderInvocations,
//	})
//	...
//	pass := gpu.Zone(cmd, shadow) // outside the render pass: counts it all
//	// vkCmdBeginRenderPass
//	draw := gpu.ZoneInRenderPass(cmd, caster)
//	// vkCmdDraw...
//	draw.End()
//	// vkCmdEndRenderPass
//	pass.End()
//
// A zone either has exact counts or says why it has none
// ([timeline.Work].Missing), never a partial one. Vulkan lets a command
// buffer have one statistics query active at a time, and a query ends
// on the side of a render pass instance it began on. So the outermost zone
// of a command buffer begins a query, and each Begin and End of a zone
// inside it ends the query and begins the next: a zone's work is the sum
// of the queries between its Begin and End, and nested zones add up
// exactly. A zone inside a render pass instance, within a counting zone
// begun outside it, cannot end a query begun outside: begun with
// [GPU.ZoneInRenderPass], it has no counts of its own
// (timeline.WorkRenderPass) and the zone around it keeps its count; begun
// with [GPU.Zone] there, its Begin would end that query inside the render
// pass, which Vulkan forbids. The other reasons are counted alike: a zone
// ended in another command buffer (WorkElsewhere), begun in another frame
// than the counting zone around it (WorkFrames), past the frame's
// statistics queries (as many as its timestamp queries) or the 64 command
// buffers counting at once (WorkSpent), ending after the zone around it
// (WorkMisnested), still open when [GPU.EndFrame] recorded into its
// command buffer (WorkFrameEnd: EndFrame ends the counts open there, so
// that no query outlives the command buffer), open when the command
// buffer executed secondaries ([GPU.BeforeSecondaries], WorkSecondaries),
// or whose counts did not come back (WorkUnavailable).
// [Stats].WorkMissing has them by reason, Drops.Work their sum.
//
// What counting asks of the application, because a zone's query is active
// in its command buffer from its Begin to its End: end every zone in the
// command buffer it began in, before vkEndCommandBuffer, on the side of a
// render pass it began on (begin and end a zone inside a render pass in
// one subpass), or end one begun outside and ended inside with
// [Zone.EndInRenderPass] (it then has no counts: WorkRenderPass); tell the
// profiler around a statistics query of the application's own
// ([GPU.BeforeStatisticsQuery]: WorkQuery); begin with ZoneInRenderPass a zone inside a render pass
// that a counting zone outside it encloses; and, for a vkCmdExecuteCommands
// inside a zone, enable the inheritedQueries feature and give the
// secondary command buffers the counted statistics in their
// VkCommandBufferInheritanceInfo. A zone left open in another command
// buffer than EndFrame's, or one begun outermost there and ended in a
// later one, leaves its query active, which Vulkan forbids at
// vkEndCommandBuffer: the validation layer reports it. Without statistics
// none of this applies, and the zone path is the same as before.
//
// What it costs, on an NVIDIA H100 (docs/measurements/work-zone-cost-h100.txt): a zone
// that counts takes 1.24 to 1.32 times a raw timestamp pair and a raw
// statistics query (the driver's vkCmdBeginQuery and vkCmdEndQuery, 454
// to 851 ns, most of it), 5.7 to 6.5 times a zone that counts nothing;
// reading it back (Collect) 167 to 174 ns a zone against 41 to 54
// without. Which counts are exact on a driver is measured there too:
// NVIDIA reuses the vertex shader's results across draws of the same
// vertices, and llvmpipe counts the fragments of whole 4x4 blocks.
//
// Nothing is lost silently. Every zone that does not reach the timeline is
// counted by cause in [timeline.Drops], under the same names in [Stats],
// in every trace and in framescope stats, reported at every
// [GPU.BeginFrame] even if the application never collects: refused because
// the frame's queries were spent (QueryLimit), because no frame was begun
// (NoFrame) or because the context was closed (Closed), never ended
// (Unended: given up once the application has waited for its frame, so it
// costs no later frame), never submitted (Unsubmitted), not finished or not
// collected at Close (Pending), read back before any calibration
// (Uncalibrated; [GPU.Err] then reports [ErrNoCalibration]); a zone of a
// command buffer no [GPU.Submit] of its frame named loses its arrow
// (Flows). Misuse that loses nothing (ending a zone twice or after its
// frame was given up) is counted as misuse (Misuse), not as a loss; ending
// the zero Zone does nothing. Each context keeps the books
// ([Stats].Balanced: issued = delivered + open + lost), and hands them to
// the recorder with its zones, whose [timeline.Ledger] every trace
// carries. Nothing panics.
//
// What runs where: [GPU.Collect], and the collection in
// [Profiler.BeginFrame], read the frame's results from host memory and
// convert them on the caller's goroutine. Placing the zones on the
// timeline (lanes, nesting, arrows, the flight recorder's eviction) runs
// on a goroutine of the profiler's own when it would cost the caller more
// than waking a goroutine, and resetting the queries of frames read back
// runs there after it; smaller work is done in place (a reset that costs
// more than a wake on its own goes to a goroutine of the query pool's).
// While frames keep coming that goroutine polls for them, so that
// handing a frame's zones over wakes nothing from the caller's goroutine
// (a system call). Nothing reads the
// timeline without the zones handed to it ([Profiler.Dump], the live view
// and the sink place what is waiting first). Of Vulkan, that work calls
// only vkResetQueryPool, on the profiler's own query pools, which no
// application call touches.
//
// Closing: [Profiler.Close] and [GPU.Close] collect every zone the GPU has
// finished, count the rest, and destroy the query pools: call them after
// vkDeviceWaitIdle and before vkDestroyDevice. [Profiler.Done] is closed
// then: the live view's poller stops with it. Closing a Device closes the
// GPU contexts made on it first. Zone and End may run on other goroutines
// while a context closes: the close waits for the calls in progress before
// it destroys anything, and later calls are refused and counted, without
// calling Vulkan (they return [ErrDeviceClosed] or [ErrClosed]).
//
// The application's queues are its own: [WrapDevice] calls vkGetDeviceQueue
// only on the queues [Existing].Queues names, GPU refuses a queue the device
// was not created with or whose family has no timestamps, and the library
// calls no externally synchronized command (vkQueueSubmit, vkQueueWaitIdle)
// on an application queue from a goroutine of its own, except the
// submit-and-wait calibration on [GPUOptions].FallbackQueue, under
// [GPUOptions].FallbackLock, the lock the application holds around its
// own submissions. vkDeviceWaitIdle, which covers every queue, runs only in
// [Device.Close], on the caller's goroutine.
package profiler
