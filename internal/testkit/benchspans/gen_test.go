package benchspans

import (
	"testing"

	"github.com/framescope/framescope/timeline"
)

func TestTraceIsWellFormed(t *testing.T) {
	tr := Trace(5000, 1)
	if len(tr.Spans) < 5000 {
		t.Fatalf("got %d spans, want at least 5000", len(tr.Spans))
	}
	if len(Names) != 51 {
		t.Errorf("got %d names, want 50 and the empty name", len(Names)-1)
	}
	used := map[timeline.NameID]bool{}
	// Spans of one track must nest properly, with the depth they claim.
	byTrack := map[timeline.TrackID][]timeline.Span{}
	for _, s := range tr.Spans {
		used[s.Name] = true
		if s.End < s.Start || int(s.Name) >= len(tr.Names) || tr.Track(s.Track) == nil {
			t.Fatalf("bad span %+v", s)
		}
		byTrack[s.Track] = append(byTrack[s.Track], s)
	}
	if len(used) < 30 {
		t.Errorf("only %d distinct names used", len(used))
	}
	for id, spans := range byTrack {
		var stack []timeline.Span
		for _, s := range spans { // generated in begin order
			for len(stack) > 0 && stack[len(stack)-1].End <= s.Start {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 && s.End > stack[len(stack)-1].End {
				t.Fatalf("track %d: %+v overlaps %+v", id, s, stack[len(stack)-1])
			}
			if int(s.Depth) != len(stack) {
				t.Fatalf("track %d: %+v has depth %d, nests at %d", id, s, s.Depth, len(stack))
			}
			stack = append(stack, s)
		}
	}
	for _, f := range tr.Flows {
		if tr.Spans[f.From].Track != MainTrack || tr.Spans[f.To].Depth != 0 {
			t.Fatalf("bad flow %+v", f)
		}
	}
	if a, b := Trace(1000, 7), Trace(1000, 7); len(a.Spans) != len(b.Spans) || a.Spans[500] != b.Spans[500] {
		t.Error("the same seed gave different timelines")
	}
}
