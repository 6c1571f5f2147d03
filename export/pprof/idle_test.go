package pprof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
)

const ms = int64(1_000_000)

// TestIdle: Build gives each cause of the GPU's idle time in a frame a
// sample of its stack [cause, "GPU idle"], its gaps' time in gpu_time,
// labelled kind=idle and with its frame; the work samples are those of
// the trace without frames, which has no idle samples.
func TestIdle(t *testing.T) {
	tr := tracecases.Limits()
	p := Build(tr)
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var idle []string
	for _, s := range p.Sample {
		if !slices.Contains(s.Label[kindLabel], idleKind) {
			continue
		}
		idle = append(idle, fmt.Sprintf("%s;%s frame %v: %v", s.Location[0].Line[0].Function.Name, s.Location[1].Line[0].Function.Name, s.NumLabel["frame"], s.Value))
	}
	slices.Sort(idle)
	want := []string{
		"waiting for submit;GPU idle frame [1]: [9000000 0]",
		"waiting for submit;GPU idle frame [2]: [500000 0]",
		"waiting for submit;GPU idle frame [3]: [2200000 0]",
		"waiting on present;GPU idle frame [3]: [14800000 0]",
	}
	if !slices.Equal(idle, want) {
		t.Errorf("idle samples:\n%q\nwant\n%q", idle, want)
	}
	noFrames := tracecases.Limits()
	noFrames.Frames = nil
	before := Build(noFrames)
	if got, want := fmt.Sprint(stacks(workOnly(p))), fmt.Sprint(stacks(before)); got != want {
		t.Errorf("work samples:\n%s\nwant those without frames:\n%s", got, want)
	}
	if len(workOnly(before).Sample) != len(before.Sample) {
		t.Error("a trace without frames has idle samples")
	}
	var work int64
	for _, s := range workOnly(p).Sample {
		work += s.Value[0]
	}
	if gpu, _ := Totals(tr); work != gpu || gpu != 135*ms/10 {
		t.Errorf("work samples' gpu_time %d, Totals %d; want 13.5 ms", work, gpu)
	}
}

// TestGoToolPprofIdle: `go tool pprof -tagignore=kind=idle
// -relative_percentages` shows the GPU's work alone, its total the
// work's, and -tagfocus=kind=idle its idle time alone, as the package
// comment says.
func TestGoToolPprofIdle(t *testing.T) {
	tr := tracecases.Limits()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "idle.pb.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gpu, _ := Totals(tr)
	const idle = (9000 + 500 + 2200 + 14800) * 1000
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", p)); got != gpu+idle {
		t.Errorf("gpu_time total %d, want work %d and idle %d", got, gpu, idle)
	}
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", "-tagignore=kind=idle", "-relative_percentages", p)); got != gpu {
		t.Errorf("-tagignore=kind=idle: total %d, want the work's %d", got, gpu)
	}
	if got := totalOf(t, goTool(t, "-top", "-unit=ns", "-tagfocus=kind=idle", "-relative_percentages", p)); got != idle {
		t.Errorf("-tagfocus=kind=idle: total %d, want the idle time's %d", got, idle)
	}
}

// A nil trace is a profile of nothing, not a panic.
func TestWriteNil(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, nil); err != nil || buf.Len() == 0 {
		t.Errorf("Write of a nil trace: %d bytes, %v", buf.Len(), err)
	}
}
