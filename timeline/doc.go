// Package timeline is Framescope's data model, in pure Go: a [Trace] of
// tracks, spans, arrows, frames and counter samples, with the books of
// what was lost. A profiler.Profiler makes one ([profiler.Profiler.Dump],
// or batches to a [Sink]); the exporters write it and read it back.
//
//	t := p.Dump() // p: a *profiler.Profiler
//	if err := t.Validate(); err != nil { ... }
//	for _, s := range t.Spans {
//		fmt.Println(t.Name(s.Name), t.Track(s.Track).Name, s.Dur())
//	}
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
// Nothing is lost silently: what did not reach the trace is counted in
// [Drops], by cause, and the books of what the profiler was handed
// ([Ledger]: for GPU zones, CPU spans and arrows, issued = delivered +
// open + lost) balance against them. Every Trace carries both.
package timeline
