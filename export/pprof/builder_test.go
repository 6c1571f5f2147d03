package pprof

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// stacks sums a profile's values, all of them, by stack (leaf first,
// ";"-joined) and frame label.
func stacks(p *profile.Profile) map[string][]int64 {
	out := map[string][]int64{}
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		k := strings.Join(names, ";") + fmt.Sprint(s.NumLabel["frame"])
		v := out[k]
		if v == nil {
			v = make([]int64, len(p.SampleType))
		}
		for i, x := range s.Value {
			v[i] += x
		}
		out[k] = v
	}
	return out
}

// workOnly is p without the samples of the GPU's idle time (kind=idle),
// which only Build adds: a copy, p unchanged.
func workOnly(p *profile.Profile) *profile.Profile {
	q := p.Copy()
	q.Sample = slices.DeleteFunc(q.Sample, func(s *profile.Sample) bool { return slices.Contains(s.Label[kindLabel], idleKind) })
	return q
}

// sampleTypes are a profile's sample types, "type/unit".
func sampleTypes(p *profile.Profile) []string {
	var out []string
	for _, st := range p.SampleType {
		out = append(out, st.Type+"/"+st.Unit)
	}
	return out
}

// batches splits t's spans, in the order of perm, into n batches that
// carry t's names and tracks, its frames in the first and its Drops in
// the last.
func batches(t *timeline.Trace, perm []int, n int) []*timeline.Trace {
	var out []*timeline.Trace
	n = max(n, 1)
	per := max((len(perm)+n-1)/n, 1)
	for i := 0; i < len(perm) || len(out) == 0; i += per {
		b := &timeline.Trace{Names: t.Names, Tracks: t.Tracks}
		for _, j := range perm[i:min(i+per, len(perm))] {
			b.Spans = append(b.Spans, t.Spans[j])
		}
		out = append(out, b)
	}
	out[0].Frames = t.Frames
	out[len(out)-1].Drops = t.Drops
	return out
}

func stream(o Options, bs []*timeline.Trace) *profile.Profile {
	pb := NewBuilder(o)
	for _, b := range bs {
		pb.WriteBatch(b)
	}
	return pb.Profile()
}

// merged is the whole trace of a case's batches.
func merged(c tracecases.Case) *timeline.Trace {
	t := &timeline.Trace{}
	for _, b := range c.Batches {
		t.Names, t.Tracks, t.Drops = b.Names, b.Tracks, b.Drops
		t.Spans = append(t.Spans, b.Spans...)
	}
	return t
}

// TestBuilderMatchesBuild: the stack values a Builder makes from batches
// are Build's of the whole trace, whatever the batches and the order of
// spans across them, parents before or after their children, less the
// GPU's idle time, which Build alone adds.
func TestBuilderMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type input struct {
		name string
		t    *timeline.Trace
	}
	ins := []input{{"benchspans 600", benchspans.Trace(600, 7)}, {"benchspans 6000", benchspans.Trace(6000, 8)}}
	for _, c := range tracecases.All() {
		ins = append(ins, input{c.Name, merged(c)})
	}
	for _, in := range ins {
		built := Build(in.t)
		want := stacks(workOnly(built))
		n := len(in.t.Spans)
		ident := make([]int, n)
		for i := range ident {
			ident[i] = i
		}
		// Shuffled across the whole trace when it is small enough that
		// every parent stays among the recent spans of its depth; within
		// windows of 200 spans otherwise.
		shuffled := slices.Clone(ident)
		win := n
		if n > 1000 {
			win = 200
		}
		for i := 0; i < n; i += win {
			part := shuffled[i:min(i+win, n)]
			rng.Shuffle(len(part), func(a, b int) { part[a], part[b] = part[b], part[a] })
		}
		reversed := slices.Clone(ident)
		slices.Reverse(reversed)
		if n > 1000 {
			reversed = nil // a child would wait past maxPending... or its parent leave the recent spans
		}
		for _, c := range []struct {
			name string
			perm []int
			n    int
		}{{"one batch", ident, 1}, {"in order, 7 batches", ident, 7}, {"shuffled, 13 batches", shuffled, 13},
			{"shuffled, a span a batch", shuffled, n}, {"reversed, 5 batches", reversed, 5}} {
			if c.perm == nil {
				continue
			}
			p := stream(Options{}, batches(in.t, c.perm, c.n))
			if err := p.CheckValid(); err != nil {
				t.Fatalf("%s, %s: %v", in.name, c.name, err)
			}
			if got := stacks(p); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, %s: stacks differ from Build's\ngot  %v\nwant %v", in.name, c.name, got, want)
			}
			if got, want := sampleTypes(p), sampleTypes(built); !slices.Equal(got, want) {
				t.Errorf("%s, %s: sample types %v, Build's %v", in.name, c.name, got, want)
			}
			if in.t.Drops.Total() > 0 && !slices.Contains(p.Comments, DropsComment(in.t.Drops)) {
				t.Errorf("%s, %s: comments %q lack the drops", in.name, c.name, p.Comments)
			}
		}
	}
}

// TestBuilderOmitFrames: without frame labels, spans of one stack and
// track share a sample, and the time is the same.
func TestBuilderOmitFrames(t *testing.T) {
	tr := trace(40, 100)
	p := stream(Options{OmitFrames: true}, batches(tr, seq(len(tr.Spans)), 9))
	if len(p.Sample) != 7 {
		t.Errorf("%d samples, want one for each of the 7 stacks", len(p.Sample))
	}
	var g, c int64
	for _, s := range p.Sample {
		if s.NumLabel != nil {
			t.Errorf("a frame label: %v", s.NumLabel)
		}
		g, c = g+s.Value[0], c+s.Value[1]
	}
	if wg, wc := Totals(tr); g != wg || c != wc {
		t.Errorf("totals %d, %d; want %d, %d", g, c, wg, wc)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// orphans is a CPU track whose n spans say they are nested (depth 1) in a
// span that never comes, each 10 ns.
func orphans(n int) *timeline.Trace {
	t := &timeline.Trace{Names: []string{"", "child"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}}
	for i := range n {
		t.Spans = append(t.Spans, timeline.Span{Track: 1, Name: 1, Start: int64(100 * i), End: int64(100*i + 10), Depth: 1})
	}
	return t
}

// TestBuilderOrphans: a span whose enclosing zone never comes keeps its
// time, under orphanName, and a comment counts it; no more than
// maxPending wait at once.
func TestBuilderOrphans(t *testing.T) {
	defer func(n int) { pendingLimit = n }(pendingLimit)
	pendingLimit = 100
	tr := orphans(1000)
	pb := NewBuilder(Options{})
	most := 0
	for _, b := range batches(tr, seq(1000), 50) {
		pb.WriteBatch(b)
		most = max(most, pb.pending)
	}
	if most > pendingLimit {
		t.Errorf("%d spans waiting, want at most %d", most, pendingLimit)
	}
	p := pb.Profile()
	got := stacks(p)
	var sum int64
	for k, v := range got {
		if !strings.HasPrefix(k, "child;"+orphanName+";main") {
			t.Errorf("stack %q", k)
		}
		sum += v[1]
	}
	if sum != 10*1000 {
		t.Errorf("cpu_time %d, want %d", sum, 10*1000)
	}
	if c := strings.Join(p.Comments, "\n"); !strings.Contains(c, "placed 1000 spans under") {
		t.Errorf("comments %q", p.Comments)
	}
	if err := pb.WriteBatch(tr); !errors.Is(err, ErrFinished) {
		t.Errorf("a batch after Profile: %v", err)
	}
}

// TestBuilderLongRunBounded: a stream of frames without frame labels
// makes a profile whose samples stop growing once every stack has been
// seen, and the Builder's heap with it.
func TestBuilderLongRunBounded(t *testing.T) {
	pb := NewBuilder(Options{OmitFrames: true})
	batch := trace(30, 100) // 30 frames, 10 µs each
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var h0 uint64
	for i := 1; i <= 2000; i++ {
		for j := range batch.Spans {
			s := &batch.Spans[j]
			s.Start, s.End, s.Frame = s.Start+300_000, s.End+300_000, s.Frame+30
		}
		pb.WriteBatch(batch)
		switch i {
		case 100:
			h0 = heap()
		case 2000:
			if h := heap(); h > h0+64<<10 {
				t.Errorf("heap grew from %d to %d bytes between batches 100 and 2000", h0, h)
			}
		}
	}
	p := pb.Profile()
	if len(p.Sample) != 7 {
		t.Errorf("%d samples, want 7", len(p.Sample))
	}
	var g int64
	for _, s := range p.Sample {
		g += s.Value[0]
	}
	if want := int64(2000 * 30 * (4000 + 2000)); g != want {
		t.Errorf("gpu_time %d, want %d", g, want)
	}
}

func ExampleBuilder() {
	names := []string{"", "frame", "shadow"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "graphics"}}
	b := NewBuilder(Options{OmitFrames: true})
	for f := range int64(3) { // one batch a frame, as a recorder's sink gets them
		b.WriteBatch(&timeline.Trace{Names: names, Tracks: tracks, Spans: []timeline.Span{
			{Track: 1, Name: 2, Start: f*1000 + 100, End: f*1000 + 400, Depth: 1, Frame: uint64(f + 1)},
			{Track: 1, Name: 1, Start: f * 1000, End: f*1000 + 1000, Frame: uint64(f + 1)},
		}})
	}
	for _, s := range b.Profile().Sample {
		fmt.Println(s.Location[0].Line[0].Function.Name, s.Value)
	}
	// Output:
	// frame [2100 0]
	// shadow [900 0]
}

// BenchmarkBuilder is a Builder's cost a span, against Build's of the
// same spans measured in the same run (x-build): "frames" is one batch
// of 30 frames, as a recorder's sink gets them; "orphans-reversed" is
// hostile input,
// spans that name a parent that never comes, one a batch, latest first,
// which waits at maxPending and costs a bounded amount a span.
func BenchmarkBuilder(b *testing.B) {
	whole := benchspans.Trace(30*60, 9) // 30 frames
	b.Run("frames", func(b *testing.B) {
		var build, stream time.Duration
		for b.Loop() {
			t0 := time.Now()
			Build(whole)
			t1 := time.Now()
			pb := NewBuilder(Options{})
			pb.WriteBatch(whole)
			pb.Profile()
			build, stream = build+t1.Sub(t0), stream+time.Since(t1)
		}
		n := float64(b.N * len(whole.Spans))
		b.ReportMetric(float64(stream.Nanoseconds())/n, "ns/span")
		b.ReportMetric(float64(stream)/float64(build), "x-build")
	})
	b.Run("orphans-reversed", func(b *testing.B) {
		batch := &timeline.Trace{Names: []string{"", "c"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "m"}},
			Spans: []timeline.Span{{Track: 1, Name: 1, Depth: 3}}}
		pb := NewBuilder(Options{})
		i := int64(1 << 40)
		for b.Loop() {
			batch.Spans[0].Start, batch.Spans[0].End = 10*i, 10*i+5
			pb.WriteBatch(batch)
			i--
		}
		pb.Profile()
	})
}

// TestBuilderLateChild: a child that comes after its parent has left the
// Builder's recent spans leaves its time with the parent, so that the
// total is Build's and nothing is counted twice, and a comment counts it;
// its own child too.
func TestBuilderLateChild(t *testing.T) {
	tr := &timeline.Trace{Names: []string{"", "parent", "sibling", "child", "grandchild"},
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}}
	first := &timeline.Trace{Names: tr.Names, Tracks: tr.Tracks, Spans: []timeline.Span{{Track: 1, Name: 1, Start: 0, End: 1000}}}
	for i := range recentPerDepth {
		first.Spans = append(first.Spans, timeline.Span{Track: 1, Name: 2, Start: int64(2000 + 10*i), End: int64(2005 + 10*i)})
	}
	late := &timeline.Trace{Names: tr.Names, Tracks: tr.Tracks, Spans: []timeline.Span{
		{Track: 1, Name: 3, Start: 10, End: 20, Depth: 1},
		{Track: 1, Name: 4, Start: 12, End: 14, Depth: 2},
	}}
	tr.Spans = append(append(tr.Spans, first.Spans...), late.Spans...)
	var want int64
	for _, s := range Build(tr).Sample {
		want += s.Value[1]
	}
	p := stream(Options{}, []*timeline.Trace{first, late})
	var got int64
	for _, s := range p.Sample {
		got += s.Value[1]
	}
	if got != want {
		t.Errorf("cpu_time %d, Build's %d", got, want)
	}
	if c := strings.Join(p.Comments, "\n"); !strings.Contains(c, "left the time of 2 spans") || strings.Contains(c, orphanName) {
		t.Errorf("comments %q", p.Comments)
	}
}
