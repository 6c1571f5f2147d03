package loopcheck

import (
	"fmt"

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
// primaries' command buffer zones (primaries) within both their error
// bounds: a secondary is a recording of its own, read back and converted
// apart from its primary, and the two conversions may differ by as much
// as the clock model's error (then the trace lays one of them on a lane).
// A zone on a lane, or a primary's zone moved there, has no depth to
// check. It returns what is wrong, or "".
func Nesting(tr *timeline.Trace, z timeline.Span, depth int, fromSecondary bool, primaries []timeline.Span) string {
	name := tr.Name(z.Name)
	if fromSecondary {
		for _, p := range primaries {
			e := int64(z.ErrNs) + int64(p.ErrNs)
			if z.Start+e >= p.Start && z.End-e <= p.End {
				return ""
			}
		}
		return fmt.Sprintf("a secondary's zone %q at [%d, %d] lies in no primary's command buffer zone, even within the error bounds", name, z.Start, z.End)
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
