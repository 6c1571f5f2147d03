package chrome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

const ms = int64(1_000_000)

// event is a written event, as far as these tests look.
type event struct {
	Ph   string
	Name string
	Tid  int64
	Ts   float64
	Dur  float64
	Args map[string]any
}

// writeEvents writes t with Write and returns its events.
func writeEvents(t *testing.T, tr *timeline.Trace) ([]event, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	var evs []event
	if err := json.Unmarshal(buf.Bytes(), &evs); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return evs, buf.Bytes()
}

// derivedSlices are the X events of the thread named name that carries
// the framescope_derived mark.
func derivedSlices(evs []event, name string) []event {
	named, marked := map[int64]bool{}, map[int64]bool{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args["name"] == name {
			named[e.Tid] = true
		}
		if e.Ph == "M" && e.Name == metaDerived && e.Args["series"] == nil {
			marked[e.Tid] = true
		}
	}
	var out []event
	for _, e := range evs {
		if e.Ph == "X" && named[e.Tid] && marked[e.Tid] {
			out = append(out, e)
		}
	}
	return out
}

// counterValues are the values of the 'C' events of a series.
func counterValues(evs []event, series string) []float64 {
	var out []float64
	for _, e := range evs {
		if e.Ph == "C" && e.Name == series {
			out = append(out, e.Args["value"].(float64))
		}
	}
	return out
}

// roundTrip checks that Read gives back tr from Write's output.
func roundTrip(t *testing.T, tr *timeline.Trace, out []byte) {
	t.Helper()
	got, err := Read(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	diffCanon(t, canon(got), canon(tr))
}

// TestLimitsWritten: Write gives each analysed frame a slice on "frame
// limits" named by its verdict, with its figures in its args, each gap a
// slice on "GPU idle" named by its cause, and the busy shares as
// counters; Read leaves all of them out, giving back the very trace.
func TestLimitsWritten(t *testing.T) {
	tr := tracecases.Limits()
	evs, out := writeEvents(t, tr)
	roundTrip(t, tr, out)
	r := limits.Of(tr)
	verdicts := derivedSlices(evs, limitsThread)
	var names []string
	for _, e := range verdicts {
		names = append(names, e.Name)
	}
	if want := []string{"CPU-bound", "GPU-bound", "presentation-bound"}; !slices.Equal(names, want) || len(r.Frames) != 3 {
		t.Fatalf("verdict slices %q (%d frames), want %q", names, len(r.Frames), want)
	}
	for i, e := range verdicts {
		f := r.Frames[i]
		d := float64(f.Dur())
		want := map[string]any{
			"frame": float64(f.ID), "gpu_busy": float64(f.GPUBusy) / d, "cpu_busy": float64(f.CPUBusy) / d, "thread": "main",
			"gpu_busy_ns": float64(f.GPUBusy), "gpu_err_ns": float64(f.GPUErrNs), "cpu_busy_ns": float64(f.CPUBusy),
			"cpu_wait_ns": float64(f.CPUWait), "present_wait_ns": float64(f.PresentWait), "latency_ns": float64(f.Latency),
		}
		if fmt.Sprint(e.Args) != fmt.Sprint(want) || e.Ts != float64(f.Start)/1e3 || e.Dur != float64(f.Dur())/1e3 {
			t.Errorf("frame %d: ts %v dur %v args %v\nwant ts %v dur %v args %v", f.ID, e.Ts, e.Dur, e.Args, float64(f.Start)/1e3, float64(f.Dur())/1e3, want)
		}
	}
	// Frame 1's figures, as the rules give them: 1 ms of 10 busy on the
	// GPU, 8.8 on the CPU, the first zone 0.2 ms after its submission.
	if a := verdicts[0].Args; a["gpu_busy"] != 0.1 || a["cpu_busy"] != 0.88 || a["latency_ns"] != float64(ms/5) {
		t.Errorf("frame 1's args %v: want gpu_busy 0.1, cpu_busy 0.88, latency_ns 200000", a)
	}
	var gaps []string
	for _, e := range derivedSlices(evs, idleThread) {
		gaps = append(gaps, fmt.Sprintf("%s [%g,%g) frame %v", e.Name, e.Ts, e.Ts+e.Dur, e.Args["frame"]))
	}
	want := []string{
		"waiting for submit [0,8200) frame 1", "waiting for submit [9200,10000) frame 1",
		"waiting for submit [10000,10300) frame 2", "waiting for submit [19800,20000) frame 2",
		"waiting for submit [20000,22200) frame 3", "waiting on present [25200,40000) frame 3",
	}
	if !slices.Equal(gaps, want) {
		t.Errorf("gap slices:\n%q\nwant\n%q", gaps, want)
	}
	if g, c := counterValues(evs, gpuBusyName), counterValues(evs, cpuBusyName); fmt.Sprint(g) != "[0.1 0.95 0.15]" || len(c) != 3 {
		t.Errorf("counters: GPU busy %v, CPU busy %v; want [0.1 0.95 0.15] and 3 values", g, c)
	}
}

// TestLimitsUserNames: a track of the trace named "frame limits" and a
// counter named "GPU busy" are the trace's, and come back; the derived
// counter takes another name, as two counters of one name are one to
// viewers.
func TestLimitsUserNames(t *testing.T) {
	tr := tracecases.Limits()
	tr.Tracks = append(tr.Tracks,
		timeline.Track{ID: 3, Kind: timeline.TrackCPU, Name: limitsThread, Order: 2},
		timeline.Track{ID: 4, Kind: timeline.TrackCounter, Name: gpuBusyName})
	tr.Names = append(tr.Names, "mine")
	tr.Spans = append(tr.Spans, timeline.Span{Track: 3, Name: timeline.NameID(len(tr.Names) - 1), Start: ms, End: 2 * ms})
	tr.Samples = []timeline.Sample{{Track: 4, Time: 0, Value: 42}, {Track: 4, Time: ms, Value: 7}}
	evs, out := writeEvents(t, tr)
	roundTrip(t, tr, out)
	if got := counterValues(evs, gpuBusyName); fmt.Sprint(got) != "[42 7]" {
		t.Errorf("the trace's own GPU busy counter: %v, want [42 7]", got)
	}
	if got := counterValues(evs, gpuBusyName+" [frame limits]"); len(got) != 3 {
		t.Errorf("the derived GPU busy counter: %v, want 3 values", got)
	}
	if got := derivedSlices(evs, limitsThread); len(got) != 3 {
		t.Errorf("%d verdict slices, want 3", len(got))
	}
}

// TestLimitsOverlap: frames that overlap give slices that do not: each
// verdict and each gap starts where the one before ended, and one left
// empty is not written.
func TestLimitsOverlap(t *testing.T) {
	tr := tracecases.Limits()
	// Frame 5 from 5 ms, inside frame 1, past frame 2's start; frame 6
	// wholly inside frame 3.
	tr.Frames = append(tr.Frames, timeline.Frame{ID: 5, Start: 5 * ms, End: 12 * ms}, timeline.Frame{ID: 6, Start: 30 * ms, End: 31 * ms})
	evs, out := writeEvents(t, tr)
	roundTrip(t, tr, out)
	for _, th := range []string{limitsThread, idleThread} {
		end := 0.0
		for _, e := range derivedSlices(evs, th) {
			if e.Ts < end || e.Dur <= 0 {
				t.Errorf("%s: slice %q [%g, %g) overlaps the one before, ending at %g, or is empty", th, e.Name, e.Ts, e.Ts+e.Dur, end)
			}
			end = e.Ts + e.Dur
		}
	}
	var frames []string
	for _, e := range derivedSlices(evs, limitsThread) {
		frames = append(frames, fmt.Sprintf("%v [%g,%g)", e.Args["frame"], e.Ts, e.Ts+e.Dur))
	}
	// Frame 1 ends at frame 5's start or its own end, the later; frame 5
	// at frame 2's start or its own end (12 ms). So 5 starts where 1
	// ended, 2 where 5 did, and 6, wholly inside 3, has no slice.
	if want := "[1 [0,10000) 5 [10000,12000) 2 [12000,20000) 3 [20000,40000)]"; fmt.Sprint(frames) != want {
		t.Errorf("verdict slices %v, want %s", frames, want)
	}
	if n := len(counterValues(evs, gpuBusyName)); n != 5 {
		t.Errorf("%d GPU busy values, want one for each of the 5 frames", n)
	}
}

// TestWriterNoLimits: the streamed Writer writes none of it, as it never
// has the whole trace.
func TestWriterNoLimits(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteBatch(tracecases.Limits()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(metaDerived)) {
		t.Error("the streamed Writer wrote derived events")
	}
}

// A nil trace is an error, not a panic.
func TestWriteNil(t *testing.T) {
	if err := Write(&bytes.Buffer{}, nil); err == nil {
		t.Error("Write of a nil trace: no error")
	}
}
