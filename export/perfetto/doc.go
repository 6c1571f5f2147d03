// Package perfetto writes Framescope timelines as Perfetto traces (the
// protobuf format Perfetto's UI and trace processor read) and reads them
// back.
//
// The Writer streams: it takes batches as the recorder makes them (it is a
// timeline.Sink), encodes each packet by hand with protowire into a reused
// buffer, and hands whole packets to the underlying io.Writer every
// Options.FlushBytes and at the end of every batch, so that a process
// killed mid-run leaves a trace readable up to its last flush.
//
// What the trace holds:
//   - One track per timeline track, under the process track: CPU tracks,
//     the frames track and counter tracks at the top, and a "GPU" track
//     whose children are the GPU queues in their explicit order, each
//     queue with its overflow lanes below it.
//   - Slices as BEGIN/END pairs with interned names and categories; the
//     frame id and the clock model's error bound as debug annotations
//     ("frame", "err_ns"), written on a slice when they differ from the
//     previous slice begun on the same track (slices in between inherit
//     them); flows from a submitting CPU slice to the GPU zones it carried.
//   - Counter samples on counter tracks with units, the clock model's
//     calibrations as counters under each queue, and every drop the
//     recorder or the writer counted, as "framescope dropped" counters and
//     an instant marker saying what grew by how much. (Not as
//     previous_packet_dropped: the trace processor takes that to mean the
//     packet sequence itself lost packets, and ignores its interned names
//     from there on.)
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
