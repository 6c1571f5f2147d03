// Package limitslices lays what limits each frame (package timeline/limits)
// out as the writers draw it: a track of verdict slices and a track of GPU
// idle slices. Frames may overlap (the layer's -frame-every ends one
// before its thread is done with it), and one track's slices may not, so
// each slice begins where the last one on its track ended, and one left
// empty (a frame wholly inside the one before) is not drawn.
package limitslices

import (
	"cmp"
	"math"
	"slices"

	"github.com/framescope/framescope/timeline/limits"
)

// Slice is one slice: its interval and its frame, and for a gap its cause.
type Slice struct {
	Start, End int64
	Frame      *limits.Frame
	Cause      limits.Cause
}

// Verdicts are r's frames as slices, in order of start.
func Verdicts(r limits.Report) []Slice {
	var out []Slice
	for i := range r.Frames {
		f := &r.Frames[i]
		out = appendClipped(out, Slice{Start: f.Start, End: f.End, Frame: f})
	}
	return out
}

// Gaps are r's frames' GPU idle gaps as slices, in order of start.
func Gaps(r limits.Report) []Slice {
	var all []Slice
	for i := range r.Frames {
		f := &r.Frames[i]
		for _, g := range f.Gaps {
			all = append(all, Slice{Start: g.Start, End: g.End, Frame: f, Cause: g.Cause})
		}
	}
	slices.SortStableFunc(all, func(a, b Slice) int { return cmp.Compare(a.Start, b.Start) })
	var out []Slice
	for _, s := range all {
		out = appendClipped(out, s)
	}
	return out
}

// appendClipped appends s, begun no earlier than the last slice's end, if
// anything of it is left.
func appendClipped(out []Slice, s Slice) []Slice {
	end := int64(math.MinInt64)
	if n := len(out); n > 0 {
		end = out[n-1].End
	}
	if s.Start = max(s.Start, end); s.End > s.Start {
		out = append(out, s)
	}
	return out
}
