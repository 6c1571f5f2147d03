package record

import (
	"slices"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// The tie cases of the one order: each list is in timeline.CompareSpans order, and
// each span's Depth is the number of spans before it that enclose it,
// which is what renest computes, what Validate accepts, and what the
// exporters nest by (their tests run the same cases through
// internal/testkit/tracecases).
func TestCompareSpansTies(t *testing.T) {
	sp := func(track timeline.TrackID, start, end int64, depth uint16) timeline.Span {
		return timeline.Span{Track: track, Name: 1, Start: start, End: end, Depth: depth}
	}
	for _, c := range []struct {
		name  string
		spans []timeline.Span // in the order timeline.CompareSpans must give
	}{
		{"equal starts: the longer is the parent", []timeline.Span{sp(1, 0, 10, 0), sp(1, 0, 5, 1), sp(1, 5, 10, 1)}},
		{"equal intervals nest by depth", []timeline.Span{sp(1, 0, 10, 0), sp(1, 0, 10, 1), sp(1, 0, 10, 2)}},
		{"a zero-length sibling before a longer one", []timeline.Span{sp(1, 0, 100, 0), sp(1, 0, 0, 1), sp(1, 0, 50, 1), sp(1, 50, 50, 1)}},
		{"a zero-length child at its parent's start", []timeline.Span{sp(1, 0, 10, 0), sp(1, 0, 0, 1)}},
		{"zero-length spans at one time nest by depth", []timeline.Span{sp(1, 200, 200, 0), sp(1, 200, 200, 1)}},
		{"a span starting where one ends is its sibling", []timeline.Span{sp(1, 0, 10, 0), sp(1, 10, 20, 0)}},
		{"tracks first", []timeline.Span{sp(1, 50, 60, 0), sp(2, 0, 100, 0), sp(2, 0, 100, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Clone(c.spans)
			slices.Reverse(got)
			slices.SortFunc(got, func(a, b timeline.Span) int { return timeline.CompareSpans(&a, &b) })
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
			tr := &timeline.Trace{Names: []string{"", "x"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU}, {ID: 2, Kind: timeline.TrackCPU}}, Spans: c.spans}
			if err := tr.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
