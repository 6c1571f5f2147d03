package pprof

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/timeline"
)

// trace builds frames of nested CPU and GPU zones, a GPU lane, and a frame
// track that must not count. scale stretches the "shadow" zone.
func trace(frames int, scale int64) *timeline.Trace {
	q := timeline.Queue{Device: "gpu0", Flags: "graphics"}
	t := &timeline.Trace{
		Names: []string{"", "frame", "update", "render", "gpu frame", "shadow", "main", "compute"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main thread"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics", Queue: q},
			{ID: 3, Kind: timeline.TrackGPULane, Name: "graphics lane 1", Parent: 2, Lane: 1, Queue: q},
			{ID: 4, Kind: timeline.TrackFrames, Name: "frames"},
		},
	}
	for f := range frames {
		id := uint64(f + 1)
		t0 := int64(f) * 10_000
		add := func(tr timeline.TrackID, n timeline.NameID, s, e int64, d uint16) {
			t.Spans = append(t.Spans, timeline.Span{Track: tr, Name: n, Start: t0 + s, End: t0 + e, Depth: d, Frame: id})
		}
		add(1, 1, 0, 5000, 0)
		add(1, 2, 0, 2000, 1)
		add(1, 3, 2000, 4500, 1)
		add(2, 4, 5000, 9000, 0)
		add(2, 5, 5000, 5000+1000*scale/100, 1)
		add(2, 6, 7000, 9000, 1)
		add(2, 5, 9000, 9000, 2) // zero-length, nested in main by Depth
		add(3, 7, 6000, 8000, 0)
		add(4, 1, 0, 9000, 0)
	}
	return t
}

func TestBuild(t *testing.T) {
	tr := trace(3, 100)
	p := Build(tr)
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	gpu, cpu := Totals(tr)
	if gpu != 3*(4000+2000) || cpu != 3*5000 {
		t.Fatalf("Totals = %d, %d", gpu, cpu)
	}
	// Self time per stack, summed over frames.
	want := map[string][2]int64{
		"frame;main thread":         {0, 3 * 500},
		"update;frame;main thread":  {0, 3 * 2000},
		"render;frame;main thread":  {0, 3 * 2500},
		"gpu frame;graphics":        {3 * 1000, 0},
		"shadow;gpu frame;graphics": {3 * 1000, 0},
		"main;gpu frame;graphics":   {3 * 2000, 0},
		"compute;graphics":          {3 * 2000, 0},
	}
	got := map[string][2]int64{}
	var sumG, sumC int64
	for _, s := range p.Sample {
		k := ""
		for i, l := range s.Location {
			if i > 0 {
				k += ";"
			}
			k += l.Line[0].Function.Name
		}
		v := got[k]
		v[0] += s.Value[0]
		v[1] += s.Value[1]
		got[k] = v
		sumG += s.Value[0]
		sumC += s.Value[1]
		if s.NumLabel["frame"] == nil || s.Label["track"] == nil {
			t.Errorf("sample %s lacks labels: %v %v", k, s.Label, s.NumLabel)
		}
		if (s.Value[0] > 0) != (s.Label["queue"] != nil) {
			t.Errorf("sample %s: queue label %v", k, s.Label["queue"])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stacks:\ngot  %v\nwant %v", got, want)
	}
	if sumG != gpu || sumC != cpu {
		t.Errorf("profile totals %d, %d; trace %d, %d", sumG, sumC, gpu, cpu)
	}
}

// goTool runs `go tool pprof` with args and returns its output, skipping
// the test when there is no go command.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(gobin, append([]string{"tool", "pprof"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var totalRE = regexp.MustCompile(`of (\d+)ns total`)

func totalOf(t *testing.T, out string) int64 {
	t.Helper()
	m := totalRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total in pprof output:\n%s", out)
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

// TestGoToolPprof checks that `go tool pprof` reads the profile, that its
// totals are the trace's GPU and CPU time, and that -diff_base shows the
// zone that grew.
func TestGoToolPprof(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, tr *timeline.Trace) string {
		var buf bytes.Buffer
		if err := Write(&buf, tr); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, slower := trace(50, 100), trace(50, 150)
	bp, sp := write("base.pb.gz", base), write("slow.pb.gz", slower)
	gpu, cpu := Totals(base)
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", bp)); got != gpu {
		t.Errorf("gpu_time total %d, trace GPU time %d", got, gpu)
	}
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", "-sample_index=cpu_time", bp)); got != cpu {
		t.Errorf("cpu_time total %d, trace CPU time %d", got, cpu)
	}
	// In a diff the only change is shadow's 500 ns per frame.
	out := goTool(t, "-top", "-unit=ns", "-diff_base="+bp, sp)
	if !regexp.MustCompile(`(?m)^\s+25000ns .* shadow$`).MatchString(out) {
		t.Errorf("diff does not show shadow +25000ns:\n%s", out)
	}
	// What was dropped is in the comments.
	dropped := trace(2, 100)
	dropped.Drops = timeline.Drops{QueryLimit: 4, Evicted: 1, GPUSpans: 2, Untimed: 3}
	if out := goTool(t, "-comments", write("dropped.pb.gz", dropped)); !strings.Contains(out, "framescope dropped 10: query_limit 4,") || !strings.Contains(out, "gpu_spans 2,") || !strings.Contains(out, "untimed 3,") {
		t.Errorf("comments: %s", out)
	}
	// Labels are there to filter on.
	out = goTool(t, "-top", "-unit=ns", "-tagfocus=frame=1", bp)
	if m := regexp.MustCompile(`accounting for (\d+)ns`).FindStringSubmatch(out); m == nil || m[1] != strconv.FormatInt(gpu/50, 10) {
		t.Errorf("frame 1: want %d\n%s", gpu/50, out)
	}
}

func TestEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, &timeline.Trace{}); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 0 {
		t.Fatalf("%d samples from an empty trace", len(p.Sample))
	}
}

func ExampleBuild() {
	tr := &timeline.Trace{
		Names:  []string{"", "frame", "shadow"},
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "graphics"}},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 0, End: 1000},
			{Track: 1, Name: 2, Start: 100, End: 400, Depth: 1},
		},
	}
	for _, s := range Build(tr).Sample {
		fmt.Println(s.Location[0].Line[0].Function.Name, s.Value)
	}
	// Output:
	// shadow [300 0]
	// frame [700 0]
}
