package perfetto

import (
	"testing"

	"github.com/framescope/framescope/internal/tracesplit"
)

// The layer cuts its trace into files by Read's limits (tracesplit's),
// which must be these.
func TestSplitLimitsAreRead(t *testing.T) {
	if maxSequences != tracesplit.ReaderSequences {
		t.Fatalf("Read takes %d packet sequences; the layer cuts its files for %d", maxSequences, tracesplit.ReaderSequences)
	}
	if l := (Limits{MaxSpans: tracesplit.ReaderSlices, MaxBytes: tracesplit.ReaderBytes}).clamp(); l.MaxSpans != tracesplit.ReaderSlices || l.MaxBytes != tracesplit.ReaderBytes {
		t.Fatalf("Read clamps the layer's limits to %+v", l)
	}
}
