package loopcheck

import (
	"fmt"
	"math"

	"github.com/framescope/framescope/timeline"
)

// The rules a trace's GPU zones are held to, here and by the layer's
// tests (layer/): where a zone is, and how it nests.

// GPUZones are the trace's zones on GPU queues and their lanes.
func GPUZones(tr *timeline.Trace) []timeline.Span {
	var out []timeline.Span
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track); k != nil && (k.Kind == timeline.TrackGPUQueue || k.Kind == timeline.TrackGPULane) {
			out = append(out, s)
		}
	}
	return out
}

// InWindow reports whether z lies within [t0, t1] on the host clock,
// within its error bound.
func InWindow(z timeline.Span, t0, t1 int64) bool {
	e := int64(z.ErrNs)
	return z.Start+e >= t0 && z.End-e <= t1
}

// Nesting holds a zone to the depth its place in the program says, or,
// for a zone of a secondary (fromSecondary), to lying inside one of the
// primaries' command buffer zones (primaries), exactly: a secondary is a
// recording of its own, read back apart from its primary, and the
// profiler converts a submission's zones with one state of the clock
// model, which keeps the order of their ticks. A zone on a lane, or a
// primary's zone moved there, has no depth to check. It returns what is
// wrong, or "".
func Nesting(tr *timeline.Trace, z timeline.Span, depth int, fromSecondary bool, primaries []timeline.Span) string {
	name := tr.Name(z.Name)
	if fromSecondary {
		near := int64(math.MaxInt64) // how far outside the nearest primary it lies
		for _, p := range primaries {
			if z.Start >= p.Start && z.End <= p.End {
				return ""
			}
			near = min(near, max(p.Start-z.Start, 0)+max(z.End-p.End, 0))
		}
		return fmt.Sprintf("a secondary's zone %q at [%d, %d] (error bound %d ns) lies in no primary's command buffer zone: %d ns outside the nearest", name, z.Start, z.End, z.ErrNs, near)
	}
	if tr.Track(z.Track).Kind == timeline.TrackGPULane || int(z.Depth) == depth {
		return ""
	}
	return fmt.Sprintf("a zone %q at depth %d, want %d", name, z.Depth, depth)
}

// Primaries are the trace's zones named name (the layer's command buffer
// zones), for Nesting.
func Primaries(tr *timeline.Trace, name string) []timeline.Span {
	var out []timeline.Span
	for _, z := range GPUZones(tr) {
		if tr.Name(z.Name) == name {
			out = append(out, z)
		}
	}
	return out
}
