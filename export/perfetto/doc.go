// Package perfetto writes Framescope timelines as Perfetto traces, which
// ui.perfetto.dev and Perfetto's trace processor open, and reads them back.
//
// A whole timeline, at the end of a run:
//
//	f, _ := os.Create("run.perfetto-trace")
//	err := perfetto.Write(f, p.Dump()) // p: a *profiler.Profiler
//
// Streamed while the application runs, so that a crash keeps everything up
// to the last flush: a [Writer] is a [timeline.Sink].
//
//	w := perfetto.NewWriter(f, perfetto.Options{})
//	p := profiler.New(profiler.Options{Sink: w, FlushEvery: 60})
//	// ... the render loop ...
//	p.Close() // hands the last batch to w
//	w.Close()
//
// [Read] and [ReadLimited] give back the [timeline.Trace], within [Limits]
// of time and memory linear in the file.
//
// # Format
//
// The Writer streams: it takes batches as the recorder makes them (it is a
// timeline.Sink), encodes each packet by hand with protowire into a reused
// buffer, and hands whole packets to the underlying io.Writer every
// Options.FlushBytes and at the end of every batch. Each batch ends with
// a mark, so that a trace cut short (a process killed mid-write, a full
// disk) reads back up to its last whole batch: see [CutError].
//
// What the trace holds:
//   - One track per timeline track, under the process track: CPU tracks,
//     the frames track and counter tracks at the top, and a "GPU" track
//     whose children are the GPU queues in their explicit order, each
//     queue with its overflow lanes below it.
//   - Slices as BEGIN/END pairs with interned names and categories, and
//     flows from a submitting CPU slice to the GPU zones it carried.
//   - Three debug annotations (args "debug.frame", "debug.err_ns" and
//     "debug.queue" in the trace processor): the frame id, the clock
//     model's error bound in ns, and a GPU slice's queue ("NVIDIA H200
//     queue 0.0 (graphics+compute)"). To keep a slice at about 32 bytes,
//     each is written only where it changes, and the rule is: a slice
//     without a frame arg belongs to the frame of the nearest earlier
//     slice on its track that has one (earlier by begin time, then by
//     depth, outermost first), or to no frame (0) if none has; the same
//     for err_ns (0 if none) and queue. So "frame" is on the first slice
//     of each frame on each track, "queue" on a GPU track's first slice.
//     One limit: a batch may reach back in time on a track (an enclosing
//     span arrives, as it ends, after its children). Such a slice carries
//     all three, but the slice after it in time, written before it, may
//     lack an arg that now differs from its new predecessor's. Read, which
//     follows the file's order, restores every span's frame and error
//     bound exactly, and so does every framescope command.
//   - A GPU zone's work ([timeline.Work]) as debug annotations of its
//     slice, args "debug.<key>" in the trace processor. A zone with
//     counts has one unsigned integer (uint_value) per statistic
//     counted, its key [timeline.StatKey]: "input_assembly_vertices",
//     "input_assembly_primitives", "vertex_shader_invocations",
//     "geometry_shader_invocations", "geometry_shader_primitives",
//     "clipping_invocations", "clipping_primitives",
//     "fragment_shader_invocations",
//     "tessellation_control_shader_patches",
//     "tessellation_evaluation_shader_invocations",
//     "compute_shader_invocations"; exact past 2^53 (the trace
//     processor keeps one past 2^63 in args.int_value as a negative
//     number of value_type "uint": read it as unsigned). A zone without
//     counts has two strings: "work_missing", why (its
//     [timeline.WorkMissing] key: "render_pass", "elsewhere", "spent",
//     "frames", "unavailable", "misnested", "frame_end",
//     "secondaries" or "query"), and
//     "work_stats", what it would have counted (keys joined by "+", as
//     [timeline.PipelineStats.String] writes them); a zone with counts of
//     no statistic has an empty "work_stats". A zone of a context that
//     counts nothing has none. The names are interned on a packet
//     sequence by its first slice with work: a trace without work holds
//     none of them.
//   - Under each GPU queue track, a counter track for each statistic
//     counted on it, "<queue name> <key>" (unit count, description
//     "framescope kind=work"): per frame, the sum of the counts of the
//     queue's outermost (depth 0) zones of that frame that have counts,
//     its lanes' included, at the earliest start among them. A sum is of
//     the zones of one batch (the recorder hands a frame's zones of a
//     queue over together, unless their arrows hold some back); past
//     2^64 it stays at 2^64-1. Read leaves these tracks out, as it
//     does the other tracks the writer derives.
//   - Counter samples on counter tracks with units, the clock model's
//     calibrations as counters under each queue, and every drop the
//     recorder or the writer counted, as "framescope dropped" counters and
//     an instant marker saying what grew by how much. (Not as
//     previous_packet_dropped: the trace processor takes that to mean the
//     packet sequence itself lost packets, and ignores its interned names
//     from there on.) Drops and the ledger's counts are integer counter
//     values, exact to 2^63-1; from 2^63 on, a double for the UI with the
//     exact count in an "exact" debug annotation, which Read takes, so no
//     count goes through float64. Read refuses a count counter that is
//     negative or fractional, as the Chrome reader refuses such a count.
//   - With Write (a whole trace), and after a streamed trace with
//     AppendLimits: what limits each frame (package timeline/limits), as
//     tracks under the process after the frames, described "framescope
//     kind=limits": "frame limits", a slice per frame named by its verdict
//     ("CPU-bound", "GPU-bound", "presentation-bound", "unknown"), its
//     figures as args ("debug.frame", "debug.gpu_busy" and "debug.cpu_busy"
//     as shares of the frame, "debug.gpu_busy_ns", "debug.gpu_err_ns",
//     "debug.cpu_busy_ns", "debug.cpu_wait_ns", "debug.present_wait_ns",
//     "debug.latency_ns"; the CPU's and the latency only where known);
//     "GPU idle", a slice per idle stretch named by its cause; and the
//     counters "GPU busy" and "CPU busy", each frame's share at its start.
//     A frame's slice, and a gap, begins where the last ended (a frame
//     wholly inside the one before has none), as frames may overlap. They are one batch on a
//     packet sequence of their own (ID 2^32-1). Read leaves them out.
//   - The end of every batch, as the "framescope batches" counter (the
//     batches written so far), the batch's last packet; its track is
//     described first thing in the trace. Read takes it as the mark that
//     what came before is whole, and leaves the track out. Perfetto's
//     trace processor and UI load a trace cut short without a word: they
//     drop the part of a packet at the cut and show the whole packets
//     before it, those of the batch in progress too (its slices that had
//     not ended are shown as not ended).
//
// With [Options.RenderStages] (framescope convert -render-stages) the
// trace also holds what Perfetto's GPU data sources write, which
// ui.perfetto.dev shows in its GPU group and the trace processor in its
// gpu_slice, gpu_counter_track and counter tables; the rest of the trace
// is the same byte for byte:
//   - Each GPU zone as a GpuRenderStageEvent (TracePacket field 53):
//     event_id 1, 2, ... in the order written, duration, its frame's low
//     32 bits as submission_id, gpu_id (each device a number, from 0 in
//     the order seen), the context of its device, and interned
//     specifications: a hardware queue per GPU queue track (a lane's
//     zones go on their queue's), named as the track and described as its
//     queue arg, iid 2^32 + track ID; and a stage per zone name, iid
//     NameID+1 (InternedData.gpu_specifications, field 24); the context
//     as an InternedGraphicsContext (field 23) of the process's pid, api
//     VULKAN. The trace processor lays nested zones on further tracks of
//     the queue's.
//   - Each work counter sum as GPU counters (GpuCounterEvent, field 52),
//     named as the work counters, described by their key, in a
//     GpuCounterDescriptor the first time each is written (counter ids
//     1, 2, ... in that order; groups VERTICES, PRIMITIVES, FRAGMENTS or
//     COMPUTE). The trace processor reads a GPU counter's value as the
//     value since the event before it, so a sum is written at the latest
//     end of its zones after a 0 at their earliest start: it shows from
//     the one to the other, 0 between.
//
// These packets are on the MONOTONIC clock itself, out of time order, and
// leave the sequence's incremental clock as it is.
//
// Times are the timeline's own: CLOCK_MONOTONIC nanoseconds. Every packet
// sequence opens with a ClockSnapshot {BOOTTIME, MONOTONIC} whose primary
// trace clock is MONOTONIC, so trace time equals the values written, and
// an incremental clock, so each packet carries only the delta from the one
// before (a few bytes). A batch reaching back before the end of every open
// sequence starts a new sequence (a snapshot may not go back in time on
// one). Tracks carry their timeline attributes in their description, so
// that Read can rebuild the timeline exactly.
//
// Two limits of the format show through. Perfetto links a flow only
// forwards in time, so a flow whose GPU end begins before its CPU start
// (possible within the clock model's error bound) is written, and shown,
// from the GPU zone to the CPU span; Read restores its direction. And
// slices of one track that begin (or end) at the very same nanosecond are
// nested by the order they are written in: right within a batch, but when
// the outer one comes in a later batch than the inner one, both the trace
// processor and Read nest them the wrong way round. Names are written
// whole, but the trace processor cuts a name at its first NUL byte.
package perfetto
