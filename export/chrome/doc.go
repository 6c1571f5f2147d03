// Package chrome writes and reads Framescope traces in the Chrome Trace
// Event JSON format, which Perfetto, chrome://tracing and many other tools
// open.
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
package chrome
