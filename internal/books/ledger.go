package books

import "github.com/framescope/framescope/timeline"

// Kind names a book of a timeline.Ledger.
type Kind int

// The books.
const (
	ZoneBook Kind = iota
	SpanBook
	FlowBook
	NumKinds
)

var kindKeys = [NumKinds]string{ZoneBook: "zones", SpanBook: "spans", FlowBook: "flows"}

// String is the book's key in every trace format and in framescope
// stats: "zones", "spans", "flows".
func (k Kind) String() string {
	if k < 0 || k >= NumKinds {
		return "unknown"
	}
	return kindKeys[k]
}

// KindOf returns the book whose losses cause c counts, and whether c
// belongs to one book alone: Evicted and Sink are shared (each book has
// its share), Untimed and Work lose a zone's time or counts, not the
// zone, and Frames, Samples and Misuse belong to no book.
func KindOf(c Cause) (Kind, bool) {
	if c < 0 || c >= NumCauses || kindOf[c] < 0 {
		return 0, false
	}
	return kindOf[c], true
}

// kindOf is the book of each cause, as timeline.Ledger.Balanced, the
// rule's one owner, says: a cause is book k's own when one item issued to
// k alone and lost to the cause balances.
var kindOf = func() (t [NumCauses]Kind) {
	for c := range NumCauses {
		t[c] = -1
		for k := range NumKinds {
			var l timeline.Ledger
			var d timeline.Drops
			Of(&l, k).Issued = 1
			*Count(&d, c) = 1
			if l.Balanced(d) {
				t[c] = k
			}
		}
	}
	return t
}()

// Of returns l's book k.
func Of(l *timeline.Ledger, k Kind) *timeline.Book {
	switch k {
	case ZoneBook:
		return &l.Zones
	case SpanBook:
		return &l.Spans
	case FlowBook:
		return &l.Flows
	}
	return new(timeline.Book)
}

// Lost returns what book k of l lost, by cause: the causes of d that are
// k's alone, and k's shares of Evicted and Sink.
func Lost(l *timeline.Ledger, k Kind, d timeline.Drops) timeline.Drops {
	var lost timeline.Drops
	for c := range NumCauses {
		if b, own := KindOf(c); own && b == k {
			*Count(&lost, c) = *Count(&d, c)
		}
	}
	b := Of(l, k)
	lost.Evicted, lost.Sink = b.Evicted, b.Sink
	return lost
}

// Unbalanced returns the books of l that do not add up against d.
func Unbalanced(l *timeline.Ledger, d timeline.Drops) []Kind {
	var out []Kind
	for k := range NumKinds {
		if !Balances(l, k, d) {
			out = append(out, k)
		}
	}
	return out
}

// Balances reports whether book k of l adds up against d: Issued =
// Delivered + Open + lost, with no sum past 2^64-1 (one that passes it,
// which no recorder counts, does not add up).
func Balances(l *timeline.Ledger, k Kind, d timeline.Drops) bool {
	b, lost := Of(l, k), Lost(l, k, d)
	s, ok := timeline.Sum(b.Delivered, b.Open, lost.Total())
	return ok && !lost.Overflows() && b.Issued == s
}

// NumLedgerCounts is how many counts a Ledger holds: five a book.
const NumLedgerCounts = 5 * int(NumKinds)

var bookFields = [5]string{"issued", "delivered", "open", "evicted", "sink"}

// LedgerKey is the name of count i of a Ledger in every trace format and
// in framescope stats: "zones.issued", "zones.delivered", "zones.open",
// "zones.evicted", "zones.sink", "spans.issued", ..., "flows.sink".
func LedgerKey(i int) string {
	if i < 0 || i >= NumLedgerCounts {
		return "unknown"
	}
	return Kind(i/5).String() + "." + bookFields[i%5]
}

// LedgerKeyOf returns the index of the count named key, or false.
func LedgerKeyOf(key string) (int, bool) {
	for i := range NumLedgerCounts {
		if LedgerKey(i) == key {
			return i, true
		}
	}
	return 0, false
}

// LedgerCount returns l's count i (see LedgerKey), for reading and
// setting.
func LedgerCount(l *timeline.Ledger, i int) *uint64 {
	if i < 0 || i >= NumLedgerCounts {
		return new(uint64)
	}
	b := Of(l, Kind(i/5))
	return [5]*uint64{&b.Issued, &b.Delivered, &b.Open, &b.Evicted, &b.Sink}[i%5]
}
