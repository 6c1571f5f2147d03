package chrome

import (
	"bytes"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
)

// TestRoundTripCases writes every conformance case (package tracecases)
// batch by batch and reads it back: the timeline must come back as it
// went in, with the depths the spans had, flows in their direction, the
// frames of a trace without a frames track as frames only, and a track
// without a name as one.
func TestRoundTripCases(t *testing.T) {
	for _, c := range tracecases.All() {
		t.Run(c.Name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			for _, b := range c.Batches {
				if err := w.WriteBatch(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			want := merge(c.Batches)
			want.Process.PID = max(want.Process.PID, 1)
			if want.Process.Name == "" {
				want.Process.Name = "framescope"
			}
			diffCanon(t, canon(got), canon(want))
		})
	}
}
