package timeline

// Ledger is the books of what a profiler was handed: every GPU zone, CPU
// span and arrow ends in exactly one place, a trace or a cause of [Drops],
// unless it is still open. Every [Trace] a profiler makes carries it, and
// every exporter writes it, so that a trace says not only what it lacks
// but that nothing else is missing: for each book, Issued = Delivered +
// Open + its losses, which are its own causes of the trace's Drops
// (Zones: QueryLimit through GPUSpans; Spans: Spans; Flows: Flows) and
// its shares of Evicted and Sink.
// The zero Ledger is a trace without books (one made elsewhere, or a
// live capture, whose Drops speak for it).
type Ledger struct {
	// Zones counts GPU zones: every zone an application began
	// (GPU.Zone, refused ones included), once for each execution of a
	// command buffer that runs many times (a recording's, and one
	// submitted again without being recorded again).
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
	// own (see Ledger).
	Evicted uint64
	Sink    uint64
}

// Balanced reports whether every book adds up against the trace's drops
// d: Issued = Delivered + Open + its own causes + its Evicted and Sink.
func (l Ledger) Balanced(d Drops) bool {
	zones, ok := Sum(d.QueryLimit, d.NoFrame, d.Closed, d.Unended, d.Unsubmitted, d.Pending, d.Overlapped, d.RunAgain, d.Abandoned,
		d.Uncalibrated, d.GPUSpans)
	return ok && l.Zones.Adds(zones) && l.Spans.Adds(d.Spans) && l.Flows.Adds(d.Flows)
}

// Adds reports whether b adds up with own items lost to its own causes:
// Issued = Delivered + Open + own + Evicted + Sink, the right side
// added with no sum past 2^64-1 (one that passes it does not add up).
func (b Book) Adds(own uint64) bool {
	s, ok := Sum(b.Delivered, b.Open, own, b.Evicted, b.Sink)
	return ok && b.Issued == s
}
