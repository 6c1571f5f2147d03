package framerule

import (
	"testing"

	"github.com/framescope/framescope/timeline"
)

// Take takes what Validate accepts, and no frame it would refuse the
// trace for; Reset begins a batch in which an ID is free again.
func TestTake(t *testing.T) {
	var b Batch
	for _, c := range []struct {
		f    timeline.Frame
		take bool
	}{
		{timeline.Frame{ID: 1, Start: 10, End: 20}, true},
		{timeline.Frame{ID: 2, Start: 20}, true}, // open
		{timeline.Frame{ID: 1, Start: 30, End: 40}, false},
		{timeline.Frame{ID: 0, Start: 30, End: 40}, false},
		{timeline.Frame{ID: 3, Start: 50, End: 40}, false},
		{timeline.Frame{ID: 4, Start: -5, End: 40}, false},
		{timeline.Frame{ID: 5, Start: 60, End: 60}, true},
	} {
		if got := b.Take(c.f); got != c.take {
			t.Errorf("Take(%+v) = %v, want %v", c.f, got, c.take)
		}
		if c.take {
			if err := (&timeline.Trace{Frames: []timeline.Frame{c.f}}).Validate(); err != nil {
				t.Errorf("took %+v, which Validate refuses: %v", c.f, err)
			}
		}
	}
	b.Reset()
	if !b.Take(timeline.Frame{ID: 1, Start: 70, End: 80}) {
		t.Error("after Reset, ID 1 is still taken")
	}
}
