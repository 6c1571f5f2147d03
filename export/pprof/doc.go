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
// # GPU idle time
//
// [Build] (and [Write]) also puts in gpu_time the time the GPU sat idle
// in the trace's frames, as package timeline/limits finds it
// ([limits.Of]): for each gap in a frame, when no queue ran work, a
// sample of the stack "GPU idle" > its cause ("waiting for submit",
// "waiting for a dependency", "waiting on present" or "unknown"), its
// value the gap's time, with the frame's label and the label kind=idle,
// which no sample of work has. A flame graph so shows beside the queues'
// work where the GPU waited, and why. A trace without frames, or whose
// frames are not analysed (the last of several, an open one), has none,
// and the very profile it had before.
//
// gpu_time's total is then the work's and the idle time's together,
// which [Totals] does not count. To see the work alone, its share of
// its own total:
//
//	go tool pprof -tagignore=kind=idle -relative_percentages -top gpu.pb.gz
//
// and -tagfocus=kind=idle for the idle time alone. A [Builder] adds no
// idle time: a frame's gaps take the frames after it and all their
// spans, which it does not keep.
//
// # GPU work
//
// A trace whose GPU zones count pipeline statistics (their
// [timeline.Work]) gets one more sample type per statistic that any GPU
// zone's Work names, counted or not, after gpu_time and cpu_time, in bit
// order: its key ([timeline.StatKey]: input_assembly_vertices,
// input_assembly_primitives, vertex_shader_invocations,
// geometry_shader_invocations, geometry_shader_primitives,
// clipping_invocations, clipping_primitives, fragment_shader_invocations,
// tessellation_control_shader_patches,
// tessellation_evaluation_shader_invocations,
// compute_shader_invocations), in the unit "count" ([WorkUnit]):
//
//	go tool pprof -sample_index=fragment_shader_invocations -top gpu.pb.gz
//
// A trace without work has only the two time sample types, and the very
// profile it had before them. gpu_time stays the default.
//
// Work values are self work, as time values are self time: a zone's count
// less the counts of the zones inside it. A zone's count includes all the
// zones inside it, those without counts too, so a zone's count is taken
// from its innermost enclosing zone that counted the same statistic, past
// zones between that have no counts; the work of a zone without counts
// (Missing, or a nil Work) stays with that enclosing zone, which counted
// it. Zones without counts are still in the time sample types, and give 0
// of each statistic of their own; zones of CPU tracks count nothing. So a
// stack's cumulative value of a statistic is its zone's count when the
// zone has one, and the profile's total is the sum of the counts of the
// zones with no enclosing zone that counted that statistic. A zone that
// counted work in no time (a zero-length one, or one its children fill)
// gets a sample of no time. No value is below 0: a sample's value is the
// sum of its zones' self work (the zones of one stack, track and frame),
// and where that is below 0, because the zones inside counted more than
// those around them (Vulkan allows some counts to be approximate), it is
// 0, and the totals are that much more than the outermost counts; where it
// passes int64, it is 2^63-1. The comments count both. Zones nested deeper
// than 128 count with the zone folded at that depth, which keeps its whole
// count. A Builder gives the same values as Build, within its bounds: a
// zone whose parent never came keeps its whole count, and one that came
// after its parent had gone leaves its count with the parent, as their
// time.
//
// `go tool pprof` sums and prints values through float64, so its totals
// past 2^53 are rounded; the samples hold them exact.
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
