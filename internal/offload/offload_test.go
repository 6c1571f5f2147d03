package offload

import "testing"

// Work is handed off once its measured cost reaches Ns, not before: in
// place before any measurement, and by the running average after.
func TestWorth(t *testing.T) {
	var c Cost
	if c.Worth(1 << 30) {
		t.Fatal("worth handing off before anything was measured")
	}
	c.Add(100_000, 1000) // 100 ns a unit
	for _, tc := range []struct {
		units uint64
		want  bool
	}{{1, false}, {199, false}, {200, true}, {5000, true}} {
		if got := c.Worth(tc.units); got != tc.want {
			t.Errorf("Worth(%d) at 100 ns a unit = %v, want %v", tc.units, got, tc.want)
		}
	}
	c.Add(0, 1000) // now 50 ns a unit
	if c.Worth(200) || !c.Worth(400) {
		t.Errorf("at 50 ns a unit: Worth(200) = %v, Worth(400) = %v", c.Worth(200), c.Worth(400))
	}
	if ns, n := c.Totals(); ns != 100_000 || n != 2000 {
		t.Errorf("Totals = %d ns, %d units", ns, n)
	}
}
