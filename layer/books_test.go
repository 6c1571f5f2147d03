package layer

import (
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/loopcheck"
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

// Past the 4,096 label names the layer registers, later labels share one
// name, and the layer's own zones keep theirs: a render pass first seen
// after 5,000 distinct labels is still "render pass" (before, it was one
// of the "(other labels)").
func TestOwnNamesPastLabelCapUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n, labels = 5000, 4096
	tr, _ := runShape(t, dir, nil, prog, "names", n)
	byName := map[string]int{}
	for _, z := range loopcheck.GPUZones(tr) {
		byName[tr.Name(z.Name)]++
	}
	if byName["render pass"] != 1 || byName["command buffer"] != n+1 || byName["(other labels)"] != n-labels {
		t.Errorf("%d render pass, %d command buffer, %d (other labels) zones, want 1, %d, %d", byName["render pass"],
			byName["command buffer"], byName["(other labels)"], n+1, n-labels)
	}
	checkShapeZones(t, tr, 2*n+2)
}

// A command buffer reset before it ends (its pool reset, or begun again),
// as Mesa's zink does once a frame: its zones can never run, and are
// counted abandoned, not unended (the cause of labels left open).
func TestResetBeforeEndUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	const n = 50
	env := []string{"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "VK_ADD_LAYER_PATH=" + validationDir()}
	tr, out := runShape(t, dir, env, prog, "reset", n, "-frame-every", "1")
	if validationSpoke(out) {
		t.Errorf("the validation layer spoke:\n%s", lastOf(out))
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	// Each round: two recordings abandoned, a zone for the command buffer
	// and one for its label each; one kept, the same two zones.
	if want := uint64(4 * n); tr.Drops.Abandoned != want || tr.Drops.Total() != want {
		t.Errorf("drops %+v, want %d abandoned alone", tr.Drops, want)
	}
	if want := uint64(2 * n); tr.Ledger.Zones.Delivered != want {
		t.Errorf("%d zones delivered, want %d", tr.Ledger.Zones.Delivered, want)
	}
}
