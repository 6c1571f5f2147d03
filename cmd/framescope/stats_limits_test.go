package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// boundTrace is 10 frames of 10 ms on one thread and one queue, each
// ended at its submission (as the layer's -frame-every ends them): 7
// bound by the GPU (9 ms of work, waited for) and 3 by the CPU (1 ms of
// work, then 8 ms of the thread's own). The last, whose end the trace
// does not hold, is left out: 7 and 2 of 9.
func boundTrace() *timeline.Trace { return boundFrames(7, 9, 1) }

// boundFrames is boundTrace with gpuFrames of the 10 bound by the GPU,
// gpuMs and cpuMs of GPU work in the GPU- and CPU-bound ones.
func boundFrames(gpuFrames, gpuMs, cpuMs int64) *timeline.Trace {
	const ms = int64(1_000_000)
	t := &timeline.Trace{Names: []string{"", "vkQueueSubmit", "vkWaitForFences", "command buffer", "frame"}}
	t.Tracks = []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}, {ID: 2, Kind: timeline.TrackGPUQueue, Name: "q", Queue: timeline.Queue{Device: "synthetic", Flags: "graphics"}},
		{ID: 3, Kind: timeline.TrackFrames, Name: "Frames"}}
	for k := range int64(10) {
		at := k * 10 * ms
		gpu := gpuMs * ms
		if k >= gpuFrames {
			gpu = cpuMs * ms
		}
		t.Spans = append(t.Spans,
			timeline.Span{Track: 1, Name: 1, Start: at, End: at + ms/10, Frame: uint64(k + 1)},
			timeline.Span{Track: 1, Name: 2, Start: at + ms/10, End: at + ms/5 + gpu},
			timeline.Span{Track: 2, Name: 3, Start: at + ms/5, End: at + ms/5 + gpu, Frame: uint64(k + 1)})
		t.Flows = append(t.Flows, timeline.Flow{From: len(t.Spans) - 3, To: len(t.Spans) - 1})
		t.Frames = append(t.Frames, timeline.Frame{ID: uint64(k + 1), Start: at, End: at + ms/10})
		t.Spans = append(t.Spans, timeline.Span{Track: 3, Name: 4, Start: at, End: at + ms/10, Frame: uint64(k + 1)}) // the frame, as written
	}
	return t
}

// stats says what limits the frames: in JSON each verdict's share
// (summing to 1) and the busy shares' p50 and p95; in text one line.
func TestStatsSaysWhatLimitsFrames(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bound.pftrace", boundTrace(), formatPerfetto, false)
	code, out, errs := runCLI("stats", "--json", p)
	if code != 0 {
		t.Fatalf("stats --json: exit %d: %s", code, errs)
	}
	var r struct {
		Frames struct {
			LimitedBy map[string]float64 `json:"limited_by"`
			GPUBusy   *busyJSON          `json:"gpu_busy"`
			CPUBusy   *busyJSON          `json:"cpu_busy"`
		} `json:"frames"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	f := r.Frames
	sum := 0.0
	for _, s := range f.LimitedBy {
		sum += s
	}
	if f.LimitedBy["gpu"] != 7.0/9 || f.LimitedBy["cpu"] != 2.0/9 || math.Abs(sum-1) > 1e-9 || f.GPUBusy == nil || f.CPUBusy == nil ||
		f.GPUBusy.P50 != 0.9 || math.Abs(f.CPUBusy.P95-0.89) > 1e-6 {
		t.Errorf("frames: %+v, GPU busy %+v, CPU busy %+v", f.LimitedBy, f.GPUBusy, f.CPUBusy)
	}
	_, text, _ := runCLI("stats", p)
	if want := "what limits them: GPU-bound 78%, CPU-bound 22% (GPU busy p50 90%, p95 90%; CPU busy p50 "; !strings.Contains(text, want) {
		t.Errorf("stats does not say %q:\n%s", want, text)
	}
}

// A share under half a percent is some frames, not none: "<1%".
func TestLimitsLineSmallShare(t *testing.T) {
	line := limitsLine(limitsJSON{LimitedBy: map[string]float64{"gpu": 0.997, "cpu": 0.003}})
	if want := "GPU-bound 100%, CPU-bound <1%"; line != want {
		t.Errorf("line %q, want %q", line, want)
	}
}
