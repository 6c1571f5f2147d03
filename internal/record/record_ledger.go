package record

import (
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// ledgerState is the recorder's side of its Ledger: counts kept at each
// step an item takes, never derived from what is held. Guarded by mu.
type ledgerState struct {
	// items follows the spans of the Zones and Spans books, and the
	// flows of the Flows book (whose evictions and splits are the
	// recorder's Evicted.Flows and Stats.FlowsSplit).
	items [books.NumKinds]itemCount

	cpuTaken uint64 // CPU span records collected from the tracks
	handed   uint64 // GPU spans handed to AddGPUSpans, on a queue with no source
	linked   uint64 // zones placed with a submission key: arrows issued here
	waiting  uint64 // of them, those whose key waits for its CPU span

	// The sources' reports, summed: each source's last one counts.
	srcZones    timeline.Book // Issued, Open
	srcUnlinked uint64        // zones that came without the key their frame should have given them
}

// itemCount follows the spans (or flows) of one book through the store:
// each is held until it is delivered, evicted or lost with a sink batch.
type itemCount struct {
	stored, delivered, evicted, sink uint64
}

func (c itemCount) held() uint64 { return c.stored - c.delivered - c.evicted - c.sink }

// bookOfTrack returns the book of the spans of track id: CPU spans or GPU
// zones; ok is false for the recorder's own spans (frames). The caller
// holds mu.
func (r *Recorder) bookOfTrack(id timeline.TrackID) (books.Kind, bool) {
	if id == 0 || int(id) > len(r.tracks) {
		return 0, false
	}
	switch r.tracks[id-1].Kind {
	case timeline.TrackCPU:
		return books.SpanBook, true
	case timeline.TrackGPUQueue, timeline.TrackGPULane:
		return books.ZoneBook, true
	}
	return 0, false
}

// countSpan counts a step of a span of track: step moves it between the
// counts of its book's items. The caller holds mu.
func (r *Recorder) countSpan(track timeline.TrackID, step func(*itemCount)) {
	if k, ok := r.bookOfTrack(track); ok {
		step(&r.items[k])
	}
}

// The steps an item takes.
func stored(c *itemCount)    { c.stored++ }
func delivered(c *itemCount) { c.delivered++ }
func evictedN(c *itemCount)  { c.evicted++ }

// unlost books an item lost with a failed batch as delivered: a Dump had
// it after all.
func unlost(c *itemCount) { c.sink--; c.delivered++ }

// ledger returns the books, against d, the running total of drops taken
// with them. The caller holds mu.
func (r *Recorder) ledger(d timeline.Drops) timeline.Ledger {
	z, c, f := r.items[books.ZoneBook], r.items[books.SpanBook], r.items[books.FlowBook]
	return timeline.Ledger{
		Zones: timeline.Book{
			Issued:    r.handed + r.srcZones.Issued,
			Delivered: z.delivered,
			Open:      r.srcZones.Open + z.held(),
			Evicted:   z.evicted, Sink: z.sink,
		},
		Spans: timeline.Book{
			// d.Spans is what the tracks dropped and what the recorder
			// dropped of what it took (names it never gave out).
			Issued:    r.cpuTaken + d.Spans - r.drops.Spans,
			Delivered: c.delivered,
			Open:      c.held(),
			Evicted:   c.evicted, Sink: c.sink,
		},
		Flows: timeline.Book{
			// Flows evicted or split are in Drops.Flows, the book's own.
			Issued:    r.linked + r.srcUnlinked,
			Delivered: f.delivered,
			Open:      r.waiting + f.held() - r.evicted.Flows - r.stats.FlowsSplit,
			Sink:      f.sink,
		},
	}
}

// batchCount counts what a sink batch delivers for the first time, by
// book, and which items those are, so that a failure can mark them.
type batchCount struct {
	n     [books.NumKinds]uint64
	spans []uint64 // sequence numbers
	flows []uint64 // absolute indexes
}

// deliverBatch counts a batch's first deliveries as delivered, as they
// are once the sink has it. The caller holds mu.
func (r *Recorder) deliverBatch(c *batchCount) {
	for k := range books.NumKinds {
		r.items[k].delivered += c.n[k]
	}
}

// failBatch moves a batch's first deliveries to the items lost with it:
// the sink failed. Each is marked, so that a Dump that still delivers it
// books it delivered again. The books the sink was last sent change
// alike: a change that comes from the sink's own failure makes no batch,
// as a change of Drops.Sink alone makes none; the next batch carries it.
// The caller holds mu.
func (r *Recorder) failBatch(c *batchCount) {
	for k := range books.NumKinds {
		r.items[k].delivered -= c.n[k]
		r.items[k].sink += c.n[k]
		b := books.Of(&r.sentLedger, k)
		b.Delivered -= c.n[k]
		b.Sink += c.n[k]
	}
	for _, seq := range c.spans {
		if i := r.spanIndex(seq); i >= 0 {
			r.spans.at(i).flags |= lostFlag
		}
	}
	for _, a := range c.flows {
		if a >= r.flows.base && a < r.flows.end() {
			r.flows.abs(a).lost = true
		}
	}
}
