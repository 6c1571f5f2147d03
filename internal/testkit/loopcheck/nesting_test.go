package loopcheck

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// A secondary's zone lies inside a primary's command buffer zone; past
// the layer's bound on recordings, a primary it refused (counted
// no_frame) leaves the zones of a secondary it executed, timed, in none
// (seed 2116 on the H200: a fresh primary refused, its cached secondary
// a recording from before). Such an orphan meets no primary on its
// queue's track; one that straddles a primary's edge is still wrong.
func TestSecondaryNesting(t *testing.T) {
	names := []string{"", zoneCommandBuffer, zoneSecondary, "f3.S1"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue}, {ID: 2, Kind: timeline.TrackGPUQueue}}
	span := func(track timeline.TrackID, name timeline.NameID, start, end int64) timeline.Span {
		return timeline.Span{Track: track, Name: name, Start: start, End: end}
	}
	primaries := []timeline.Span{span(1, 1, 100, 200), span(1, 1, 300, 400), span(2, 1, 500, 600)}
	for _, tc := range []struct {
		name    string
		z       timeline.Span
		orphans bool
		want    string // "": no problem
	}{
		{"inside its primary", span(1, 2, 120, 180), false, ""},
		{"a label of it inside its primary", span(1, 3, 310, 390), true, ""},
		{"outside every primary", span(1, 2, 700, 780), false, "lies in no primary's"},
		{"outside every primary, a refused one's", span(1, 2, 700, 780), true, ""},
		{"across a primary's end", span(1, 2, 190, 250), true, "lies in no primary's"},
		{"meeting another queue's primary alone", span(1, 3, 550, 560), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &timeline.Trace{Names: names, Tracks: tracks, Spans: append(primaries, tc.z)}
			got := bareNesting(tr, tc.z, primaries, tc.orphans, false)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("bareNesting = %q, want %q", got, tc.want)
			}
		})
	}
}
