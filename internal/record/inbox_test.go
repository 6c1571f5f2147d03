package record

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
)

// Sources deliver from goroutines of their own while another reads the
// recorder: every read balances, which it would not if it showed a
// report without its spans (the report's Issued counts them, and nothing
// would hold them), and at the end every span is on the timeline once.
func TestInboxConcurrentDeliveries(t *testing.T) {
	r := NewRecorder(Options{})
	zone := r.Name("zone")
	const sources, batches = 4, 300
	per := []int{3, 500, 40, 1000}
	const perCycle = 3 + 500 + 40 + 1000
	zones := sources * batches / len(per) * perCycle
	var wg sync.WaitGroup
	for i := range sources {
		src := r.GPUSource(r.QueueTrack(timeline.Queue{Device: "d", Family: uint32(i)}))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rep SourceReport
			at := int64(1000)
			for b := range batches {
				// Small batches, placed by Deliver when the recorder is
				// idle, among large ones for the merge.
				spans := make([]GPUSpan, per[b%len(per)])
				for j := range spans {
					at += 10
					spans[j] = GPUSpan{Name: zone, Start: at, End: at + 5}
				}
				rep.Issued += uint64(len(spans)) + 1
				rep.Lost.Unended++
				if err := src.Deliver(spans, rep); err != nil {
					t.Error(err)
				}
				src.Settle(uint64(b))
			}
		}()
	}
	done := make(chan struct{})
	var reads int
	go func() {
		defer close(done)
		for {
			st := r.Stats()
			reads++
			if !st.Ledger.Balanced(st.Drops) {
				t.Errorf("read %d: ledger %+v against drops %+v", reads, st.Ledger, st.Drops)
				return
			}
			if st.Ledger.Zones.Issued == uint64(zones+sources*batches) {
				return
			}
		}
	}()
	wg.Wait()
	<-done
	tr := r.Dump()
	if len(tr.Spans) != zones || !tr.Ledger.Balanced(tr.Drops) {
		t.Fatalf("%d spans, want %d; ledger %+v, drops %+v", len(tr.Spans), zones, tr.Ledger, tr.Drops)
	}
	r.inMu.Lock()
	inboxed := r.inboxed
	r.inMu.Unlock()
	if inboxed == 0 {
		t.Error("no batch went through the inbox: the merge was not tried")
	}
	if ns, n := r.MergeCost(); n != uint64(zones) || ns == 0 {
		t.Errorf("MergeCost says %d spans in %d ns, want %d", n, ns, zones)
	}
}

// Deliver needs no lock of the recorder's to hand a batch in: with the
// recorder's lock held (the merge, or a Dump, busy) a source still hands
// its first batch in. Its next, while the first waits, and a batch past
// maxInboxSpans, are placed by the caller itself, so they wait for the
// lock; every span is still placed once, in each source's order.
func TestInboxBounded(t *testing.T) {
	r, q, zone := gpuSetup(Options{})
	src, big := r.GPUSource(q), r.GPUSource(r.QueueTrack(timeline.Queue{Device: "d", Family: 7}))
	at := int64(0)
	batch := func(n int) []GPUSpan {
		b := make([]GPUSpan, n)
		for i := range b {
			at += 10
			b[i] = GPUSpan{Name: zone, Start: at, End: at + 5}
		}
		return b
	}
	r.mu.Lock() // what the merge would take
	if err := src.Deliver(batch(1024), SourceReport{Issued: 1024}); err != nil {
		t.Fatal(err)
	}
	second, large := batch(1024), batch(maxInboxSpans+1)
	placed := make(chan error, 2)
	go func() { placed <- src.Deliver(second, SourceReport{Issued: 2048}) }()
	go func() { placed <- big.Deliver(large, SourceReport{Issued: maxInboxSpans + 1}) }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-placed:
		t.Fatalf("a Deliver that must place its batch itself returned (%v) while the recorder was locked", err)
	default:
	}
	r.mu.Unlock()
	for range 2 {
		if err := <-placed; err != nil {
			t.Fatal(err)
		}
	}
	tr := r.Dump()
	want := uint64(2048 + maxInboxSpans + 1)
	if uint64(len(tr.Spans)) != want || tr.Ledger.Zones.Issued != want || !tr.Ledger.Balanced(tr.Drops) {
		t.Fatalf("%d spans of %d, ledger %+v", len(tr.Spans), want, tr.Ledger)
	}
	for _, track := range []timeline.TrackID{q, tr.Spans[len(tr.Spans)-1].Track} {
		spans := spansOn(tr, track)
		for i := 1; i < len(spans); i++ {
			if spans[i].Start <= spans[i-1].Start {
				t.Fatalf("span %d of track %d starts at %d, after %d: out of order", i, track, spans[i].Start, spans[i-1].Start)
			}
		}
	}
}

// A span the recorder drops when it places it (End before Start) is
// counted at once for any reader, and its error comes with the source's
// next Deliver, once.
func TestInboxReportsErrorsLater(t *testing.T) {
	r, q, zone := gpuSetup(Options{})
	src := r.GPUSource(q)
	bad := []GPUSpan{{Name: zone, Start: 10, End: 5}}
	var errs []error
	if err := src.Deliver(bad, SourceReport{Issued: 1}); err != nil {
		errs = append(errs, err) // the merge ran already
	}
	if d := r.Stats().Drops; d.GPUSpans != 1 {
		t.Fatalf("drops %+v, want the bad span in GPUSpans", d)
	}
	for range 2 {
		if err := src.Deliver(nil, SourceReport{Issued: 1}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "End < Start") {
		t.Fatalf("errors %v, want the one for the bad span, once", errs)
	}
}

// Hand takes its spans over: while they wait in the inbox it never gives
// the same buffer back, and once they are placed it gives them back, so
// that a source hands in frame after frame with two buffers taking turns
// and no new one; every span is placed once, as handed in.
func TestHandTakesSpansOver(t *testing.T) {
	r, q, zone := gpuSetup(Options{})
	src := r.GPUSource(q)
	at := int64(0)
	fill := func(b []GPUSpan) []GPUSpan {
		b = b[:0]
		for range 300 {
			at += 10
			b = append(b, GPUSpan{Name: zone, Start: at, End: at + 5})
		}
		return b
	}
	var issued uint64
	r.mu.Lock() // the merge is busy: the batch waits in the inbox
	buf := fill(nil)
	issued += uint64(len(buf))
	next, err := src.Hand(buf, SourceReport{Issued: issued})
	if err != nil {
		t.Fatal(err)
	}
	if cap(next) > 0 && &next[:1][0] == &buf[0] {
		t.Fatal("Hand gave back the buffer it took over")
	}
	r.mu.Unlock()
	buf = next
	seen := map[*GPUSpan]bool{}
	for i := range 20 {
		if i%2 == 0 {
			r.Stats() // places what waits, as the merge would
		}
		buf = fill(buf)
		seen[&buf[0]] = true
		issued += uint64(len(buf))
		if buf, err = src.Hand(buf, SourceReport{Issued: issued}); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) > 2 {
		t.Errorf("%d buffers in 20 steady calls, want at most 2 taking turns", len(seen))
	}
	tr := r.Dump()
	if uint64(len(tr.Spans)) != issued || !tr.Ledger.Balanced(tr.Drops) {
		t.Fatalf("%d spans of %d, ledger %+v", len(tr.Spans), issued, tr.Ledger)
	}
	for i := range tr.Spans {
		if want := int64(10 * (i + 1)); tr.Spans[i].Start != want {
			t.Fatalf("span %d starts at %d, want %d", i, tr.Spans[i].Start, want)
		}
	}
}

// A source's AfterPlace function runs after each of its calls is placed,
// outside the lock: on the caller's goroutine for a batch placed there,
// on the merge's for one left in the inbox.
func TestAfterPlace(t *testing.T) {
	r, q, zone := gpuSetup(Options{})
	src := r.GPUSource(q)
	var mu sync.Mutex
	var calls []bool
	var locked int
	src.AfterPlace(func(merged bool) {
		if !r.mu.TryLock() {
			locked++ // only this test's goroutine and the merge's use r here
		} else {
			r.mu.Unlock()
		}
		mu.Lock()
		calls = append(calls, merged)
		mu.Unlock()
	})
	count := func() (n int, last bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(calls) > 0 {
			last = calls[len(calls)-1]
		}
		return len(calls), last
	}
	batch := func(n int) []GPUSpan {
		b := make([]GPUSpan, n)
		for i := range b {
			b[i] = GPUSpan{Name: zone, Start: int64(10 * (i + 1)), End: int64(10*(i+1) + 5)}
		}
		return b
	}
	// Small, with the recorder idle: placed in place, and the call made
	// before Hand returns.
	if _, err := src.Hand(batch(3), SourceReport{Issued: 3}); err != nil {
		t.Fatal(err)
	}
	if n, merged := count(); n != 1 || merged {
		t.Fatalf("after a batch placed in place: %d calls, last merged %v; want 1, false", n, merged)
	}
	// With the lock held the batch waits in the inbox; the merge places
	// it once the lock is free, then calls.
	r.mu.Lock()
	if _, err := src.Hand(batch(5), SourceReport{Issued: 8}); err != nil {
		t.Fatal(err)
	}
	if n, _ := count(); n != 1 {
		t.Fatalf("%d calls while the batch waits, want 1", n)
	}
	r.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, merged := count()
		if n == 2 && merged {
			break
		}
		if n > 2 || time.Now().After(deadline) {
			t.Fatalf("after a batch left in the inbox: %d calls, last merged %v; want 2, true", n, merged)
		}
		time.Sleep(time.Millisecond)
	}
	if locked != 0 {
		t.Fatalf("%d calls made under the recorder's lock", locked)
	}
	if tr := r.Dump(); len(tr.Spans) != 8 || !tr.Ledger.Balanced(tr.Drops) {
		t.Fatalf("%d spans, want 8; ledger %+v", len(tr.Spans), tr.Ledger)
	}
}

// While a source hands in a batch every frame, the merge polls the inbox
// and the source's calls send it no wake (a system call on the
// application's goroutine); once the calls stop it sleeps, and the next
// call wakes it and is placed. Every batch reaches the timeline.
func TestMergePolls(t *testing.T) {
	r, q, zone := gpuSetup(Options{MaxSpans: 1 << 20})
	src := r.GPUSource(q)
	defer src.Close()
	const per, frames = 2000, 60
	at := int64(1000)
	var rep SourceReport
	hand := func() {
		spans := make([]GPUSpan, per)
		for j := range spans {
			at += 10
			spans[j] = GPUSpan{Name: zone, Start: at, End: at + 5}
		}
		rep.Issued += per
		if _, err := src.Hand(spans, rep); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() (inboxed, woken uint64) {
		r.inMu.Lock()
		defer r.inMu.Unlock()
		return r.inboxed, r.woken
	}
	for range frames {
		hand()
		time.Sleep(2 * time.Millisecond)
	}
	inboxed, woken := counts()
	if inboxed < frames/2 {
		t.Fatalf("%d of %d batches went through the inbox: the merge was not tried", inboxed, frames)
	}
	// A busy machine may leave a gap long enough for the merge to sleep
	// now and then; most calls must find it polling.
	if woken > inboxed/4 {
		t.Errorf("%d of %d batches left in the inbox woke the merge, want at most a quarter", woken, inboxed)
	}
	// Idle: the merge stops polling and sleeps until a call wakes it.
	waitAsleep(t, r, 10*time.Second)
	hand()
	if _, w := counts(); w != woken+1 {
		t.Errorf("the call after the merge slept sent %d wakes, want 1", w-woken)
	}
	tr := r.Dump()
	if len(tr.Spans) != per*(frames+1) || !tr.Ledger.Balanced(tr.Drops) {
		t.Fatalf("%d spans, want %d; ledger %+v, drops %+v", len(tr.Spans), per*(frames+1), tr.Ledger, tr.Drops)
	}
}

// waitAsleep waits until r's merge goroutine sleeps until a call wakes
// it, and fails the test if it does not within d.
func waitAsleep(t *testing.T, r *Recorder, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		r.inMu.Lock()
		asleep := r.asleep
		r.inMu.Unlock()
		if asleep {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the merge's goroutine still looks at the inbox %v after the last call", d)
		}
	}
}
