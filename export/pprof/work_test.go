package pprof

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// workTypes are the sample types of a profile of tracecases.WorkTrace:
// time, then its statistics in bit order.
var workTypes = []string{"gpu_time/nanoseconds", "cpu_time/nanoseconds", "input_assembly_vertices/count",
	"vertex_shader_invocations/count", "clipping_primitives/count", "fragment_shader_invocations/count", "compute_shader_invocations/count"}

// wantWorkStacks are the values of the profile of tracecases.WorkTrace
// by stack, worked out by hand from its zones (times relative to T0):
//
//	graphics queue:
//	  frame [0, 10000]   ia 18, vs 18, clip 6, fs 3*4194304, cs 0
//	    shadow [100, 4000]    ia 6, vs 6, clip 2, fs 4194304
//	    gbuffer [4000, 9000]  ia 12, vs 12, clip 4, fs 8388608
//	      6 draws of 100 ns, each without counts (one per reason)
//	compute queue:
//	  cull [500, 3000]  cs 2^60+3 (of the same five statistics, the rest 0)
//	  post [3000, 3500] no Work
//
// Each value is self time or self work: a zone's, less its children's.
// frame's children counted all it did; the draws count nothing, and
// gbuffer, which counted them, keeps their work.
var wantWorkStacks = map[string][]int64{
	"frame;graphics queue[1]":              {10000 - 3900 - 5000, 0, 18 - 6 - 12, 18 - 6 - 12, 6 - 2 - 4, 3*4194304 - 4194304 - 8388608, 0},
	"shadow;frame;graphics queue[1]":       {3900, 0, 6, 6, 2, 4194304, 0},
	"gbuffer;frame;graphics queue[1]":      {5000 - 6*100, 0, 12, 12, 4, 8388608, 0},
	"draw;gbuffer;frame;graphics queue[1]": {6 * 100, 0, 0, 0, 0, 0, 0},
	"cull;compute queue[1]":                {2500, 0, 0, 0, 0, 0, 1<<60 + 3},
	"post;compute queue[1]":                {500, 0, 0, 0, 0, 0, 0},
}

// TestBuildWork: the profile of the work trace has a sample type per
// statistic it counts, "count"s in bit order after the times, and the
// values worked out by hand, the count past 2^53 exact; built whole, or
// streamed through a Builder in any order; and each type's total is the
// sum of the counts of the outermost zones with counts.
func TestBuildWork(t *testing.T) {
	tr := tracecases.WorkTrace()
	built := Build(tr)
	perm := seq(len(tr.Spans))
	slices.Reverse(perm)
	streamed := stream(Options{}, batches(tr, perm, 4))
	for name, p := range map[string]*profile.Profile{"Build": built, "Builder": streamed} {
		if err := p.CheckValid(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := sampleTypes(p); !slices.Equal(got, workTypes) {
			t.Errorf("%s: sample types %v, want %v", name, got, workTypes)
		}
		if p.DefaultSampleType != GPUTime {
			t.Errorf("%s: default sample type %q", name, p.DefaultSampleType)
		}
		if got := stacks(p); fmt.Sprint(got) != fmt.Sprint(wantWorkStacks) {
			t.Errorf("%s: stacks\ngot  %v\nwant %v", name, got, wantWorkStacks)
		}
		totals := make([]int64, len(p.SampleType))
		for _, s := range p.Sample {
			for i, v := range s.Value {
				totals[i] += v
			}
		}
		// The outermost zones with counts: frame and cull.
		if want := []int64{13000, 0, 18, 18, 6, 12582912, 1<<60 + 3}; !slices.Equal(totals, want) {
			t.Errorf("%s: totals %v, want %v", name, totals, want)
		}
	}
}

// TestWorkUnchangedTime: work does not change the time: the work trace
// without its Work has the same time samples, and only the two time
// sample types, as every trace without work.
func TestWorkUnchangedTime(t *testing.T) {
	tr := tracecases.WorkTrace()
	with := stacks(Build(tr))
	for i := range tr.Spans {
		tr.Spans[i].Work = nil
	}
	p := Build(tr)
	if got := sampleTypes(p); !slices.Equal(got, workTypes[:2]) {
		t.Errorf("without work: sample types %v", got)
	}
	without := stacks(p)
	if len(with) != len(without) {
		t.Errorf("%d stacks with work, %d without", len(with), len(without))
	}
	for k, v := range with {
		if w := without[k]; !slices.Equal(v[:2], w) {
			t.Errorf("%s: times %v with work, %v without", k, v[:2], w)
		}
	}
	ins := []*timeline.Trace{benchspans.Trace(600, 3), trace(3, 100)}
	for _, c := range tracecases.All() {
		if c.Name != "gpu work" {
			ins = append(ins, merged(c))
		}
	}
	for _, in := range ins {
		for _, p := range []*profile.Profile{Build(in), stream(Options{}, batches(in, seq(len(in.Spans)), 3))} {
			if got := sampleTypes(p); !slices.Equal(got, workTypes[:2]) {
				t.Errorf("a trace without work: sample types %v", got)
			}
			for _, s := range p.Sample {
				if len(s.Value) != 2 {
					t.Fatalf("a trace without work: a sample of %d values", len(s.Value))
				}
			}
		}
	}
}

// TestSelfWork checks the rule for self work where counts do not nest
// neatly, each case a GPU queue of its own, built whole and streamed:
// a zone's counts are taken from its innermost enclosing zone with counts
// of that statistic, past zones without; a value below 0 is 0, and one
// past int64 2^63-1, each counted in a comment; zones without counts,
// zones of CPU tracks and zones folded for depth count nothing of their
// own; a zero-length zone's counts make a sample of no time.
func TestSelfWork(t *testing.T) {
	frag := timeline.FragmentShaderInvocations
	vert := timeline.VertexShaderInvocations
	cnt := func(fs, vs uint64) *timeline.Work {
		return &timeline.Work{Stats: frag | vert, Count: [11]uint64{2: vs, 7: fs}}
	}
	fsOnly := func(fs uint64) *timeline.Work { return &timeline.Work{Stats: frag, Count: [11]uint64{7: fs}} }
	none := &timeline.Work{Stats: frag | vert, Missing: timeline.WorkSpent}
	tr := &timeline.Trace{Names: []string{"", "a", "b", "c", "d"}}
	span := func(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16, w *timeline.Work) {
		tr.Spans = append(tr.Spans, timeline.Span{Track: track, Name: name, Start: start, End: end, Depth: depth, Work: w})
	}
	queue := func(id timeline.TrackID, name string) {
		tr.Tracks = append(tr.Tracks, timeline.Track{ID: id, Kind: timeline.TrackGPUQueue, Name: name, Queue: timeline.Queue{Device: "gpu"}})
	}
	// q1: a > b (no counts) > c: c is taken from a, past b.
	queue(1, "q1")
	span(1, 1, 0, 100, 0, cnt(1000, 30))
	span(1, 2, 10, 90, 1, none)
	span(1, 3, 20, 80, 2, cnt(400, 10))
	// q2: a's children counted more than a: a's value is 0, not -50.
	queue(2, "q2")
	span(2, 1, 0, 100, 0, cnt(100, 5))
	span(2, 2, 0, 50, 1, cnt(80, 2))
	span(2, 3, 50, 100, 1, cnt(70, 3))
	// q3: b counts only fragments: a's vertices are all its own; a is
	// wholly covered in time by b, but not in work.
	queue(3, "q3")
	span(3, 1, 0, 100, 0, cnt(500, 40))
	span(3, 2, 0, 100, 1, fsOnly(200))
	// q4: a zero-length zone with counts in a zone without any (nil):
	// a sample of no time; and a count past int64.
	queue(4, "q4")
	span(4, 1, 0, 100, 0, nil)
	span(4, 2, 50, 50, 1, cnt(7, 1))
	span(4, 3, 60, 70, 1, fsOnly(math.MaxUint64))
	// q5: a zone, its child exactly counted all it did, in all its time:
	// no sample is left for it.
	queue(5, "q5")
	span(5, 1, 0, 100, 0, cnt(10, 10))
	span(5, 2, 0, 100, 1, cnt(10, 10))
	// A CPU span with work counts nothing.
	tr.Tracks = append(tr.Tracks, timeline.Track{ID: 6, Kind: timeline.TrackCPU, Name: "cpu"})
	span(6, 1, 0, 100, 0, &timeline.Work{Stats: timeline.ComputeShaderInvocations, Count: [11]uint64{10: 5}})

	want := map[string][]int64{
		"a;q1[]":     {20, 0, 30 - 10, 1000 - 400},
		"b;a;q1[]":   {20, 0, 0, 0},
		"c;b;a;q1[]": {60, 0, 10, 400},
		"b;a;q2[]":   {50, 0, 2, 80},
		"c;a;q2[]":   {50, 0, 3, 70},
		"b;a;q3[]":   {100, 0, 0, 200},
		"a;q3[]":     {0, 0, 40, 300},
		"a;q4[]":     {90, 0, 0, 0},
		"b;a;q4[]":   {0, 0, 1, 7},
		"c;a;q4[]":   {10, 0, 0, math.MaxInt64},
		"b;a;q5[]":   {100, 0, 10, 10},
		"a;cpu[]":    {0, 100, 0, 0},
	}
	// q2's a has no sample: no time, and its fragments, 100 less 150,
	// are 0 (its vertices, 5 less 5, are 0 as they should be).
	for name, p := range map[string]*profile.Profile{
		"Build":                Build(tr),
		"Builder, reversed":    stream(Options{}, batches(tr, reversed(len(tr.Spans)), len(tr.Spans))),
		"Builder, one a batch": stream(Options{}, batches(tr, seq(len(tr.Spans)), len(tr.Spans))),
	} {
		if got, w := sampleTypes(p), []string{"gpu_time/nanoseconds", "cpu_time/nanoseconds", "vertex_shader_invocations/count", "fragment_shader_invocations/count"}; !slices.Equal(got, w) {
			t.Errorf("%s: sample types %v, want %v", name, got, w)
		}
		if got := stacks(p); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: stacks\ngot  %v\nwant %v", name, got, want)
		}
		for _, s := range p.Sample {
			for _, v := range s.Value {
				if v < 0 {
					t.Errorf("%s: a negative value: %v", name, s.Value)
				}
			}
		}
		c := strings.Join(p.Comments, "\n")
		if !strings.Contains(c, "framescope gave 1 work values 0, not less") || !strings.Contains(c, "framescope gave 1 work values 9223372036854775807") {
			t.Errorf("%s: comments %q", name, p.Comments)
		}
	}
}

func reversed(n int) []int {
	s := seq(n)
	slices.Reverse(s)
	return s
}

// TestGoToolPprofWork runs `go tool pprof -sample_index=<statistic>` on
// the profile of the work trace: every statistic is a sample index, its
// total is the sum of the outermost counted zones' counts, and -top shows
// each zone's self work.
func TestGoToolPprofWork(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, tracecases.WorkTrace()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "work.pb.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	countRE := regexp.MustCompile(`of (\d+) total`)
	for _, tc := range []struct {
		stat  string
		total int64
	}{{"input_assembly_vertices", 18}, {"vertex_shader_invocations", 18}, {"clipping_primitives", 6}, {"fragment_shader_invocations", 12582912}} {
		out := goTool(t, "-sample_index="+tc.stat, "-top", path)
		if !strings.Contains(out, "Type: "+tc.stat) {
			t.Errorf("%s: no type line:\n%s", tc.stat, out)
		}
		m := countRE.FindStringSubmatch(out)
		if m == nil || m[1] != strconv.FormatInt(tc.total, 10) {
			t.Errorf("%s: want a total of %d:\n%s", tc.stat, tc.total, out)
		}
	}
	out := goTool(t, "-sample_index=fragment_shader_invocations", "-top", path)
	for _, line := range []string{
		`(?m)^\s+8388608 66\.67% 66\.67%\s+8388608 66\.67%\s+gbuffer$`,
		`(?m)^\s+4194304 33\.33%\s+100%\s+4194304 33\.33%\s+shadow$`,
		`(?m)^\s+0\s+0%\s+100%\s+12582912\s+100%\s+frame$`,
	} {
		if !regexp.MustCompile(line).MatchString(out) {
			t.Errorf("no line %s in\n%s", line, out)
		}
	}
	// pprof sums and prints through float64: a total past 2^53 shows
	// rounded (the profile holds it exact, TestBuildWork).
	out = goTool(t, "-sample_index=compute_shader_invocations", "-top", path)
	if m := countRE.FindStringSubmatch(out); m == nil || m[1] != strconv.FormatFloat(float64(1<<60+3), 'f', 0, 64) {
		t.Errorf("compute_shader_invocations: want a total of about 2^60:\n%s", out)
	}
	// Time is as it was, and the default.
	gpu, _ := Totals(tracecases.WorkTrace())
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", path)); got != gpu {
		t.Errorf("gpu_time total %d, want %d", got, gpu)
	}
}
