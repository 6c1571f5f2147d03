package limitslices

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/timeline/limits"
)

// Overlapping frames and their gaps come out as one track's slices each:
// in order of start, none before the last one's end, the empty ones left
// out, each with its frame.
func TestOverlapping(t *testing.T) {
	r := limits.Report{Frames: []limits.Frame{
		{ID: 1, Start: 0, End: 10, Gaps: []limits.Gap{{Start: 0, End: 2}, {Start: 8, End: 10, Cause: limits.WaitingOnPresent}}},
		{ID: 2, Start: 5, End: 20, Gaps: []limits.Gap{{Start: 6, End: 9}, {Start: 15, End: 20}}},
		{ID: 3, Start: 12, End: 18}, // wholly inside frame 2
		{ID: 4, Start: 20, End: 30},
	}}
	text := func(ss []Slice) string {
		out := ""
		for _, s := range ss {
			out += fmt.Sprintf("[%d,%d) f%d %v; ", s.Start, s.End, s.Frame.ID, s.Cause)
		}
		return out
	}
	if got, want := text(Verdicts(r)), "[0,10) f1 unknown; [10,20) f2 unknown; [20,30) f4 unknown; "; got != want {
		t.Errorf("verdicts %s\nwant     %s", got, want)
	}
	if got, want := text(Gaps(r)), "[0,2) f1 unknown; [6,9) f2 unknown; [9,10) f1 waiting on present; [15,20) f2 unknown; "; got != want {
		t.Errorf("gaps %s\nwant %s", got, want)
	}
}
