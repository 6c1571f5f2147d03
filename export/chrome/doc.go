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
package chrome
