package timeline

import "testing"

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
