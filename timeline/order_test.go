package timeline

import (
	"slices"
	"testing"
)

// The tie cases of the one order: each list is in CompareSpans order, and
// each span's Depth is the number of spans before it that enclose it,
// which is what renest computes, what Validate accepts, and what the
// exporters nest by (their tests run the same cases through
// internal/testkit/tracecases).
func TestCompareSpansTies(t *testing.T) {
	sp := func(track TrackID, start, end int64, depth uint16) Span {
		return Span{Track: track, Name: 1, Start: start, End: end, Depth: depth}
	}
	for _, c := range []struct {
		name  string
		spans []Span // in the order CompareSpans must give
	}{
		{"equal starts: the longer is the parent", []Span{sp(1, 0, 10, 0), sp(1, 0, 5, 1), sp(1, 5, 10, 1)}},
		{"equal intervals nest by depth", []Span{sp(1, 0, 10, 0), sp(1, 0, 10, 1), sp(1, 0, 10, 2)}},
		{"a zero-length sibling before a longer one", []Span{sp(1, 0, 100, 0), sp(1, 0, 0, 1), sp(1, 0, 50, 1), sp(1, 50, 50, 1)}},
		{"a zero-length child at its parent's start", []Span{sp(1, 0, 10, 0), sp(1, 0, 0, 1)}},
		{"zero-length spans at one time nest by depth", []Span{sp(1, 200, 200, 0), sp(1, 200, 200, 1)}},
		{"a span starting where one ends is its sibling", []Span{sp(1, 0, 10, 0), sp(1, 10, 20, 0)}},
		{"tracks first", []Span{sp(1, 50, 60, 0), sp(2, 0, 100, 0), sp(2, 0, 100, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Clone(c.spans)
			slices.Reverse(got)
			slices.SortFunc(got, func(a, b Span) int { return CompareSpans(&a, &b) })
			if !slices.Equal(got, c.spans) {
				t.Fatalf("order %v, want %v", got, c.spans)
			}
			renested := slices.Clone(c.spans)
			renest(renested)
			for i := range c.spans {
				if renested[i].Depth != c.spans[i].Depth {
					t.Errorf("span %d [%d,%d]: renest gives depth %d, want %d", i, c.spans[i].Start, c.spans[i].End, renested[i].Depth, c.spans[i].Depth)
				}
			}
			tr := &Trace{Names: []string{"", "x"}, Tracks: []Track{{ID: 1, Kind: TrackCPU}, {ID: 2, Kind: TrackCPU}}, Spans: c.spans}
			if err := tr.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestEncloses(t *testing.T) {
	p := Span{Start: 0, End: 10}
	for _, c := range []struct {
		s    Span
		want bool
	}{
		{Span{Start: 0, End: 10}, true},            // an equal interval after it
		{Span{Start: 2, End: 5}, true},             // inside
		{Span{Start: 5, End: 11}, false},           // overlaps its end
		{Span{Start: 10, End: 10}, false},          // zero-length at its end, not deeper
		{Span{Start: 10, End: 10, Depth: 1}, true}, // zero-length at its end, deeper
	} {
		if got := Encloses(&p, &c.s); got != c.want {
			t.Errorf("Encloses([0,10], %+v) = %v", c.s, got)
		}
	}
}
