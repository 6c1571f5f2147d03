// Package chrome writes and reads Framescope traces in the Chrome Trace
// Event JSON format, which Perfetto, chrome://tracing and many other tools
// open.
//
//	f, _ := os.Create("run.json")
//	err := chrome.Write(f, p.Dump()) // p: a *profiler.Profiler
//
// or streamed, as a [timeline.Sink]:
//
//	w := chrome.NewWriter(f)
//	p := profiler.New(profiler.Options{Sink: w, FlushEvery: 60})
//	// ... the render loop ...
//	p.Close()
//	w.Close()
//
// [Read] and [ReadLimited] give back the [timeline.Trace].
//
// # Format
//
// The Writer streams: it takes batches as the recorder's sink produces them
// (see WriteBatch) and keeps only what it must to order events correctly.
// Slices are written as B/E pairs, one thread per track, times in
// microseconds with exactly three decimals so that no nanosecond is lost.
// The file is the JSON array form, written out batch by batch: if the
// traced process dies, what was written still loads, as that form may end
// without its closing bracket.
// Framescope's own details (track kinds and queues, frames, calibrations,
// dropped counts) ride in 'M' metadata events that other tools ignore, so
// Read gets back the same timeline.Trace.
//
// Viewers see what they see in the Perfetto trace of the same run: the
// same slices at the same depths (spans that start together nest by their
// depth, outermost first, a zero-length span among its siblings), the
// frames of a trace without a frames track as "frame" slices on a
// "Frames" thread, every flow (one whose end span starts before its start
// span is written backwards, named "reversed flow", as the trace processor
// links flows only forwards in time; Read turns it back), and a
// "framescope dropped" counter of everything dropped or refused. A track
// without a name gets no thread_name (an empty one is a parse error to
// the trace processor). Two things differ in the trace processor, not in
// the file: it names a slice without a name "[No name]", and a counter
// "name value".
//
// # Frame limits
//
// [Write], which has the whole trace, also writes what limits each of its
// frames, as package timeline/limits finds it ([limits.Of]), above the
// tracks:
//
//   - a thread "frame limits" with a slice over each analysed frame, named
//     by its verdict ("CPU-bound", "GPU-bound", "presentation-bound" or
//     "unknown"), its args the frame's figures: frame (its ID), gpu_busy
//     and cpu_busy (shares of the frame, 0 to 1), thread (the submitting
//     thread's name), gpu_busy_ns, gpu_err_ns, cpu_busy_ns, cpu_wait_ns,
//     present_wait_ns and latency_ns. Those of the CPU are left out on a
//     frame without a submitting thread, and latency_ns where no arrow
//     says when its work was submitted;
//   - a thread "GPU idle" with a slice over each time in a frame that no
//     queue ran work, named by its cause ("waiting for submit", "waiting
//     for a dependency", "waiting on present", "unknown"), its arg the
//     frame;
//   - counters "GPU busy" and "CPU busy": each frame's busy shares, at its
//     start (a counter of the trace with that name keeps it, and the
//     derived one is named "GPU busy [frame limits]").
//
// Frames can overlap, slices on a thread cannot: a frame's or a gap's
// slice starts where the one before it ended, and one left empty is not
// written. The streamed [Writer] writes none of this: a frame's limits
// take the frames after it and all their spans, which a sink never has
// whole. Each of these threads and counters carries a
// framescope_derived 'M' event, and Read leaves out their events, so
// that Read gives back the very trace written, and a thread of the trace
// named "frame limits" is read as any other.
//
// # GPU work
//
// A GPU zone's work (its [timeline.Work]: the pipeline statistics its
// queue counted) rides in the args of its B event, after frame, queue and
// err_ns, which viewers show with the slice:
//
//   - a zone with counts has one arg per statistic counted, in bit order,
//     named by its key ([timeline.StatKey]: "input_assembly_vertices",
//     "input_assembly_primitives", "vertex_shader_invocations",
//     "geometry_shader_invocations", "geometry_shader_primitives",
//     "clipping_invocations", "clipping_primitives",
//     "fragment_shader_invocations", "tessellation_control_shader_patches",
//     "tessellation_evaluation_shader_invocations",
//     "compute_shader_invocations"), its count a JSON integer written
//     whole: {"vertex_shader_invocations":18,"fragment_shader_invocations":12582912};
//   - a zone without counts has "work_missing", why (the key of its
//     [timeline.WorkMissing]: "render_pass", "elsewhere", "spent",
//     "frames", "unavailable", "misnested", ...), and "work_stats", the
//     statistics it would have counted joined by '+' as
//     [timeline.PipelineStats.String] joins them:
//     {"work_missing":"spent","work_stats":"vertex_shader_invocations+fragment_shader_invocations"};
//   - a zone with counts of no statistic has "work_stats":"" alone;
//   - a zone of a context that counts nothing (a nil Work) has none of them.
//
// Read reads the counts as the integers they are, never through a
// float64, so a count past 2^53 comes back exact, and restores the Work
// of every B and X event that has these args, whatever its thread. A count
// that is not a JSON integer from 0 to 2^64-1, a work_missing that is no
// reason, a work_stats with an unknown key or other than the statistics
// counted, or work_missing with counts fails Read with an error naming
// the event and the arg. The Writer writes a span whose Work breaks the
// model (a Missing that is no reason, bits past the last statistic)
// without it, and counts it in [Invalid].Work and the "framescope
// dropped" counter; counts outside a Work's Stats, which
// [timeline.Work.Value] never gives, are not written.
package chrome
