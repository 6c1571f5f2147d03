package record

import (
	"slices"
	"sync"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// checkDepths fails t unless every span's Depth is its nesting depth on
// its track, and the trace validates.
func checkDepths(t *testing.T, tr *timeline.Trace) {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	byTrack := map[timeline.TrackID][]int{}
	for i, s := range tr.Spans {
		byTrack[s.Track] = append(byTrack[s.Track], i)
	}
	for id, idx := range byTrack {
		slices.SortFunc(idx, func(a, b int) int {
			x, y := tr.Spans[a], tr.Spans[b]
			if x.Start != y.Start {
				return cmpInt(x.Start, y.Start)
			}
			if x.End != y.End {
				return cmpInt(y.End, x.End)
			}
			return int(x.Depth) - int(y.Depth)
		})
		var stack []timeline.Span // open spans
		for _, i := range idx {
			s := tr.Spans[i]
			// A span starting where the top starts is inside it (the
			// sort put the longer first); one starting at its end is not.
			for len(stack) > 0 && stack[len(stack)-1].End <= s.Start && stack[len(stack)-1].Start != s.Start {
				stack = stack[:len(stack)-1]
			}
			if int(s.Depth) != len(stack) {
				t.Fatalf("track %d span %d %+v: depth %d, want %d", id, i, s, s.Depth, len(stack))
			}
			stack = append(stack, s)
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// spansOn returns the spans of track id, in start order.
func spansOn(tr *timeline.Trace, id timeline.TrackID) []timeline.Span {
	var out []timeline.Span
	for _, s := range tr.Spans {
		if s.Track == id {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b timeline.Span) int {
		if a.Start != b.Start {
			return cmpInt(a.Start, b.Start)
		}
		return int(a.Depth) - int(b.Depth)
	})
	return out
}

func TestCPUSpans(t *testing.T) {
	type want struct {
		name  string
		depth uint16
	}
	tests := []struct {
		name   string
		run    func(tk *CPUTrack, n func(string) timeline.NameID)
		want   []want // in start order
		misuse uint64
		drops  uint64
	}{
		{
			name: "nested",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				a := tk.Span(n("a"))
				b := tk.Span(n("b"))
				tk.Span(n("c")).End()
				b.End()
				tk.Span(n("d")).End()
				a.End()
			},
			want: []want{{"a", 0}, {"b", 1}, {"c", 2}, {"d", 1}},
		},
		{
			name: "end twice",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				a := tk.Span(n("a"))
				a.End()
				a.End()
			},
			want:   []want{{"a", 0}},
			misuse: 1,
		},
		{
			name: "stale handle after reuse of its depth",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				a := tk.Span(n("a"))
				a.End()
				b := tk.Span(n("b"))
				a.End() // same depth, different span
				b.End()
			},
			want:   []want{{"a", 0}, {"b", 0}},
			misuse: 1,
		},
		{
			name: "end out of order closes inner",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				a := tk.Span(n("a"))
				b := tk.Span(n("b"))
				c := tk.Span(n("c"))
				a.End()
				c.End()
				b.End()
			},
			want:   []want{{"a", 0}, {"b", 1}, {"c", 2}},
			misuse: 4, // b and c closed early, then each ended again
		},
		{
			name: "too deep",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				var open []OpenSpan
				for range MaxCPUDepth + 3 {
					open = append(open, tk.Span(n("x")))
				}
				for i := len(open) - 1; i >= 0; i-- {
					open[i].End()
				}
			},
			want:  slices.Repeat([]want{{"x", 0}}, MaxCPUDepth), // depths checked by checkDepths
			drops: 3,
		},
		{
			name: "zero and nil handles",
			run: func(tk *CPUTrack, n func(string) timeline.NameID) {
				OpenSpan{}.End()
				var nilTrack *CPUTrack
				nilTrack.Span(n("a")).End()
				nilTrack.Span(n("b")).Submitted(1)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder(Options{})
			tk := r.CPUTrack("main")
			tc.run(tk, r.Name)
			tr := r.Dump()
			checkDepths(t, tr)
			got := spansOn(tr, tk.ID())
			if len(got) != len(tc.want) {
				t.Fatalf("got %d spans, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if tr.Name(got[i].Name) != w.name {
					t.Errorf("span %d is %q, want %q", i, tr.Name(got[i].Name), w.name)
				}
				if tc.name != "too deep" && got[i].Depth != w.depth {
					t.Errorf("span %d depth %d, want %d", i, got[i].Depth, w.depth)
				}
			}
			st := r.Stats()
			if st.Drops.Misuse != tc.misuse || st.Drops.Spans != tc.drops {
				t.Errorf("misuse %d drops %d, want %d and %d", st.Drops.Misuse, st.Drops.Spans, tc.misuse, tc.drops)
			}
		})
	}
}

func TestNamesRegisteredOnce(t *testing.T) {
	r := NewRecorder(Options{})
	a, b, a2 := r.Name("a"), r.Name("b"), r.Name("a")
	if a != a2 || a == b || a == 0 || r.Name("") != 0 {
		t.Fatalf("ids a=%d b=%d a again=%d", a, b, a2)
	}
	tr := r.Dump()
	if tr.Name(a) != "a" || tr.Name(b) != "b" || tr.Names[0] != "" {
		t.Fatalf("names %q", tr.Names)
	}
}

func TestConcurrentTracks(t *testing.T) {
	const workers, frames, perFrame = 4, 50, 40
	r := NewRecorder(Options{MaxPendingSpans: 1 << 20})
	name := r.Name("work")
	inner := r.Name("inner")
	var wg sync.WaitGroup
	tracks := make([]*CPUTrack, workers)
	for w := range workers {
		tracks[w] = r.CPUTrack("worker")
	}
	stop := make(chan struct{})
	go func() { // a reader dumping while others record
		for {
			select {
			case <-stop:
				return
			default:
				if err := r.Dump().Validate(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for f := 0; f < frames; f++ {
		r.BeginFrame()
		for w := range workers {
			wg.Add(1)
			go func(tk *CPUTrack) {
				defer wg.Done()
				for range perFrame {
					s := tk.Span(name)
					tk.Span(inner).End()
					s.End()
				}
			}(tracks[w])
		}
		wg.Wait()
		r.EndFrame()
	}
	close(stop)
	tr := r.Dump()
	checkDepths(t, tr)
	for _, tk := range tracks {
		got := spansOn(tr, tk.ID())
		if len(got) != 2*frames*perFrame {
			t.Fatalf("track %d: %d spans, want %d", tk.ID(), len(got), 2*frames*perFrame)
		}
		for _, s := range got {
			if s.Frame == 0 || s.Frame > frames {
				t.Fatalf("span %+v has frame %d", s, s.Frame)
			}
		}
	}
	if d := tr.Drops.Total(); d != 0 {
		t.Fatalf("drops %+v", tr.Drops)
	}
}

func TestPendingSpansBounded(t *testing.T) {
	r := NewRecorder(Options{MaxPendingSpans: 2 * chunkSize})
	tk := r.CPUTrack("main")
	n := r.Name("x")
	for range 10 * chunkSize {
		tk.Span(n).End()
	}
	tr := r.Dump()
	if got := len(tr.Spans); got != 2*chunkSize {
		t.Fatalf("kept %d spans, want %d", got, 2*chunkSize)
	}
	if tr.Drops.Spans != 8*chunkSize {
		t.Fatalf("dropped %d, want %d", tr.Drops.Spans, 8*chunkSize)
	}
	// Collected chunks are reused: recording goes on.
	tk.Span(n).End()
	if got := len(r.Dump().Spans); got != 2*chunkSize+1 {
		t.Fatalf("after collect: %d spans", got)
	}
}

func TestForeignNameDropped(t *testing.T) {
	r := NewRecorder(Options{})
	tk := r.CPUTrack("main")
	s := tk.Span(timeline.NameID(1000)) // never registered here
	s.Submitted(5)
	s.End()
	tr := r.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tr.Spans) != 0 || tr.Drops.Spans != 1 {
		t.Fatalf("%d spans, %d dropped", len(tr.Spans), tr.Drops.Spans)
	}
}

func TestConcurrentEverything(t *testing.T) {
	var mu sync.Mutex
	var streamed int
	sink := timeline.SinkFunc(func(b *timeline.Trace) error {
		if err := b.Validate(); err != nil {
			t.Error(err)
		}
		mu.Lock()
		streamed += len(b.Spans)
		mu.Unlock()
		return nil
	})
	r, q, zone := gpuSetup(Options{Sink: sink, WindowFrames: 10, SettleFrames: 2})
	cpu := r.CPUTrack("render")
	submit := r.Name("submit")
	const frames = 200
	keys := make(chan uint64, frames)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // the profiler: GPU spans, calibrations, drops
		defer wg.Done()
		for k := range keys {
			now := timeline.Now()
			_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: now, End: now + 100, Frame: k, Key: k}})
			_ = r.AddCalibration(timeline.Calibration{Track: q, Time: now, ErrNs: 100})
			r.AddDrops(timeline.Drops{QueryLimit: 1})
		}
	}()
	go func() { // a reader
		defer wg.Done()
		for range 50 {
			if err := r.Dump().Validate(); err != nil {
				t.Error(err)
			}
			_ = r.Flush()
			_ = r.Stats()
		}
	}()
	go func() { // a worker with its own track and a counter
		defer wg.Done()
		w := r.CPUTrack("worker")
		c := r.Counter("jobs", timeline.UnitCount)
		for i := range 2000 {
			w.Span(zone).End()
			c.Set(float64(i))
		}
	}()
	for f := uint64(1); f <= frames; f++ {
		r.BeginFrame()
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		keys <- f
		r.EndFrame()
	}
	close(keys)
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// Every span went to the sink: frames, submits, GPU spans, worker spans.
	if want := frames*3 + 2000; streamed != want {
		t.Fatalf("streamed %d spans, want %d", streamed, want)
	}
	if st := r.Stats(); st.Drops.QueryLimit != frames || st.Drops.Spans != 0 {
		t.Fatalf("stats %+v", st)
	}
}
