// Package timeline is Framescope's data model and live recorder, in pure
// Go: it knows nothing of Vulkan. The profiler package feeds a [Recorder];
// exporters read the plain [Trace] it hands out.
//
//	r := timeline.NewRecorder(timeline.Options{WindowFrames: 600})
//	update := r.Name("update")   // names are registered once
//	main := r.CPUTrack("main")   // one track per thread
//	for {
//		r.BeginFrame()
//		s := main.Span(update)   // no allocation, no lock
//		// ...
//		s.End()
//		r.EndFrame()
//	}
//	t := r.Dump() // the last 600 frames, for an exporter
//
// All times are nanoseconds of the host's CLOCK_MONOTONIC, the clock [Now]
// reads. GPU spans arrive already converted by the clock model (package
// clock) and carry its error bound ([Span].ErrNs).
//
// Spans of one track nest: [CompareSpans] is the one order of spans, which
// every exporter writes in, and [Encloses] says which span is a span's
// parent; a [Span]'s Depth is its nesting depth by that rule.
// [Trace.Validate] checks, in that order, that the spans of each track
// nest.
//
// Memory is bounded: [Options].MaxSpans and the windows cap what is held,
// a [Sink] takes batches as they are finished, and everything that does
// not reach a Dump or a sink is counted in [Drops] by [DropCause]. The
// recorder keeps books of what it was handed ([Ledger]): for GPU zones,
// CPU spans and arrows, issued = delivered + open + lost, each loss under
// one cause. Every Trace carries them, and they balance against its Drops.
package timeline
