package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		trace *timeline.Trace
	}{
		{"sample", sampleTrace(1, 20)},
		{"empty", &timeline.Trace{Names: []string{""}}},
		{"tracks only", &timeline.Trace{Names: []string{""}, Tracks: []timeline.Track{{ID: 9, Kind: timeline.TrackCPU, Name: "idle"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.trace); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("output is not valid JSON:\n%s", buf.Bytes())
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			want := canon(tc.trace)
			if want.Process.PID == 0 {
				want.Process.PID = 1
			}
			if want.Process.Name == "" {
				want.Process.Name = "framescope"
			}
			diffCanon(t, canon(got), want)
		})
	}
}

// batches splits tr into streaming batches the hard way: spans in order of
// their end (children before parents, as a recorder emits spans when they
// end), or with byStart in order of their start (parents before children),
// shuffled within each batch.
func batches(tr *timeline.Trace, n int, seed uint64, byStart ...bool) []*timeline.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	order := rng.Perm(len(tr.Spans))
	if len(byStart) > 0 && byStart[0] {
		slices.SortStableFunc(order, func(i, j int) int {
			a, b := &tr.Spans[i], &tr.Spans[j]
			if a.Start != b.Start {
				return cmp64(a.Start, b.Start)
			}
			return int(a.Depth) - int(b.Depth)
		})
	} else {
		slicesSortByEnd(order, tr.Spans)
	}
	var out []*timeline.Trace
	per := (len(order) + n - 1) / n
	for lo := 0; lo < len(order); lo += per {
		hi := min(lo+per, len(order))
		idx := order[lo:hi]
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		b := &timeline.Trace{Process: tr.Process, Names: tr.Names, Tracks: tr.Tracks}
		pos := map[int]int{}
		for _, i := range idx {
			pos[i] = len(b.Spans)
			b.Spans = append(b.Spans, tr.Spans[i])
		}
		for _, f := range tr.Flows {
			from, ok1 := pos[f.From]
			to, ok2 := pos[f.To]
			if ok1 && ok2 {
				b.Flows = append(b.Flows, timeline.Flow{From: from, To: to})
			}
		}
		out = append(out, b)
	}
	last := out[len(out)-1]
	last.Frames, last.Samples, last.Calibrations, last.Drops = tr.Frames, tr.Samples, tr.Calibrations, tr.Drops
	return out
}

// endsBefore orders spans as a recorder emits them: by end, children
// before the parent they end with, siblings by start.
func endsBefore(a, b *timeline.Span) bool {
	if a.End != b.End {
		return a.End < b.End
	}
	if a.Track == b.Track && a.Depth != b.Depth {
		return a.Depth > b.Depth
	}
	return a.Start < b.Start
}

func slicesSortByEnd(order []int, spans []timeline.Span) {
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && endsBefore(&spans[order[j]], &spans[order[j-1]]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// TestStreaming checks that a trace written in batches, children before
// their parents, reads back equal to the whole trace, and that viewers see
// the same slices (see TestTraceProcessor).
func TestStreaming(t *testing.T) {
	tr := sampleTrace(2, 12)
	for _, n := range []int{1, 3, 17, len(tr.Spans), -3, -len(tr.Spans)} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		bs := batches(tr, max(n, -n), uint64(max(n, -n)), n < 0)
		for _, b := range bs {
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if n < 0 && w.held != 0 {
				t.Fatalf("%d batches in start order: %d spans held", -n, w.held)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.held != 0 {
			t.Errorf("%d batches: %d spans still held after Close", n, w.held)
		}
		// Flows between spans of different batches are not in any batch.
		want := canon(tr)
		got, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		flows := 0
		for _, b := range bs {
			flows += len(b.Flows)
		}
		if len(got.Flows) != flows {
			t.Errorf("%d batches: %d flows, want %d", n, len(got.Flows), flows)
		}
		gc := canon(got)
		gc.Flows, want.Flows = nil, nil
		diffCanon(t, gc, want)
		if err := w.WriteBatch(tr); !errors.Is(err, ErrClosed) {
			t.Errorf("WriteBatch after Close: %v", err)
		}
	}
}

// TestCrashLeftovers checks what a process that dies mid-trace leaves: the
// batches written so far load without their closing bracket, in Read and
// in the trace processor, and a file cut inside an event gives the events
// before the cut with an error.
func TestCrashLeftovers(t *testing.T) {
	tr := sampleTrace(31, 12)
	bs := batches(tr, 4, 3)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, b := range bs[:3] {
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	// No Close: the process died. Every batch was flushed whole.
	left := buf.Bytes()
	got, err := Read(bytes.NewReader(left))
	if err != nil {
		t.Fatalf("reading the leftovers: %v", err)
	}
	if len(got.Spans) == 0 || len(got.Spans)+w.held > len(tr.Spans) {
		t.Fatalf("%d spans read, %d held, of %d", len(got.Spans), w.held, len(tr.Spans))
	}
	p := filepath.Join(t.TempDir(), "crashed.json")
	if err := os.WriteFile(p, left, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := len(tpSlices(t, tpcheck.Check(t, p))); n != len(got.Spans) {
		t.Errorf("trace processor: %d slices, Read: %d", n, len(got.Spans))
	}
	cut := left[:len(left)-10]
	part, err := Read(bytes.NewReader(cut))
	if !errors.Is(err, io.ErrUnexpectedEOF) || part == nil {
		t.Fatalf("cut inside an event: %v, %v", part, err)
	}
	if len(part.Spans) > len(got.Spans) || len(part.Spans) == 0 {
		t.Errorf("cut inside an event: %d spans, whole file %d", len(part.Spans), len(got.Spans))
	}
}

// TestHeldBound streams the children of one run-long span, which a
// recorder sends last: the Writer holds no more than maxHeld of them and
// the trace still reads back whole.
func TestHeldBound(t *testing.T) {
	const n = maxHeld + maxHeld/2
	names := []string{"", "run", "frame"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	b := &timeline.Trace{Names: names, Tracks: tracks}
	for i := range n {
		b.Spans = append(b.Spans, timeline.Span{Track: 1, Name: 2, Start: int64(i)*10 + 1, End: int64(i)*10 + 5, Depth: 1})
		if len(b.Spans) == 1000 {
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
			if w.held > maxHeld {
				t.Fatalf("%d spans held", w.held)
			}
			b.Spans = b.Spans[:0]
		}
	}
	b.Spans = append(b.Spans, timeline.Span{Track: 1, Name: 1, Start: 0, End: n * 10})
	w.WriteBatch(b)
	w.Close()
	if w.Invalid().Forced == 0 {
		t.Error("no span was forced out")
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != n+1 {
		t.Fatalf("%d spans, want %d", len(got.Spans), n+1)
	}
	for _, s := range got.Spans {
		if got.Name(s.Name) == "frame" && s.Depth != 1 || got.Name(s.Name) == "run" && s.Depth != 0 {
			t.Fatalf("span %+v at the wrong depth", s)
		}
	}
}

// TestOverlapAcrossBatches checks that a span overlapping one written in
// an earlier batch without nesting is refused, while one inside it or
// around it is written.
func TestOverlapAcrossBatches(t *testing.T) {
	names := []string{"", "a"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, s := range []timeline.Span{
		{Track: 1, Name: 1, Start: 100, End: 200},           // written
		{Track: 1, Name: 1, Start: 150, End: 250},           // partly over it: refused
		{Track: 1, Name: 1, Start: 120, End: 130, Depth: 1}, // inside, parent written: written
		{Track: 1, Name: 1, Start: 50, End: 300},            // around it: written (depth 0; the first is depth 0 too, so the test only counts)
		{Track: 1, Name: 1, Start: 290, End: 310},           // partly over the outer one: refused
	} {
		if err := w.WriteBatch(&timeline.Trace{Names: names, Tracks: tracks, Spans: []timeline.Span{s}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if got := w.Invalid().Spans; got != 2 {
		t.Errorf("refused %d spans, want 2", got)
	}
	if _, err := Read(&buf); err != nil {
		t.Fatal(err)
	}
}

// TestFlowTimes checks flows whatever the times of their spans: each is
// written, and the trace processor links it; one whose end span starts
// first is written reversed (the processor links flows forwards in time
// only), and Read turns it back.
func TestFlowTimes(t *testing.T) {
	tests := []struct {
		name     string
		from, to [2]int64
		reversed bool
	}{
		{"forward", [2]int64{0, 10}, [2]int64{5, 20}, false},
		{"end starts first", [2]int64{10, 20}, [2]int64{5, 30}, true},
		{"touching", [2]int64{10, 20}, [2]int64{0, 10}, true},
		{"backward", [2]int64{10, 20}, [2]int64{0, 9}, true},
		{"same start", [2]int64{10, 20}, [2]int64{10, 30}, false},
		{"same start, zero-length end", [2]int64{10, 20}, [2]int64{10, 10}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &timeline.Trace{
				Names:  []string{"", "submit", "zone", "child"},
				Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}, {ID: 2, Kind: timeline.TrackGPUQueue, Name: "gpu"}},
				Spans: []timeline.Span{
					{Track: 1, Name: 1, Start: tc.from[0], End: tc.from[1]},
					{Track: 2, Name: 2, Start: tc.to[0], End: tc.to[1]},
				},
				Flows: []timeline.Flow{{From: 0, To: 1}},
			}
			if tc.to[1] > tc.to[0] {
				// A child ending with the end span must not catch the flow.
				tr.Spans = append(tr.Spans, timeline.Span{Track: 2, Name: 3, Start: tc.to[1] - 1, End: tc.to[1], Depth: 1})
			}
			var buf bytes.Buffer
			w := NewWriter(&buf)
			w.WriteBatch(tr)
			w.Close()
			if w.Invalid().Flows != 0 {
				t.Errorf("refused %d flows", w.Invalid().Flows)
			}
			p := filepath.Join(t.TempDir(), "flow.json")
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			rows := tpcheck.Check(t, p).MustQuery(`select so.name as a, si.name as b from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id`)
			want := "submit -> zone"
			if tc.reversed {
				want = "zone -> submit"
			}
			if len(rows) != 1 || fmt.Sprintf("%v -> %v", rows[0]["a"], rows[0]["b"]) != want {
				t.Errorf("the trace processor links %v, want %s", rows, want)
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Flows) != 1 {
				t.Fatalf("%d flows, want 1", len(got.Flows))
			}
			for _, f := range got.Flows {
				if got.Name(got.Spans[f.From].Name) != "submit" || got.Name(got.Spans[f.To].Name) != "zone" {
					t.Errorf("flow %s -> %s", got.Name(got.Spans[f.From].Name), got.Name(got.Spans[f.To].Name))
				}
			}
		})
	}
}

// TestInvalidSpans checks that input breaking the model is dropped,
// counted and reported rather than written into a corrupt trace.
func TestInvalidSpans(t *testing.T) {
	tr := &timeline.Trace{
		Names:  []string{"", "a", "b"},
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}, {ID: 2, Kind: timeline.TrackCounter, Name: "c"}},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 0, End: 10},
			{Track: 1, Name: 2, Start: 5, End: 15}, // overlaps a
			{Track: 7, Name: 1, Start: 0, End: 1},  // unknown track
			{Track: 1, Name: 1, Start: 9, End: 3},  // ends before it starts
			{Track: 2, Name: 1, Start: 0, End: 1},  // on a counter track
		},
		Flows:   []timeline.Flow{{From: 0, To: 1}, {From: 0, To: 99}},
		Samples: []timeline.Sample{{Track: 2, Time: 1, Value: math.NaN()}, {Track: 2, Time: 2, Value: 3}},
		Drops:   timeline.Drops{Spans: 1},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteBatch(tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := Invalid{Spans: 4, Flows: 2, Samples: 1}
	if got := w.Invalid(); got != want {
		t.Errorf("Invalid() = %+v, want %+v", got, want)
	}
	data := slices.Clone(buf.Bytes())
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != 1 || got.Drops.Spans != 5 || len(got.Samples) != 1 {
		t.Errorf("read back %d spans, %d samples, drops %+v", len(got.Spans), len(got.Samples), got.Drops)
	}
	// Viewers show all of it in the "framescope dropped" counter: the
	// dropped span, the 4 refused spans, 2 refused flows and 1 sample.
	p := filepath.Join(t.TempDir(), "invalid.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := tpcheck.Check(t, p).MustQuery(`select c.value from counter c join counter_track t on c.track_id = t.id
		where t.name = 'framescope dropped value' order by c.ts desc limit 1`)
	if len(rows) != 1 || rows[0]["value"] != 8.0 {
		t.Errorf("framescope dropped counter: %v, want 8", rows)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterError(t *testing.T) {
	err := Write(&failWriter{}, sampleTrace(3, 2))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Write to a failing writer: %v", err)
	}
}

// TestFramesThread: a trace without a frames track gets its frames drawn
// on a "Frames" thread, as the Perfetto writer draws them, on a tid no
// track has (a track that comes later with that ID gets another); frames
// overlapping one drawn, or still open, are not drawn. Read takes the
// frames back from the metadata and no spans from that thread.
func TestFramesThread(t *testing.T) {
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}}
	b1 := &timeline.Trace{Names: []string{"", "work"}, Tracks: tracks,
		Spans: []timeline.Span{{Track: 1, Name: 1, Start: 10, End: 90}},
		Frames: []timeline.Frame{{ID: 2, Start: 100, End: 200}, {ID: 1, Start: 0, End: 100}, {ID: 3, Start: 200, End: 200},
			{ID: 4, Start: 150, End: 250}, {ID: 5, Start: 300}}}
	high := timeline.Track{ID: math.MaxUint32, Kind: timeline.TrackCPU, Name: "high"}
	b2 := &timeline.Trace{Names: b1.Names, Tracks: append(slices.Clone(tracks), high),
		Spans: []timeline.Span{{Track: high.ID, Name: 1, Start: 400, End: 500}}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, b := range []*timeline.Trace{b1, b2} {
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Invalid() != (Invalid{}) {
		t.Errorf("refused %+v", w.Invalid())
	}
	p := filepath.Join(t.TempDir(), "frames.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := tpSlices(t, tpcheck.Check(t, p))
	want := []string{"Frames|frame|0|100|0", "Frames|frame|100|100|0", "Frames|frame|200|0|0", "cpu|work|10|80|0", "high|work|400|100|0"}
	if !slices.Equal(got, want) {
		t.Errorf("the trace processor holds\n%q\nwant\n%q", got, want)
	}
	tr, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Frames) != 5 || len(tr.Spans) != 2 || tr.Track(tr.Spans[1].Track).Name != "high" {
		t.Errorf("read back %d frames and spans %+v, want 5 frames and the 2 spans", len(tr.Frames), tr.Spans)
	}
}
