package profiler

import (
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// CPUTrack is a logical thread of CPU work: the render loop, a worker.
// Spans on a track nest like calls. Use a track from one goroutine at a
// time; different tracks may be used from different goroutines at once.
// The zero CPUTrack records nothing.
type CPUTrack struct{ t *record.CPUTrack }

// CPUTrack defines a new CPU track named name and returns it. Make tracks
// once, at start-up: each call defines another track.
func (p *Profiler) CPUTrack(name string) CPUTrack { return CPUTrack{p.rec.CPUTrack(name)} }

// Span begins a span named name on the track, at the host's
// CLOCK_MONOTONIC time and in the frame in progress. End it, once, from
// the goroutine that began it, after every span begun inside it:
//
//	defer render.Span(update).End()
//
// Spans nested more than 64 deep are dropped and counted
// ([timeline.Drops].Spans).
func (t CPUTrack) Span(name Name) Span { return Span{t.t.Span(name)} }

// Span is a CPU span that has begun. Ending it twice is misuse, counted,
// that changes nothing; ending it while spans begun inside it are open
// ends those too, and counts the misuse. Ending the zero Span does
// nothing.
type Span struct{ s record.OpenSpan }

// End ends the span.
func (s Span) End() { s.s.End() }

// Counter is an application-defined counter track: a value over time
// (draw calls, bytes uploaded), drawn beside the frames. The zero Counter
// records nothing.
type Counter struct{ c record.Counter }

// Counter returns the counter track named name, defining it with unit on
// first use; later calls with the same name return the same counter.
func (p *Profiler) Counter(name string, unit timeline.Unit) Counter {
	return Counter{p.rec.Counter(name, unit)}
}

// Set records value now. NaN and infinite values are not recorded and
// count as misuse.
func (c Counter) Set(value float64) { c.c.Set(value) }
