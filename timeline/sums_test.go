package timeline

import (
	"math"
	"strings"
	"testing"
)

// Counts never wrap (issue 38): drops of 2^64-1 and 1 totalled 0, and a
// book of 0 issued balanced against them; now the total saturates and says
// so, the book does not balance, and Validate, which every reader runs,
// refuses such a trace.
func TestSumsDoNotWrap(t *testing.T) {
	d := Drops{QueryLimit: math.MaxUint64, NoFrame: 1}
	if d.Total() != math.MaxUint64 || !d.Overflows() {
		t.Errorf("total %d, overflows %v: want 2^64-1, true", d.Total(), d.Overflows())
	}
	if (Drops{QueryLimit: math.MaxUint64}).Overflows() {
		t.Errorf("2^64-1 alone overflows")
	}
	if (Ledger{}).Balanced(d) {
		t.Errorf("a book of 0 issued balances against 2^64 lost")
	}
	l := Ledger{Zones: Book{Issued: 5, Delivered: math.MaxUint64, Open: 6}}
	if l.Balanced(Drops{}) {
		t.Errorf("5 issued balances against 2^64-1 delivered and 6 open")
	}
	tr := &Trace{Names: []string{""}, Drops: d}
	if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "drops add up past 2^64-1") {
		t.Errorf("Validate: %v", err)
	}
	tr = &Trace{Names: []string{""}, Ledger: l}
	if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "zones book") {
		t.Errorf("Validate of a book past 2^64-1: %v", err)
	}
	if s, ok := Sum(1, 2, math.MaxUint64-3); s != math.MaxUint64 || !ok {
		t.Errorf("Sum to exactly 2^64-1: %d, %v", s, ok)
	}
}
