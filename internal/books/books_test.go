package books

import (
	"testing"

	"github.com/framescope/framescope/timeline"
)

// The books each cause belongs to, as timeline.Ledger's doc
// states them, and which causes are losses: derived from Ledger.Balanced
// and Drops.Total, they must read so.
func TestKindOf(t *testing.T) {
	for c := range NumCauses {
		if c.Loss() != (c != Misuse) {
			t.Errorf("%s.Loss() = %v: every cause but misuse is a loss", c, c.Loss())
		}
	}
	want := map[Cause]Kind{QueryLimit: ZoneBook, NoFrame: ZoneBook, Closed: ZoneBook, Unended: ZoneBook,
		Unsubmitted: ZoneBook, Pending: ZoneBook, Overlapped: ZoneBook, RunAgain: ZoneBook, Abandoned: ZoneBook, Uncalibrated: ZoneBook,
		GPUSpans: ZoneBook,
		Spans:    SpanBook, Flows: FlowBook}
	for c := range NumCauses {
		k, own := KindOf(c)
		if w, ok := want[c]; own != ok || own && k != w {
			t.Errorf("KindOf(%s) = %s, %v; want %s, %v", c, k, own, w, ok)
		}
	}
}

// Unbalanced and Ledger.Balanced agree on random books, and a book's
// shares of Evicted and Sink count as its losses.
func TestUnbalancedAgrees(t *testing.T) {
	for i := range 2000 {
		var l timeline.Ledger
		var d timeline.Drops
		for c := range NumCauses {
			*Count(&d, c) = uint64((i*7 + int(c)*3) % 3)
		}
		for j := range NumLedgerCounts {
			*LedgerCount(&l, j) = uint64((i + j*j) % 4)
		}
		// Make some of them balance.
		if i%2 == 0 {
			for k := range NumKinds {
				b := Of(&l, k)
				b.Issued = b.Delivered + b.Open + Lost(&l, k, d).Total()
			}
		}
		if got, want := len(Unbalanced(&l, d)) == 0, l.Balanced(d); got != want {
			t.Fatalf("case %d: Unbalanced says balanced %v, Ledger.Balanced %v: %+v %+v", i, got, want, l, d)
		}
		if i%2 == 0 && !l.Balanced(d) {
			t.Fatalf("case %d: made to balance, does not: %+v %+v", i, l, d)
		}
	}
}
