package perfetto

import (
	"bytes"
	"math"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
)

// TestOptionExtremes: options at the ends of their types are clamped to
// their bounds, and the writer still writes a trace Read takes (a
// FlushBytes of MaxInt once panicked in makeslice).
func TestOptionExtremes(t *testing.T) {
	for _, o := range []Options{
		{FlushBytes: math.MaxInt, MaxSequences: math.MaxInt},
		{FlushBytes: math.MinInt, MaxSequences: math.MinInt},
		{FlushBytes: 1, MaxSequences: 1},
	} {
		c := o.Clamp()
		if c.FlushBytes < 1 || c.FlushBytes > maxFlushBytes || c.MaxSequences < 1 || c.MaxSequences > maxMaxSequences {
			t.Errorf("%+v clamps to %+v, out of bounds", o, c)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf, o)
		if cap(w.e.buf) > maxFlushBytes+4096 {
			t.Errorf("%+v: buffer of %d bytes", o, cap(w.e.buf))
		}
		for _, b := range tracecases.All()[1].Batches {
			if err := w.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&buf); err != nil {
			t.Errorf("%+v: reading back: %v", o, err)
		}
	}
	if got := (Options{}).Clamp(); got.FlushBytes != 64<<10 || got.MaxSequences != 8 {
		t.Errorf("zero Options clamp to %+v, want the defaults", got)
	}
}
