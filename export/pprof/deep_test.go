package pprof

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// chain is n spans nested in one another on a CPU track, each 1 ns longer
// at each end than the next, with names of their own.
func chain(n int) *timeline.Trace {
	t := &timeline.Trace{Names: []string{""}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}}
	for i := range n {
		t.Names = append(t.Names, "z"+string(rune('a'+i%26))+strings.Repeat("x", i%7))
		t.Spans = append(t.Spans, timeline.Span{Track: 1, Name: timeline.NameID(len(t.Names) - 1),
			Start: int64(i), End: int64(2*n - i), Depth: uint16(min(i, 65535)), Frame: 1})
	}
	return t
}

// TestBuildDeepLinear: a chain of nested spans costs the profile a
// bounded stack per sample, not its whole depth (8,000 deep once
// allocated 600 MB, each span copying its ancestors' stack); the spans
// past maxStackDepth are folded, counted in a comment, and keep their
// time.
func TestBuildDeepLinear(t *testing.T) {
	n := 8000
	if testing.Short() {
		n = 3000
	}
	tr := chain(n)
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	p := Build(tr)
	runtime.ReadMemStats(&b)
	per := float64(b.TotalAlloc-a.TotalAlloc) / float64(n)
	t.Logf("%d spans nested: %.0f bytes allocated a span", n, per)
	if per > 4096 {
		t.Errorf("%.0f bytes allocated a span, want at most 4096", per)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range p.Sample {
		if len(s.Location) > maxStackDepth+2 { // the zones, the folded frame, the track
			t.Fatalf("a stack of %d frames, want at most %d", len(s.Location), maxStackDepth+2)
		}
		sum += s.Value[1]
	}
	if _, cpu := Totals(tr); sum != cpu {
		t.Errorf("cpu_time %d, want the busy time %d", sum, cpu)
	}
	if c := strings.Join(p.Comments, "\n"); !strings.Contains(c, "folded 7872 spans") && n == 8000 ||
		!strings.Contains(c, foldedName) {
		t.Errorf("comments %q, want the folded spans counted", p.Comments)
	}
}

// TestBuildWideBounded: spans side by side, every one with a name and a
// frame of its own, make at most maxFunctions functions and maxSamples
// samples; the rest is counted in comments and keeps its time.
func TestBuildWideBounded(t *testing.T) {
	defer func(f, s int) { functionLimit, sampleLimit = f, s }(functionLimit, sampleLimit)
	functionLimit, sampleLimit = 1<<12, 1<<13 // the same code, at lower bounds
	n := sampleLimit + 1000
	tr := &timeline.Trace{Names: []string{""}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}}
	for i := range n {
		tr.Names = append(tr.Names, "z"+strconv.Itoa(i))
		tr.Spans = append(tr.Spans, timeline.Span{Track: 1, Name: timeline.NameID(i + 1), Start: int64(2 * i), End: int64(2*i + 1), Frame: uint64(i + 1)})
	}
	p := Build(tr)
	if len(p.Function) > functionLimit+2 || len(p.Sample) > sampleLimit+1 {
		t.Errorf("%d functions, %d samples; want at most %d and %d", len(p.Function), len(p.Sample), functionLimit+2, sampleLimit+1)
	}
	var sum int64
	for _, s := range p.Sample {
		sum += s.Value[1]
	}
	if sum != int64(n) {
		t.Errorf("cpu_time %d, want %d", sum, n)
	}
	c := strings.Join(p.Comments, "\n")
	if !strings.Contains(c, otherName) || !strings.Contains(c, "self time of 1000 spans") {
		t.Errorf("comments %q", p.Comments)
	}
}
