package timeline

import (
	"math"
	"math/bits"
)

// Drops counts, by cause, what never reached the timeline, and the misuse
// that lost nothing. Every exporter writes every count, under the field's
// name in snake case ("query_limit", "no_frame", ...), and every reader
// restores them, so that a trace says what it lacks.
type Drops struct {
	QueryLimit  uint64 // GPU zones refused: their frame had spent its queries (MaxQueriesPerFrame)
	NoFrame     uint64 // GPU zones refused: their queue had no frame with queries (no BeginFrame, or every slot still in flight)
	Closed      uint64 // GPU zones refused: their context or device was closed
	Unended     uint64 // GPU zones and slices begun and never ended (zones given up once their frame was waited for)
	Unsubmitted uint64 // GPU zones ended but never executed: their command buffer was not submitted
	Pending     uint64 // GPU zones whose results were not available, or not collected, when their context closed
	// Overlapped counts the GPU zones of executions of a recording (a
	// command buffer recorded once, submitted many times) that ran
	// beside another execution of it, which Vulkan forbids to queries
	// (a simultaneous-use command buffer pending twice): one
	// execution's times cannot be told from the other's.
	Overlapped uint64
	// RunAgain counts the GPU zones of executions of a command buffer
	// submitted again without being recorded again, and not made a
	// recording (GPU.Record): they ran, but their timestamps went to
	// queries that were not reset and are never read. A command buffer
	// recorded again without zones looks the same to the library, and
	// counts here too.
	RunAgain uint64
	// Abandoned counts the GPU zones of a recording whose command buffer
	// was reset or freed before it ended (GPU.Freed; under the layer,
	// vkResetCommandPool on one being recorded, as Mesa's zink does, or
	// vkResetCommandBuffer): it can never run.
	Abandoned uint64
	// Uncalibrated counts GPU zones read back before their queue had any
	// clock calibration, so with no host time.
	Uncalibrated uint64
	GPUSpans     uint64 // GPU zones the recorder dropped: End < Start, an unknown name or track, no lane left
	Spans        uint64 // CPU spans the recorder dropped (track buffer full, nesting too deep, a NameID never given out); spans a writer or reader refused
	Evicted      uint64 // spans aged out of a flight-recorder window or over MaxSpans before any Dump or sink had them
	// Untimed counts GPU zones kept on the timeline but left out of the
	// recorder's "GPU time per frame" counter: their results came after
	// their frame's time was sampled, they name a frame not begun, or
	// their frame already had 65536 outermost zones.
	Untimed uint64
	// Work counts GPU zones kept on the timeline without the pipeline
	// statistics their context counts: where Vulkan's query rules allow
	// no exact count, or the counts did not come (Work.Missing says which).
	Work uint64
	// Flows counts submission arrows lost: GPU zones whose submission key
	// no CPU span claimed in time, or over 16384 for one key, and flows
	// whose ends went to a sink in different batches.
	Flows uint64
	// Frames and Samples count frames, and counter samples and
	// calibrations, that left memory (a flight-recorder window, the
	// MaxSpans cap) before any Dump or sink had them.
	Frames  uint64
	Samples uint64
	// Sink counts the items (spans, flows, frames, samples, calibrations)
	// of batches the recorder's sink failed to write.
	Sink uint64
	// Misuse counts API misuse that lost nothing (it is not in Total):
	// zones ended twice or after their frame was given up, spans ended
	// out of order or twice, EndFrame with no frame.
	Misuse uint64
}

// Total is the sum of every loss, Untimed and Work included (their zones
// are on the timeline, but their time is missing from a counter, or their
// counts from the zone); Misuse is not a loss and not in it. A sum past
// 2^64-1 is 2^64-1: Overflows says whether it was.
func (d Drops) Total() uint64 {
	t, _ := d.sum()
	return t
}

// Overflows reports whether the losses add up to more than 2^64-1, which
// no recorder counts: a reader refuses such a trace.
func (d Drops) Overflows() bool {
	_, ok := d.sum()
	return !ok
}

func (d Drops) sum() (uint64, bool) {
	return Sum(d.QueryLimit, d.NoFrame, d.Closed, d.Unended, d.Unsubmitted, d.Pending, d.Overlapped, d.RunAgain, d.Abandoned,
		d.Uncalibrated, d.GPUSpans, d.Spans, d.Evicted, d.Untimed, d.Work, d.Flows, d.Frames, d.Samples, d.Sink)
}

// Sum adds counts, and reports false when the sum passes 2^64-1 (it is
// then 2^64-1): counts are added so everywhere, never wrapped.
func Sum(xs ...uint64) (uint64, bool) {
	var t uint64
	for _, x := range xs {
		s, carry := bits.Add64(t, x, 0)
		if carry != 0 {
			return math.MaxUint64, false
		}
		t = s
	}
	return t, true
}
