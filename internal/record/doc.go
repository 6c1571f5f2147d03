// Package record is the recorder behind a profiler.Profiler: it builds one
// timeline.Trace from CPU spans (written lock-free into per-track
// buffers), GPU spans handed over by the profiler's contexts (each a
// [GPUSource] that says when a frame's results are all in), frames,
// submission arrows, counters and calibrations, and keeps the books of
// what it was handed. It holds bounded memory (a flight-recorder window,
// a sink for streaming), checks frame budgets, and lets the live view
// copy what is new ([Recorder.Peek]).
//
// A batch of GPU spans is placed in one pass: a sorted batch (the usual
// one) is read in place, each span finds its parent on a lane's spine
// without a search, and a frame's outermost spans find their frame once.
// On that path a span's structs are built field by field where they are
// kept, never as a value copied in: on x86 a whole-struct copy of a
// value just written waits for the stores to drain, and that wait was
// most of placement's cost (BenchmarkDeliverFrame). A lane remembers a
// bounded history of what it placed, for spans that come out of order;
// when it forgets the older half, it finds what must stay (the ancestors
// of the first span kept) and how far back it can still check (the
// latest end let go) by walking parent links, not the half let go: spans
// on a lane nest and never cross, so the spans covering a point are one
// chain of parents.
//
// A GPU source's Hand (and Deliver, which copies into it) and Settle do
// not take the recorder's lock: they leave the call in an inbox, which
// takes the spans over, and return, and a goroutine of the recorder's own
// places what the inbox holds, in order, under the lock.
// Every method that takes the lock first places what the inbox holds, so
// no caller sees the recorder without a call a source already made, and
// the books balance at every read. A batch small enough that placing it costs less than
// waking that goroutine (offload.Ns, at the cost measured so far) is
// placed by Hand itself when the lock is free and the inbox empty. A
// source has at most one batch waiting: the next, while it waits, is
// placed by the source's caller itself, so that the merge being behind
// slows the caller rather than growing the inbox, and two span buffers
// per source take turns ([GPUSource.Hand]). The goroutine starts with the
// first source and ends with the last source's Close or the recorder's.
// Between calls it polls while they keep coming: it looks at the inbox
// every half of the smoothed time between calls (20 µs to 4 ms), so
// that a call made each frame leaves its batch without waking it, a
// system call on the caller's goroutine that costs about 10 µs on a
// 2-core virtual machine, a quarter of what Collect costs a frame of
// 1,000 zones there. Once no call came for four times that time, or
// when calls come more than 32 ms apart, it waits on a channel, and
// the next call wakes it. The inbox holds at most
// maxInboxSpans spans, past which Hand places them itself. A source may
// give the recorder a function to call after placing its calls
// ([GPUSource.AfterPlace]): work of the source's own that then runs on the
// goroutine woken anyway, not on one woken for it (the profiler's query
// resets).
//
// Only profiler and live use it; applications reach it through
// profiler's API. docs/design.md says how it collects, bounds and counts.
package record
