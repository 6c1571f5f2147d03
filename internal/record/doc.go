// Package record is the recorder behind a profiler.Profiler: it builds one
// timeline.Trace from CPU spans (written lock-free into per-track
// buffers), GPU spans handed over by the profiler's contexts (each a
// [GPUSource] that says when a frame's results are all in), frames,
// submission arrows, counters and calibrations, and keeps the books of
// what it was handed. It holds bounded memory (a flight-recorder window,
// a sink for streaming), checks frame budgets, and lets the live view
// copy what is new ([Recorder.Peek]).
//
// Only profiler and live use it; applications reach it through
// profiler's API. docs/design.md says how it collects, bounds and counts.
package record
