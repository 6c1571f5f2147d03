package chrome

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// TestReadDropsAfterKill: a writer that never closed (its process was
// killed) leaves only the running "framescope dropped" counter; Read
// counts it instead of reporting no drops.
func TestReadDropsAfterKill(t *testing.T) {
	b := tracecases.All()[1].Batches[0]
	b.Drops = timeline.Drops{QueryLimit: 2000, Evicted: 650}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	// No Close: what a SIGKILL leaves.
	got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Drops.Total() != 2650 {
		t.Errorf("drops %+v (total %d), want 2650 from the running counter", got.Drops, got.Drops.Total())
	}
	// The counter of another trace, cut short.
	got, err = Read(strings.NewReader(`[{"ph":"C","pid":1,"ts":5,"name":"framescope dropped","args":{"value":12}},
{"ph":"C","pid":1,"ts":9,"name":"framescope dropped","args":{"value":2650}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Drops.Total() != 2650 {
		t.Errorf("drops %+v, want 2650", got.Drops)
	}
}

// TestReadDropsClosed: once closed, the record and the counter agree, and
// nothing is counted twice: not the record's own counts, nor the flows
// and samples the writer refused, which the counter includes.
func TestReadDropsClosed(t *testing.T) {
	b := tracecases.All()[1].Batches[0]
	b.Drops = timeline.Drops{QueryLimit: 7, Unended: 3}
	b.Flows = append(b.Flows, timeline.Flow{From: 0, To: 1 << 20}) // refused
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Invalid().Flows != 1 {
		t.Fatalf("writer refused %+v, want one flow", w.Invalid())
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := (timeline.Drops{QueryLimit: 7, Unended: 3}); got.Drops != want {
		t.Errorf("drops %+v, want %+v", got.Drops, want)
	}
}
