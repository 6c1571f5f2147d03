package layer

import (
	"testing"

	"github.com/framescope/framescope/internal/books"
)

// The books hold every execution the GPU ran, past the layer's limits.

// 300 command buffers recorded once and submitted together 20 times: the
// layer keeps 256 recordings, and the zones of the other 44 are refused,
// at each of their executions (no_frame), not once. The GPU ran 12,000
// zones; before, the books said 10,328 issued.
func TestManyRecordingsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n, cmds, recordings = 20, 300, 256
	tr, _ := runShape(t, dir, nil, prog, "many", n, "-frame-every", "1")
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	z := tr.Ledger.Zones
	if want := uint64(2 * cmds * n); z.Issued != want {
		t.Errorf("%d zones issued, want %d (2 a command buffer, %d command buffers, %d submissions)", z.Issued, want, cmds, n)
	}
	if want := uint64(2 * recordings * n); z.Delivered != want {
		t.Errorf("%d zones delivered, want %d", z.Delivered, want)
	}
	if want := uint64(2 * (cmds - recordings) * n); tr.Drops.NoFrame != want || tr.Drops.Total() != want {
		t.Errorf("drops %+v, want %d no_frame alone", tr.Drops, want)
	}
}
