package tracesplit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// stream is a recorder's stream, as far as the books go: items issued to
// each book, some delivered in each batch, some lost, some left open for
// later batches; each batch's books are running totals that balance.
type stream struct {
	rng    *rand.Rand
	d      timeline.Drops
	l      timeline.Ledger
	tracks []timeline.Track
}

func newStream(seed uint64) *stream {
	return &stream{rng: rand.New(rand.NewPCG(seed, 1)), tracks: []timeline.Track{
		{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
		{ID: 2, Kind: timeline.TrackGPUQueue, Name: "queue", Queue: timeline.Queue{Device: "gpu", Flags: "graphics"}},
	}}
}

// next returns the next batch: n spans, delivered, on the books.
func (s *stream) next(n int) *timeline.Trace {
	b := &timeline.Trace{Process: timeline.Process{PID: 1, Name: "p"}, Names: []string{"", "zone"}, Tracks: s.tracks}
	for i := range n {
		tr := timeline.TrackID(1 + i%2)
		b.Spans = append(b.Spans, timeline.Span{Track: tr, Name: 1, Start: int64(1000 + 10*i), End: int64(1005 + 10*i)})
	}
	for k := range books.NumKinds {
		bk := books.Of(&s.l, k)
		issued := uint64(s.rng.IntN(50))
		lost := uint64(s.rng.IntN(5))
		open := bk.Open + issued
		lost = min(lost, open)
		open -= lost
		deliver := uint64(s.rng.IntN(int(open + 1)))
		bk.Issued += issued
		bk.Delivered += deliver
		switch k {
		case books.ZoneBook:
			s.d.QueryLimit += lost
		case books.SpanBook:
			s.d.Spans += lost
		case books.FlowBook:
			bk.Evicted += lost
			s.d.Evicted += lost
		}
		bk.Open = open - deliver
	}
	s.d.Misuse += uint64(s.rng.IntN(2))
	b.Drops, b.Ledger = s.d, s.l
	return b
}

// The books of every file balance, and add up over the files to the
// run's, at every point of a stream cut into many files: a file's books
// are those of its last batch, or of its closing batch once closed.
func TestBooksCarryOver(t *testing.T) {
	for seed := range uint64(50) {
		st := newStream(seed)
		sp := New(150)
		var files []timeline.Trace // each file's books as they stand
		for range 200 {
			b := st.next(st.rng.IntN(30))
			d, closing := sp.Place(b)
			switch d {
			case Refuse:
				t.Fatalf("seed %d: refused at %d files", seed, sp.Files())
			case Next:
				files[len(files)-1] = *closing
				files = append(files, timeline.Trace{})
			case Same:
				if len(files) == 0 {
					files = append(files, timeline.Trace{})
				}
			}
			files[len(files)-1] = timeline.Trace{Drops: b.Drops, Ledger: b.Ledger}
			var sumD timeline.Drops
			var sumL timeline.Ledger
			for i, f := range files {
				if k := books.Unbalanced(&f.Ledger, f.Drops); len(k) > 0 {
					t.Fatalf("seed %d: file %d of %d: books %v do not balance: %+v against %+v", seed, i+1, len(files), k, f.Ledger, f.Drops)
				}
				if i < len(files)-1 && (f.Ledger.Zones.Open|f.Ledger.Spans.Open|f.Ledger.Flows.Open) != 0 {
					t.Fatalf("seed %d: closed file %d holds open items: %+v", seed, i+1, f.Ledger)
				}
				sumD = books.Add(sumD, f.Drops)
				for k := range books.NumKinds {
					s, o := books.Of(&sumL, k), books.Of(&f.Ledger, k)
					s.Issued += o.Issued
					s.Delivered += o.Delivered
					s.Open += o.Open
					s.Evicted += o.Evicted
					s.Sink += o.Sink
				}
			}
			if sumD != st.d || sumL != st.l {
				t.Fatalf("seed %d: the files' books add up to %+v, %+v; the run's are %+v, %+v", seed, sumL, sumD, st.l, st.d)
			}
		}
		if len(files) < 5 {
			t.Fatalf("seed %d: %d files, want the stream cut into several", seed, len(files))
		}
	}
}

// A file holds at most its budget of slices, unless a batch over the
// budget goes alone in one; past MaxFiles every batch is refused, and
// Final states the run's end in the last file's books.
func TestBudgetAndBound(t *testing.T) {
	st := newStream(7)
	sp := New(100)
	inFile, files, refused := 0, 1, 0
	for i := range 1000 {
		n := 10 + i%50
		if i == 3 {
			n = 250 // alone over the budget
		}
		b := st.next(n)
		d, _ := sp.Place(b)
		switch d {
		case Same:
			inFile += n
		case Next:
			files++
			inFile = n
		case Refuse:
			refused++
			continue
		}
		if refused > 0 {
			t.Fatalf("batch %d placed after one was refused", i)
		}
		if inFile > 100 && inFile != n {
			t.Fatalf("batch %d: a file of %d slices, over its budget of 100", i, inFile)
		}
	}
	if files != MaxFiles || refused == 0 || sp.Refused() != uint64(refused) {
		t.Fatalf("%d files, %d refused (%d said); want %d files and the rest refused", files, refused, sp.Refused(), MaxFiles)
	}
	// The recorder counts the refused items lost to its sink.
	d, l := st.d, st.l
	d.Sink += 1234
	l.Zones.Issued += 1234
	l.Zones.Sink += 1234
	f := sp.Final(d, l)
	if f == nil || len(f.Spans) != 0 {
		t.Fatalf("Final = %+v, want a batch of no items", f)
	}
	if k := books.Unbalanced(&f.Ledger, f.Drops); len(k) > 0 || f.Drops.Sink != 1234 || f.Ledger.Zones.Sink != 1234 {
		t.Fatalf("the last file's final books: %+v against %+v; want them balanced, 1234 lost to the sink", f.Ledger, f.Drops)
	}
	if New(0).Final(d, l) != nil {
		t.Fatal("Final of a stream with nothing refused is a batch")
	}
}

// EstimateBytes bounds what the Perfetto writer writes for a file's
// batches, render stages on, on batches of every kind of item, long
// names growing as the file goes.
func TestEstimateBoundsWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tracks := []timeline.Track{
		{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
		{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics queue", Queue: timeline.Queue{Device: "NVIDIA H100 80GB HBM3", Family: 0, Flags: "graphics+compute+transfer"}},
		{ID: 3, Kind: timeline.TrackGPULane, Name: "lane 1", Parent: 2, Lane: 1, Queue: timeline.Queue{Device: "NVIDIA H100 80GB HBM3", Flags: "graphics"}},
		{ID: 4, Kind: timeline.TrackCounter, Name: "GPU time", Unit: timeline.UnitNs},
	}
	for _, renderStages := range []bool{false, true} {
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf, perfetto.Options{RenderStages: renderStages})
		sp := New(0)
		names := []string{""}
		var est int64
		ts := int64(1_000_000)
		for batch := range 40 {
			for range rng.IntN(40) {
				names = append(names, fmt.Sprintf("%0*d", 1+rng.IntN(300), len(names)))
			}
			b := &timeline.Trace{Process: timeline.Process{PID: 42, Name: "program"}, Names: names, Tracks: tracks}
			for i := range rng.IntN(3000) {
				tr := timeline.TrackID(1 + rng.IntN(3))
				start := ts + int64(rng.IntN(1_000_000))
				s := timeline.Span{Track: tr, Name: timeline.NameID(rng.IntN(len(names))), Start: start, End: start + int64(rng.IntN(1_000_000)),
					Frame: uint64(batch*60 + rng.IntN(60) + 1), ErrNs: uint32(rng.IntN(1 << 30))}
				if tr != 1 && i%3 == 0 {
					wk := &timeline.Work{Stats: timeline.AllPipelineStats}
					for j := range wk.Count {
						wk.Count[j] = rng.Uint64() >> 8
					}
					s.Work = wk
				}
				b.Spans = append(b.Spans, s)
			}
			for range len(b.Spans) / 2 {
				from, to := rng.IntN(len(b.Spans)), rng.IntN(len(b.Spans))
				if from != to {
					b.Flows = append(b.Flows, timeline.Flow{From: from, To: to})
				}
			}
			for i := range 60 {
				b.Frames = append(b.Frames, timeline.Frame{ID: uint64(batch*60 + i + 1), Start: ts + int64(i)*16_000, End: ts + int64(i+1)*16_000})
			}
			for range rng.IntN(500) {
				b.Samples = append(b.Samples, timeline.Sample{Track: 4, Time: ts + int64(rng.IntN(1_000_000)), Value: rng.Float64() * 1e9})
				b.Calibrations = append(b.Calibrations, timeline.Calibration{Track: 2, Time: ts + int64(rng.IntN(1_000_000)), ErrNs: rng.Float64() * 100, DriftPPM: rng.Float64(), Samples: rng.IntN(64)})
			}
			b.Drops = timeline.Drops{QueryLimit: rng.Uint64() >> 4, Spans: uint64(batch), Misuse: rng.Uint64() >> 4}
			b.Ledger.Zones = timeline.Book{Issued: b.Drops.QueryLimit + uint64(batch), Delivered: uint64(batch)}
			ts += 2_000_000
			if d, _ := sp.Place(b); d != Same {
				t.Fatalf("batch %d: placed %v, want the same file", batch, d)
			}
			est = sp.cur.bytes
			before := buf.Len()
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if int64(buf.Len()) > est {
				t.Fatalf("render stages %v: after batch %d (%d bytes), the file is %d bytes, over the estimate of %d", renderStages, batch, buf.Len()-before, buf.Len(), est)
			}
		}
		t.Logf("render stages %v: %d bytes written, %d estimated", renderStages, buf.Len(), est)
	}
}
