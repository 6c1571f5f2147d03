package record

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

var (
	ledgerSeeds = flag.Int("ledger.seeds", 400, "TestLedgerExplore: how many seeds to run")
	ledgerSeed  = flag.Uint64("ledger.seed", 0, "TestLedgerExplore: run this seed alone")
)

// TestLedgerExplore runs random sequences of the recorder's calls, from a
// seed, and checks the books after each: every book balances against the
// drops, nothing is open once the recorder is closed and dumped, each
// book's Delivered is the number of distinct items of its kind that the
// dumps and the sink's successful batches held, and its Issued is what the
// sequence handed out, counted on the side. A failing seed prints itself:
// go test ./timeline -run TestLedgerExplore -ledger.seed=N replays it.
func TestLedgerExplore(t *testing.T) {
	if *ledgerSeed != 0 {
		if err := exploreLedger(*ledgerSeed, new(reach)); err != nil {
			t.Fatalf("seed %d: %v", *ledgerSeed, err)
		}
		return
	}
	var reached reach
	for seed := uint64(1); seed <= uint64(*ledgerSeeds); seed++ {
		if err := exploreLedger(seed, &reached); err != nil {
			t.Fatalf("seed %d: %v\nreplay: go test ./timeline -run TestLedgerExplore -ledger.seed=%d", seed, err, seed)
		}
	}
	// The seeds must reach every way an item can end, or they check
	// little: each count below is over all the runs.
	t.Logf("reached: %+v", reached)
	if *ledgerSeeds >= 400 && !reached.all() {
		t.Errorf("the seeds missed a way an item can end: %+v", reached)
	}
}

// reach counts, over runs, the ways items ended.
type reach struct {
	ZonesEvicted, SpansEvicted, ZonesSink, SpansSink, FlowsSink uint64
	Split, Unlinked, GPUSpans, Spans, Unmatched, Flows          uint64
	Redelivered                                                 uint64 // lost with a batch or split, then dumped
}

func (r *reach) add(st Stats, redelivered uint64) {
	l, d := st.Ledger, st.Drops
	r.ZonesEvicted += l.Zones.Evicted
	r.SpansEvicted += l.Spans.Evicted
	r.ZonesSink += l.Zones.Sink
	r.SpansSink += l.Spans.Sink
	r.FlowsSink += l.Flows.Sink
	r.Split += st.FlowsSplit
	r.Unlinked += st.ZonesUnlinked
	r.GPUSpans += d.GPUSpans
	r.Spans += d.Spans
	r.Unmatched += d.Unended
	r.Flows += l.Flows.Delivered
	r.Redelivered += redelivered
}

func (r reach) all() bool {
	return r.ZonesEvicted > 0 && r.SpansEvicted > 0 && r.ZonesSink > 0 && r.SpansSink > 0 && r.FlowsSink > 0 &&
		r.Split > 0 && r.Unlinked > 0 && r.GPUSpans > 0 && r.Spans > 0 && r.Unmatched > 0 && r.Flows > 0 && r.Redelivered > 0
}

// ledgerRun is one random sequence: the recorder, what it was handed
// (counted here, not by the recorder), and what came out.
type ledgerRun struct {
	rng  *rand.Rand
	r    *Recorder
	sink bool

	zones, spans uint64 // handed out, counted on the side
	names        []timeline.NameID

	seen     [books.NumKinds]map[[4]int64]bool // distinct items delivered
	failing  bool                              // the sink fails now
	now      int64                             // a clock of our own for GPU spans
	keys     []uint64
	nextKey  uint64
	openSpan [3][]OpenSpan

	redelivered uint64 // items a Dump delivered after a failed batch or a split had them lost
}

func exploreLedger(seed uint64, reached *reach) error {
	x := &ledgerRun{rng: rand.New(rand.NewPCG(seed, 0x1ed9e7)), now: timeline.Now()}
	for k := range x.seen {
		x.seen[k] = map[[4]int64]bool{}
	}
	o := Options{MaxLanes: 1 + x.rng.IntN(4)}
	if x.rng.IntN(3) == 0 {
		o.WindowFrames = 1 + x.rng.IntN(10)
	}
	if x.rng.IntN(3) == 0 {
		o.MaxSpans = 4 + x.rng.IntN(200)
	}
	if x.rng.IntN(2) == 0 {
		x.sink = true
		o.Sink = timeline.SinkFunc(x.batch)
		o.FlushEvery = x.rng.IntN(4)
	}
	o.SettleFrames = 1 + x.rng.IntN(4)
	x.r = NewRecorder(o)
	if err := x.run(); err != nil {
		return err
	}
	reached.add(x.r.Stats(), x.redelivered)
	return nil
}

func (x *ledgerRun) batch(b *timeline.Trace) error {
	if x.failing {
		return errors.New("sink down")
	}
	x.collect(b)
	return nil
}

// collect notes the distinct items of a dump or a successful batch.
func (x *ledgerRun) collect(tr *timeline.Trace) {
	for _, s := range tr.Spans {
		if k, ok := bookOfKind(tr.Track(s.Track).Kind); ok {
			x.seen[k][[4]int64{int64(s.Track), int64(s.Name), s.Start, s.End}] = true
		}
	}
	for _, f := range tr.Flows {
		a, b := tr.Spans[f.From], tr.Spans[f.To]
		x.seen[books.FlowBook][[4]int64{a.Start, a.End, b.Start, b.End}] = true
	}
}

func bookOfKind(k timeline.TrackKind) (books.Kind, bool) {
	switch k {
	case timeline.TrackCPU:
		return books.SpanBook, true
	case timeline.TrackGPUQueue, timeline.TrackGPULane:
		return books.ZoneBook, true
	}
	return 0, false
}

func (x *ledgerRun) run() error {
	r, rng := x.r, x.rng
	for i := range 4 {
		x.names = append(x.names, r.Name(fmt.Sprint("n", i)))
	}
	tracks := []*CPUTrack{r.CPUTrack("a"), r.CPUTrack("b")}
	q := []timeline.TrackID{r.QueueTrack(timeline.Queue{Device: "d", Family: 0}), r.QueueTrack(timeline.Queue{Device: "d", Family: 1})}
	srcs := []*GPUSource{r.GPUSource(q[0])}
	var reports []SourceReport // each source's running totals
	reports = append(reports, SourceReport{})
	for step := range 100 + rng.IntN(400) {
		_ = step
		switch op := rng.IntN(20); {
		case op < 3:
			r.BeginFrame()
		case op < 6:
			r.EndFrame()
		case op < 10:
			x.cpu(tracks, rng.IntN(len(tracks)))
		case op < 13:
			i := rng.IntN(len(srcs))
			if srcs[i] == nil {
				srcs[i] = r.GPUSource(q[i%2])
				reports[i] = SourceReport{}
			}
			x.source(srcs[i], &reports[i])
		case op < 14:
			x.bare(q[rng.IntN(2)])
		case op < 15:
			if i := rng.IntN(len(srcs)); srcs[i] != nil && reports[i].Open == 0 {
				srcs[i].Close()
				srcs[i] = nil
			} else if len(srcs) < 3 {
				srcs = append(srcs, r.GPUSource(q[rng.IntN(2)]))
				reports = append(reports, SourceReport{})
			}
		case op < 16:
			before := r.Stats()
			x.collect(r.Dump())
			after := r.Stats()
			for k := range books.NumKinds {
				x.redelivered += books.Of(&before.Ledger, k).Sink - books.Of(&after.Ledger, k).Sink
			}
			x.redelivered += before.FlowsSplit - after.FlowsSplit
		case op < 17:
			x.failing = x.sink && rng.IntN(3) == 0
			r.Flush()
		default:
			x.cpu(tracks, rng.IntN(len(tracks)))
		}
	}
	// The end: every zone in flight comes or is counted, every span ends.
	for i, s := range srcs {
		if s != nil {
			x.finishSource(s, &reports[i])
			s.Close()
		}
	}
	for i := range tracks {
		for j := len(x.openSpan[i]) - 1; j >= 0; j-- {
			if o := x.openSpan[i][j]; o.depth != tooDeep {
				x.spans++
				o.End()
			}
		}
		x.openSpan[i] = nil
	}
	x.failing = false
	r.Close()
	x.collect(r.Dump())
	st := r.Stats()
	l, d := st.Ledger, st.Drops
	if u := books.Unbalanced(&l, d); len(u) > 0 {
		return fmt.Errorf("books %v do not balance: %+v against %+v", u, l, d)
	}
	for k := range books.NumKinds {
		b := books.Of(&l, k)
		if b.Open != 0 {
			return fmt.Errorf("%v: %d open after Close and Dump: %+v", k, b.Open, l)
		}
		if n := uint64(len(x.seen[k])); n != b.Delivered {
			return fmt.Errorf("%v: %d delivered, %d seen in dumps and batches: %+v", k, b.Delivered, n, l)
		}
	}
	if l.Zones.Issued != x.zones || l.Spans.Issued != x.spans {
		return fmt.Errorf("issued %d zones and %d spans, the books say %d and %d", x.zones, x.spans, l.Zones.Issued, l.Spans.Issued)
	}
	return x.scan()
}

// cpu begins or ends spans on track i, submits keys from them, and
// misuses them now and then: ended twice, out of order, nested too deep.
func (x *ledgerRun) cpu(tracks []*CPUTrack, i int) {
	rng, t := x.rng, tracks[i]
	open := &x.openSpan[i]
	begin := func() {
		name := x.names[rng.IntN(len(x.names))]
		if rng.IntN(50) == 0 {
			name = timeline.NameID(999) // never given out: dropped by the recorder
		}
		if t.depth >= MaxCPUDepth {
			x.spans++ // dropped as it begins
		}
		s := t.Span(name)
		*open = append(*open, s)
		if rng.IntN(3) == 0 && len(x.keys) > 0 {
			s.Submitted(x.keys[rng.IntN(len(x.keys))])
		}
	}
	switch op := rng.IntN(40); {
	case op == 0:
		for range MaxCPUDepth + 4 {
			begin()
		}
	case op < 16 || len(*open) == 0:
		begin()
	case op < 34:
		s := (*open)[len(*open)-1]
		*open = (*open)[:len(*open)-1]
		if s.depth != tooDeep {
			x.spans++
		}
		s.End()
		if rng.IntN(20) == 0 {
			s.End() // misuse: nothing happens
		}
	default:
		// The outermost ends first: the inner ones end with it (misuse).
		for _, s := range *open {
			if s.depth != tooDeep {
				x.spans++
			}
		}
		s := (*open)[0]
		*open = nil
		s.End()
	}
}

// source hands a source's zones: some delivered as spans, some lost by
// cause, some left in flight for a later call, each counted in its report.
func (x *ledgerRun) source(s *GPUSource, rep *SourceReport) {
	rng := x.rng
	n := rng.IntN(12)
	rep.Issued += uint64(n)
	x.zones += uint64(n)
	var spans []GPUSpan
	frame := x.r.Frame()
	for range n {
		switch rng.IntN(12) {
		case 0:
			rep.Lost.NoFrame++
		case 1:
			rep.Lost.Unended++
		case 2:
			rep.Open++ // in flight: comes with a later call
		default:
			spans = append(spans, x.zone(frame, rep))
		}
	}
	for rep.Open > 0 && rng.IntN(2) == 0 {
		rep.Open--
		spans = append(spans, x.zone(frame, rep))
	}
	s.Deliver(spans, *rep)
	if rng.IntN(2) == 0 {
		s.Settle(frame)
	}
}

// finishSource delivers or counts what a source has in flight.
func (x *ledgerRun) finishSource(s *GPUSource, rep *SourceReport) {
	var spans []GPUSpan
	for ; rep.Open > 0; rep.Open-- {
		if x.rng.IntN(2) == 0 {
			rep.Lost.Pending++
			continue
		}
		spans = append(spans, x.zone(x.r.Frame(), rep))
	}
	s.Deliver(spans, *rep)
}

// zone makes one GPU span: with a key (new, or one already handed out),
// without one in a frame that had submissions (an arrow lost upstream),
// now and then broken (End before Start).
func (x *ledgerRun) zone(frame uint64, rep *SourceReport) GPUSpan {
	rng := x.rng
	x.now += int64(1 + rng.IntN(5000))
	g := GPUSpan{Name: x.names[rng.IntN(len(x.names))], Start: x.now, End: x.now + int64(rng.IntN(3000)), Frame: frame}
	if rng.IntN(40) == 0 {
		g.End = g.Start - 1
	}
	switch rng.IntN(4) {
	case 0, 1:
		if len(x.keys) == 0 || rng.IntN(3) == 0 {
			x.nextKey++
			x.keys = append(x.keys, x.nextKey)
		}
		g.Key = x.keys[rng.IntN(len(x.keys))]
	case 2:
		if rep != nil {
			rep.Unlinked++
		}
	}
	return g
}

// bare hands spans to AddGPUSpans, as a recorder with no profiler may.
func (x *ledgerRun) bare(q timeline.TrackID) {
	n := 1 + x.rng.IntN(4)
	spans := make([]GPUSpan, 0, n)
	for range n {
		spans = append(spans, x.zone(x.r.Frame(), nil))
	}
	x.zones += uint64(n)
	x.r.AddGPUSpans(q, spans)
}

// scan checks the counts of held spans and flows against what the store
// holds: by construction they agree.
func (x *ledgerRun) scan() error {
	r := x.r
	r.lock()
	defer r.mu.Unlock()
	var held [books.NumKinds]uint64
	for i := range r.spans.len() {
		it := r.spans.at(i)
		if k, ok := r.bookOfTrack(it.Track); ok && it.flags&sentFlag == 0 {
			held[k]++
		}
	}
	for k := range books.FlowBook {
		if c := r.items[k]; c.held() != held[k] {
			return fmt.Errorf("%v: the counts hold %d, the store %d", k, c.held(), held[k])
		}
	}
	return nil
}
