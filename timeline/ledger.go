package timeline

// Ledger is the books of what a profiler was handed: every GPU zone, CPU
// span and arrow ends in exactly one place, a trace or a cause of [Drops],
// unless it is still open. Every [Trace] a profiler makes carries it, and
// every exporter writes it, so that a
// trace says not only what it lacks but that nothing else is missing:
// for each book, Issued = Delivered + Open + its losses ([Ledger.Lost]).
// The zero Ledger is a trace without books (one made elsewhere, or a
// live capture, whose Drops speak for it).
type Ledger struct {
	// Zones counts GPU zones: every zone an application began
	// (GPU.Zone, refused ones included), or every span handed to
	// AddGPUSpans on a queue with no [GPUSource].
	Zones Book
	// Spans counts CPU spans, once they end, or are dropped as they
	// begin (nested too deep).
	Spans Book
	// Flows counts arrows: every zone that reached the timeline carrying
	// a submission key, and every one that came without the key its
	// frame's submissions should have given it. A zone that never reached
	// the timeline is counted once, in Zones under its cause, and is not
	// in Flows.
	Flows Book
}

// Book is one kind's account. Delivered counts the items that reached a
// Dump or a sink batch, once however often they did: a trace made by the
// recorder's only Dump, or all its sink batches together, holds exactly
// Delivered items of the kind. Open counts those neither delivered nor
// lost yet: zones the GPU has not finished or the application not
// collected, spans held in memory for a later Dump or batch, arrows
// waiting for their submission's CPU span. Once the recorder is closed
// and dumped (or flushed to its sink), Open is 0.
type Book struct {
	Issued    uint64
	Delivered uint64
	Open      uint64
	// Evicted and Sink are the book's shares of Drops.Evicted and
	// Drops.Sink, which several kinds share; its other causes are its
	// own (see BookOf).
	Evicted uint64
	Sink    uint64
}

// BookKind names a book of a [Ledger].
type BookKind int

// The books.
const (
	BookZones BookKind = iota
	BookSpans
	BookFlows
	NumBooks
)

var bookKeys = [NumBooks]string{BookZones: "zones", BookSpans: "spans", BookFlows: "flows"}

// String is the book's key in every trace format and in framescope
// stats: "zones", "spans", "flows".
func (k BookKind) String() string {
	if k < 0 || k >= NumBooks {
		return "unknown"
	}
	return bookKeys[k]
}

// BookOf returns the book whose losses cause c counts, and whether c
// belongs to one book alone: Evicted and Sink are shared (each book has
// its share), Untimed loses a zone's time, not the zone, and Frames,
// Samples and Misuse belong to no book.
func BookOf(c DropCause) (BookKind, bool) {
	switch c {
	case DropQueryLimit, DropNoFrame, DropClosed, DropUnended, DropUnsubmitted, DropPending, DropUncalibrated, DropGPUSpans:
		return BookZones, true
	case DropSpans:
		return BookSpans, true
	case DropFlows:
		return BookFlows, true
	}
	return 0, false
}

// Book returns book k.
func (l *Ledger) Book(k BookKind) *Book {
	switch k {
	case BookZones:
		return &l.Zones
	case BookSpans:
		return &l.Spans
	case BookFlows:
		return &l.Flows
	}
	return new(Book)
}

// Lost returns what book k lost, by cause: the causes of d that are k's
// alone, and k's shares of Evicted and Sink.
func (l *Ledger) Lost(k BookKind, d Drops) Drops {
	var lost Drops
	for c := range NumDropCauses {
		if b, own := BookOf(c); own && b == k {
			*lost.Count(c) = *d.Count(c)
		}
	}
	b := l.Book(k)
	lost.Evicted, lost.Sink = b.Evicted, b.Sink
	return lost
}

// Balanced reports whether every book adds up against the trace-wide
// drops d: Issued = Delivered + Open + Lost(k, d).Total() for each.
func (l *Ledger) Balanced(d Drops) bool {
	for k := range NumBooks {
		if !l.balanced(k, d) {
			return false
		}
	}
	return true
}

func (l *Ledger) balanced(k BookKind, d Drops) bool {
	b := l.Book(k)
	return b.Issued == b.Delivered+b.Open+l.Lost(k, d).Total()
}

// Unbalanced returns the books that do not add up against d.
func (l *Ledger) Unbalanced(d Drops) []BookKind {
	var out []BookKind
	for k := range NumBooks {
		if !l.balanced(k, d) {
			out = append(out, k)
		}
	}
	return out
}

// Empty reports whether the ledger has no books: nothing was issued.
func (l Ledger) Empty() bool { return l == Ledger{} }

// NumLedgerCounts is how many counts a Ledger holds: five a book.
const NumLedgerCounts = 5 * int(NumBooks)

var bookFields = [5]string{"issued", "delivered", "open", "evicted", "sink"}

// LedgerKey is the name of count i of a Ledger in every trace format and
// in framescope stats: "zones.issued", "zones.delivered", "zones.open",
// "zones.evicted", "zones.sink", "spans.issued", ..., "flows.sink".
func LedgerKey(i int) string {
	if i < 0 || i >= NumLedgerCounts {
		return "unknown"
	}
	return BookKind(i/5).String() + "." + bookFields[i%5]
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

// Count returns count i (see LedgerKey), for reading and setting.
func (l *Ledger) Count(i int) *uint64 {
	if i < 0 || i >= NumLedgerCounts {
		return new(uint64)
	}
	b := l.Book(BookKind(i / 5))
	return [5]*uint64{&b.Issued, &b.Delivered, &b.Open, &b.Evicted, &b.Sink}[i%5]
}
