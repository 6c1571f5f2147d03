// Package pprof turns a Framescope trace into a pprof profile of GPU and CPU
// time by zone stack, for `go tool pprof`: -top tables, -http flame graphs,
// and -diff_base comparisons between two runs.
//
//	f, _ := os.Create("gpu.pb.gz")
//	err := pprof.Write(f, p.Dump()) // p: a *profiler.Profiler
//
// then `go tool pprof -top gpu.pb.gz`, or -http=: for a flame graph. [Build]
// returns the [profile.Profile] itself, and [Totals] the GPU and CPU time
// it holds.
//
// A run too long to hold whole streams into a [Builder], a
// [timeline.Sink] that keeps the profile, not the spans:
//
//	b := pprof.NewBuilder(pprof.Options{OmitFrames: true})
//	// each batch: b.WriteBatch(batch), or profiler.Options{Sink: b}
//	err := b.Write(f)
//
// With [Options].OmitFrames its memory grows with the distinct stacks of
// the run, not with its length.
//
// # What a sample is
//
// Each zone is a function; a span's stack is its track (lanes of a GPU
// queue fold into the queue) followed by the zones that enclose it, outer
// first. Every span contributes its self time (its duration less its
// children's), so a stack's cumulative time is the span's total time and
// the profile's total is the busy time of the tracks: the sum of the
// outermost spans' durations. The sample types are gpu_time and cpu_time
// in nanoseconds; labels carry the frame, the track and the GPU queue.
//
// Build takes time and memory linear in the spans: stacks are interned
// and shared by their samples, and bounded. Zones nested deeper than 128
// fold into one "(deeper zones folded)" frame under their ancestor at
// that depth, which takes their time; past 16Mi frames in all, new stacks
// are cut to that frame under their track. Past 256Ki zone names, further
// names count as "(other zones)"; past 512Ki samples, further spans give
// their time to their track's own sample. The profile's
// comments (`go tool pprof -comments`) count both, as they do the trace's
// drops.
package pprof
