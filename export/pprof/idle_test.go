package pprof

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framescope/framescope/timeline"
)

const ms = int64(1_000_000)

// idleTrace is a trace of three frames whose GPU gaps are known, built
// as package limits' tests build theirs: a CPU thread (track 1) submits
// to a GPU queue (track 2), an arrow from each vkQueueSubmit to the zone
// it carried, and a fourth frame, the last, is left out.
//
//   - frame 1, [0, 10 ms): GPU work 8.2-9.2 ms, idle 9 ms waiting for submit;
//   - frame 2, [10, 20 ms): GPU work 10.3-19.8 ms, idle 0.5 ms waiting for submit;
//   - frame 3, [20, 40 ms): GPU work 22.2-25.2 ms, idle 2.2 ms waiting for
//     submit before it and 14.8 ms waiting on present after it.
func idleTrace() *timeline.Trace {
	t := &timeline.Trace{
		Names: []string{"", "update", "vkQueueSubmit", "vkWaitForFences", "vkQueuePresentKHR", "gpu frame", "shadow"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics", Queue: timeline.Queue{Device: "gpu0", Flags: "graphics"}},
		},
	}
	span := func(track timeline.TrackID, name timeline.NameID, s, e int64, d uint16, frame uint64) int {
		t.Spans = append(t.Spans, timeline.Span{Track: track, Name: name, Start: s, End: e, Depth: d, Frame: frame})
		return len(t.Spans) - 1
	}
	submit := func(frame uint64, at, gs, ge int64) {
		s := span(1, 2, at, at+ms/10, 0, frame)
		t.Flows = append(t.Flows, timeline.Flow{From: s, To: span(2, 5, gs, ge, 0, frame)})
		span(2, 6, gs, gs+(ge-gs)/2, 1, frame)
	}
	span(1, 1, 0, 8*ms, 0, 1)
	submit(1, 8*ms, 82*ms/10, 92*ms/10)
	span(1, 3, 81*ms/10, 93*ms/10, 0, 1)
	submit(2, 101*ms/10, 103*ms/10, 198*ms/10)
	span(1, 3, 102*ms/10, 199*ms/10, 0, 2)
	submit(3, 22*ms, 222*ms/10, 252*ms/10)
	span(1, 4, 253*ms/10, 40*ms, 0, 3)
	t.Frames = []timeline.Frame{{ID: 1, Start: 0, End: 10 * ms}, {ID: 2, Start: 10 * ms, End: 20 * ms},
		{ID: 3, Start: 20 * ms, End: 40 * ms}, {ID: 4, Start: 40 * ms, End: 41 * ms}}
	return t
}

// TestIdle: Build gives each cause of the GPU's idle time in a frame a
// sample of its stack [cause, "GPU idle"], its gaps' time in gpu_time,
// labelled kind=idle and with its frame; the work samples are those of
// the trace without frames, which has no idle samples.
func TestIdle(t *testing.T) {
	tr := idleTrace()
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
	noFrames := idleTrace()
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
	tr := idleTrace()
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
