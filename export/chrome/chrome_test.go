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

	"github.com/framescope/framescope/internal/tpcheck"
	"github.com/framescope/framescope/timeline"
)

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t\x00\x1f", `"\n\r\t\u0000\u001f"`},
		{"bad \xff\xfe utf8", `"bad \ufffd\ufffd utf8"`},
		{"cut \xe2\x82", `"cut \ufffd\ufffd"`},
		{"ünïcode ✓ 🎮", `"ünïcode ✓ 🎮"`},
		{"line\u2028sep\u2029", `"line\u2028sep\u2029"`},
		{"</script>", `"</script>"`},
	}
	for _, tc := range tests {
		got := string(appendString(nil, tc.in))
		if got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("appendString(%q) is not JSON: %v", tc.in, err)
		}
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0.000"}, {1, "0.001"}, {999, "0.999"}, {1000, "1.000"}, {1234567, "1234.567"},
		{-5, "-0.005"}, {-1234567, "-1234.567"},
		{math.MaxInt64, "9223372036854775.807"}, {math.MinInt64, "-9223372036854775.808"},
	}
	for _, tc := range tests {
		got := string(appendMicros(nil, tc.ns))
		if got != tc.want {
			t.Errorf("appendMicros(%d) = %s, want %s", tc.ns, got, tc.want)
		}
		if tc.ns == math.MinInt64 || tc.ns == math.MaxInt64 {
			continue
		}
		back, err := parseMicros(got)
		if err != nil || back != tc.ns {
			t.Errorf("parseMicros(%s) = %d, %v; want %d", got, back, err, tc.ns)
		}
	}
}

func TestParseMicros(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"12", 12000, true}, {"12.5", 12500, true}, {"0.0004", 0, true}, {"0.0005", 1, true},
		{"1.23456789", 1235, true}, {"1e3", 1000000, true}, {"-2.5", -2500, true},
		{"", 0, false}, {"abc", 0, false}, {"1.2.3", 0, false}, {"-", 0, false},
		{"99999999999999999999", 0, false}, {"1e400", 0, false}, {".5", 0, false},
	}
	for _, tc := range tests {
		got, err := parseMicros(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseMicros(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

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
// recorder sends last: the Writer holds no more than MaxHeld of them and
// the trace still reads back whole.
func TestHeldBound(t *testing.T) {
	const n = MaxHeld + MaxHeld/2
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
			if w.held > MaxHeld {
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

// TestInvalidSpans checks that input breaking the model is dropped,
// counted and reported rather than written into a corrupt trace.
// TestFlowTimes checks the flows whose end span starts before their start
// span: drawn when the spans overlap, refused and counted when the end
// span is over before the start span begins.
func TestFlowTimes(t *testing.T) {
	tests := []struct {
		name     string
		from, to [2]int64
		kept     int
		refused  uint64
	}{
		{"forward", [2]int64{0, 10}, [2]int64{5, 20}, 1, 0},
		{"end starts first", [2]int64{10, 20}, [2]int64{5, 30}, 1, 0},
		{"touching", [2]int64{10, 20}, [2]int64{0, 10}, 1, 0},
		{"backward", [2]int64{10, 20}, [2]int64{0, 9}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &timeline.Trace{
				Names:  []string{"", "submit", "zone", "child"},
				Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}, {ID: 2, Kind: timeline.TrackGPUQueue, Name: "gpu"}},
				Spans: []timeline.Span{
					{Track: 1, Name: 1, Start: tc.from[0], End: tc.from[1]},
					{Track: 2, Name: 2, Start: tc.to[0], End: tc.to[1]},
					// A child ending with the end span must not catch the flow.
					{Track: 2, Name: 3, Start: tc.to[1] - 1, End: tc.to[1], Depth: 1},
				},
				Flows: []timeline.Flow{{From: 0, To: 1}},
			}
			var buf bytes.Buffer
			w := NewWriter(&buf)
			w.WriteBatch(tr)
			w.Close()
			if w.Invalid().Flows != tc.refused {
				t.Errorf("refused %d flows, want %d", w.Invalid().Flows, tc.refused)
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Flows) != tc.kept {
				t.Fatalf("%d flows, want %d", len(got.Flows), tc.kept)
			}
			for _, f := range got.Flows {
				if got.Name(got.Spans[f.From].Name) != "submit" || got.Name(got.Spans[f.To].Name) != "zone" {
					t.Errorf("flow %s -> %s", got.Name(got.Spans[f.From].Name), got.Name(got.Spans[f.To].Name))
				}
			}
		})
	}
}

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
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != 1 || got.Drops.Spans != 5 || len(got.Samples) != 1 {
		t.Errorf("read back %d spans, %d samples, drops %+v", len(got.Spans), len(got.Samples), got.Drops)
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

func TestReadForeign(t *testing.T) {
	tests := []struct {
		name, in      string
		spans, tracks int
		flows         int
		unmatched     uint64
		wantErr       string
	}{
		{"array X", `[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":2,"name":"b"}]`, 2, 1, 0, 0, ""},
		{"array no close", `[{"ph":"B","pid":1,"tid":2,"ts":1,"name":"a"},{"ph":"E","pid":1,"tid":2,"ts":3}`, 1, 1, 0, 0, ""},
		{"thread names", `[{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"render"}},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"}]`, 1, 1, 0, 0, ""},
		{"string tid", `{"traceEvents":[{"ph":"B","pid":"p","tid":"worker","ts":1,"name":"a"},{"ph":"E","pid":"p","tid":"worker","ts":2}]}`, 1, 1, 0, 0, ""},
		{"flow", `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"a"},{"ph":"s","id":7,"pid":1,"tid":1,"ts":2},{"ph":"X","pid":1,"tid":2,"ts":10,"dur":5,"name":"b"},{"ph":"f","bp":"e","id":7,"pid":1,"tid":2,"ts":11}]`, 2, 2, 1, 0, ""},
		{"unmatched", `[{"ph":"E","pid":1,"tid":1,"ts":1},{"ph":"B","pid":1,"tid":1,"ts":2,"name":"open"}]`, 0, 1, 0, 2, ""},
		{"overlapping X", `[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":10,"name":"b"},{"ph":"X","pid":1,"tid":1,"ts":10,"dur":0,"name":"c"}]`, 2, 1, 0, 0, ""},
		{"E inside X", `[{"ph":"B","pid":1,"tid":1,"ts":0,"name":"a"},{"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"x"},{"ph":"E","pid":1,"tid":1,"ts":5},{"ph":"E","pid":1,"tid":1,"ts":20}]`, 2, 1, 0, 1, ""},
		{"counter", `[{"ph":"C","pid":1,"name":"mem","ts":1,"args":{"heap":5,"stack":2}}]`, 0, 2, 0, 0, ""},
		{"other phases", `{"traceEvents":[{"ph":"i","ts":1,"name":"x"},{"ph":"P"},{"ph":"longer"}],"metadata":{"a":[1,2]}}`, 0, 0, 0, 0, ""},
		{"empty object", `{}`, 0, 0, 0, 0, "no traceEvents"},
		{"garbage", `hello`, 0, 0, 0, 0, "invalid character"},
		{"number", `42`, 0, 0, 0, 0, "starts with"},
		{"truncated object", `{"traceEvents":[{"ph":"B","pid":1`, 0, 0, 0, 0, "unexpected EOF"},
		{"bad ts", `[{"ph":"B","pid":1,"tid":1,"ts":"soon","name":"a"}]`, 0, 0, 0, 0, "ts"},
		{"negative dur", `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":-1,"name":"a"}]`, 0, 0, 0, 0, "dur"},
		{"bad track meta", `[{"ph":"M","name":"framescope_track","pid":1,"tid":1,"args":{"id":0,"kind":"cpu"}}]`, 0, 0, 0, 0, "bad track"},
		{"events not array", `{"traceEvents":5}`, 0, 0, 0, 0, "not an array"},
		{"deep", `[` + strings.Repeat(`{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},`, 5000) + `{"ph":"i"}]`, 0, 0, 0, 0, "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Spans) != tc.spans || len(got.Tracks) != tc.tracks || len(got.Flows) != tc.flows || got.Drops.Unmatched != tc.unmatched {
				t.Fatalf("got %d spans, %d tracks, %d flows, %d unmatched: %+v", len(got.Spans), len(got.Tracks), len(got.Flows), got.Drops.Unmatched, got)
			}
		})
	}
}

func TestReadThreadName(t *testing.T) {
	tr, err := Read(strings.NewReader(`[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"render"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Tracks) != 1 || tr.Tracks[0].Name != "render" || tr.Tracks[0].Kind != timeline.TrackCPU {
		t.Fatalf("tracks %+v", tr.Tracks)
	}
}

func TestReadLimits(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleTrace(4, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLimited(bytes.NewReader(buf.Bytes()), Limits{MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxBytes: %v", err)
	}
	if _, err := ReadLimited(bytes.NewReader(buf.Bytes()), Limits{MaxEvents: 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxEvents: %v", err)
	}
	if _, err := ReadLimited(io.MultiReader(bytes.NewReader(buf.Bytes())), Limits{}); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

// FuzzRead checks that no input makes Read panic, and that whatever it
// accepts can be written and read back to the same trace.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, sampleTrace(5, 2))
	f.Add(buf.Bytes())
	f.Add([]byte(`[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":5,"name":"a"},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":2,"name":"b"}]`))
	f.Add([]byte(`[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},{"ph":"s","id":"x","pid":1,"tid":1,"ts":1},{"ph":"f","id":"x","bp":"e","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":2}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"C","pid":1,"name":"c","ts":1e3,"args":{"v":1.5}}]}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"M","name":"framescope_track","pid":1,"tid":3,"args":{"id":3,"kind":"gpu-queue","name":"q"}}]}`))
	// Found by fuzzing: a slice never ended around a child; two counters
	// of one name.
	f.Add([]byte(`[{"ph":"B","pid":0,"tid":0,"ts":0,"name":""},{"ph":"B","pid":0,"tid":0,"ts":0,"name":""},{"ph":"E","pid":0,"tid":0,"ts":0}]`))
	f.Add([]byte(`[{"ph":"M","name":"framescope_track","args":{"id":5,"kind":"counter","name":"c"}},{"ph":"M","name":"framescope_track","args":{"id":6,"kind":"counter","name":"c"}},{"ph":"C","name":"c","ts":1,"args":{"value":1}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadLimited(bytes.NewReader(data), Limits{MaxBytes: 1 << 20, MaxEvents: 1 << 14})
		if err != nil {
			if tr != nil && (!errors.Is(err, io.ErrUnexpectedEOF) || tr.Validate() != nil) {
				t.Fatalf("a trace returned with error %v breaks the model: %v", err, tr.Validate())
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("Read returned a trace that breaks the model: %v", err)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		if err := w.WriteBatch(tr); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.Invalid() != (Invalid{}) {
			t.Fatalf("the writer refused parts of a valid trace: %+v", w.Invalid())
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("invalid JSON written")
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		back.Process, tr.Process = timeline.Process{}, timeline.Process{}
		if g, w := fmt.Sprintf("%+v", canon(back)), fmt.Sprintf("%+v", canon(tr)); g != w {
			t.Fatalf("round trip changed the trace:\ngot  %.2000s\nwant %.2000s", g, w)
		}
	})
}
