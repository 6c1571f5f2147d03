package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
	vk "github.com/vulkan-go/vulkan"
)

// recorded is what the example says it recorded, from its last line.
type recorded struct {
	frames, fif, zones, flows, render, simulate, dropped, misuse, arrowsLost, validation int
}

var fieldRE = regexp.MustCompile(`\b([a-z_.]+)=(\d+)\b`)

func parseSummary(t *testing.T, line string) recorded {
	t.Helper()
	var r recorded
	fields := map[string]*int{"frames": &r.frames, "frames_in_flight": &r.fif, "zones": &r.zones, "flows": &r.flows,
		"spans.render": &r.render, "spans.simulate": &r.simulate, "dropped": &r.dropped, "misuse": &r.misuse, "arrows_lost": &r.arrowsLost, "validation": &r.validation}
	seen := 0
	for _, m := range fieldRE.FindAllStringSubmatch(line, -1) {
		if p, ok := fields[m[1]]; ok {
			*p, _ = strconv.Atoi(m[2])
			seen++
		}
	}
	if seen != len(fields) {
		t.Fatalf("summary line %q: %d of its %d fields", line, seen, len(fields))
	}
	return r
}

// TestFlags checks that run refuses numbers of frames in flight the
// profiler does not take, naming the flag, before it touches Vulkan.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-frames-in-flight", "0"}, {"-frames-in-flight", "17"}, {"-frames", "0"}} {
		err := run(args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("run %q: %v; want an error naming %s", args, err, args[0])
		}
	}
}

// TestValidationCounts checks that the example's validation layer runs
// with its synchronization checks and that its messages are counted, so
// that TestWrap's "validation=0" means something: two fills of the same
// bytes without a barrier between them are a write-after-write hazard,
// which the layer must report, and close must then return an error.
func TestValidationCounts(t *testing.T) {
	a, err := newApp(true, 1)
	if errors.Is(err, errNoVulkan) && os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") != "1" {
		t.Skipf("no Vulkan or no validation layer: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := a.cmds[0]
	vk.ResetFences(a.dev, 1, a.fences)
	vk.BeginCommandBuffer(cmd, a.begin)
	a.fill(cmd, 0, 0, 1)
	a.fill(cmd, 0, 0, 2)
	vk.EndCommandBuffer(cmd)
	noGC(func() {
		vk.QueueSubmit(a.queue, 1, []vk.SubmitInfo{{SType: vk.StructureTypeSubmitInfo, CommandBufferCount: 1, PCommandBuffers: a.cmds}}, a.fences[0])
	})
	vk.DeviceWaitIdle(a.dev)
	if n := a.problems(); n == 0 {
		t.Errorf("the validation layer reported no hazard between two fills of the same bytes")
	}
	if err := a.close(); err == nil {
		t.Errorf("close: no error after the layer reported a hazard")
	}
}

// runExample runs the example in this process with the validation layer
// on. Without Vulkan it skips the test, and without the layer it runs
// without it (a GPU machine may lack it), unless FRAMESCOPE_REQUIRE_VULKAN=1
// (make test sets it): then either fails the test.
func runExample(t *testing.T, dir string, args ...string) recorded {
	t.Helper()
	return parseSummary(t, runWrap(t, dir, args...))
}

// runWrap runs the example with the validation layer (where there is
// one) and returns what it printed; a machine without Vulkan skips.
func runWrap(t *testing.T, dir string, args ...string) string {
	t.Helper()
	required := os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1"
	var out bytes.Buffer
	err := run(append([]string{"-validation", "-out", dir}, args...), &out)
	if errors.Is(err, errNoValidation) && !required {
		t.Logf("running without validation: %v", err)
		err = run(append([]string{"-out", dir}, args...), &out)
	}
	if errors.Is(err, errNoVulkan) {
		if required {
			t.Fatalf("FRAMESCOPE_REQUIRE_VULKAN=1: %v", err)
		}
		t.Skipf("no Vulkan (vulkan-go needs libvulkan.so, Debian's libvulkan-dev): %v", err)
	}
	if err != nil {
		t.Fatalf("run %q: %v\noutput: %s", args, err, out.String())
	}
	t.Logf("%s", bytes.TrimSpace(out.Bytes()))
	return out.String()
}

// TestWrap runs the example for every number of frames in flight and
// checks that its three outputs hold exactly what it recorded: every zone
// with its flow, every CPU span, every frame, nothing dropped, and every
// GPU zone between its frame's submit and the fence wait that found it
// done.
func TestWrap(t *testing.T) {
	for fif := 1; fif <= 16; fif++ {
		t.Run(fmt.Sprintf("fif=%d", fif), func(t *testing.T) {
			dir := t.TempDir()
			frames := 3*fif + 10
			r := runExample(t, dir, "-frames", strconv.Itoa(frames), "-frames-in-flight", strconv.Itoa(fif))
			if r.frames != frames || r.fif != fif || r.zones != 7*frames || r.flows != r.zones ||
				r.render != 4*frames+1 || r.simulate != 3*frames {
				t.Fatalf("the example recorded %+v; want %d frames of 7 zones, 4+3 spans", r, frames)
			}
			if r.validation != 0 || r.dropped != 0 || r.misuse != 0 || r.arrowsLost != 0 {
				t.Errorf("validation problems %d, dropped %d, misuse %d, arrows lost %d: want none", r.validation, r.dropped, r.misuse, r.arrowsLost)
			}
			checkChrome(t, filepath.Join(dir, "wrap.json"), r)
			checkPprof(t, filepath.Join(dir, "wrap.pb.gz"))
			checkPerfetto(t, filepath.Join(dir, "wrap.perfetto-trace"), r) // last: skips without a trace processor
		})
	}
}

// slice is a row of the trace processor's slice table.
type slice struct {
	id, parent, ts, dur, depth, frame, err int64
	name, track                            string
	gpu                                    bool // on a GPU queue track or one of its lanes
}

// checkPerfetto loads the Perfetto trace into Perfetto's trace processor
// (which must report no import error or data loss) and checks, in its
// tables: the GPU slices by depth (1 frame zone, 3 passes, 3 inner zones a
// frame), the CPU slices of each track, the frames, one flow from each
// frame's submit span to each of its zones, every zone between its submit
// and its fence wait, and no drop counter above 0.
func checkPerfetto(t *testing.T, path string, r recorded) {
	s := tpcheck.Check(t, path)
	var all []*slice
	byID := map[int64]*slice{}
	for _, m := range s.MustQuery(`select s.id, coalesce(s.parent_id, -1) as parent, s.ts, s.dur, s.depth, s.name,
		coalesce(extract_arg(s.arg_set_id, 'debug.frame'), 0) as frame, coalesce(extract_arg(s.arg_set_id, 'debug.err_ns'), 0) as err,
		t.name as track, coalesce(p.name = 'GPU' or pp.name = 'GPU', 0) as gpu
		from slice s join track t on s.track_id = t.id
		left join track p on t.parent_id = p.id left join track pp on p.parent_id = pp.id`) {
		sl := &slice{id: m["id"].(int64), parent: m["parent"].(int64), ts: m["ts"].(int64), dur: m["dur"].(int64),
			depth: m["depth"].(int64), frame: m["frame"].(int64), err: m["err"].(int64),
			name: m["name"].(string), track: m["track"].(string), gpu: m["gpu"].(int64) != 0}
		all = append(all, sl)
		byID[sl.id] = sl
	}
	root := func(sl *slice) *slice {
		for sl.parent >= 0 && byID[sl.parent] != nil {
			sl = byID[sl.parent]
		}
		return sl
	}
	// Counts, per kind of track; GPU zones by depth.
	var gpu []*slice
	count := map[string]int{}
	for _, sl := range all {
		switch {
		case sl.gpu:
			gpu = append(gpu, sl)
			count[fmt.Sprintf("gpu depth %d", sl.depth)]++
		default:
			count[sl.track]++
		}
	}
	want := map[string]int{"gpu depth 0": r.frames, "gpu depth 1": 3 * r.frames, "gpu depth 2": 3 * r.frames,
		"render": r.render, "simulate": r.simulate, "Frames": r.frames}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("perfetto: %d slices of %s, the example recorded %d", count[k], k, n)
		}
	}
	if len(gpu) != r.zones {
		t.Errorf("perfetto: %d GPU slices, the example recorded %d zones", len(gpu), r.zones)
	}
	// Flows: one from the submit span to each zone its command buffer
	// carried, in the same frame.
	flows := s.MustQuery(`select f.slice_out, f.slice_in from flow f`)
	if len(flows) != r.flows {
		t.Errorf("perfetto: %d flows, the example submitted %d zones", len(flows), r.flows)
	}
	linked := map[int64]bool{}
	for _, f := range flows {
		from, to := byID[f["slice_out"].(int64)], byID[f["slice_in"].(int64)]
		if from == nil || to == nil || from.name != "submit" || root(from).frame != root(to).frame || linked[to.id] {
			t.Errorf("perfetto: flow %v -> %v: want one from a frame's submit span to a zone of that frame", from, to)
			continue
		}
		linked[to.id] = true
	}
	// Every zone ran after its frame's submit began and finished before the
	// wait for its fence ended (FramesInFlight frames later, or the final
	// vkDeviceWaitIdle), within the clock model's error bound.
	submit, waited := map[int64]int64{}, map[int64]int64{}
	var idle int64
	for _, sl := range all {
		switch sl.name {
		case "submit":
			submit[root(sl).frame] = sl.ts
		case "wait fence":
			waited[root(sl).frame-int64(r.fif)] = sl.ts + sl.dur
		case "wait idle":
			idle = sl.ts + sl.dur
		}
	}
	late := 0
	for _, z := range gpu {
		f := root(z).frame
		sub, ok := submit[f]
		end, ok2 := waited[f]
		if !ok2 {
			end = idle
		}
		if !ok || f == 0 || z.ts+z.err < sub || z.ts+z.dur-z.err > end {
			if late++; late <= 5 {
				t.Errorf("perfetto: GPU zone %s of frame %d at [%d, %d] ±%d ns: not within submit %d .. fence wait end %d",
					z.name, f, z.ts, z.ts+z.dur, z.err, sub, end)
			}
		}
	}
	// Nothing dropped: no drop counter above 0.
	for _, m := range s.MustQuery(`select t.name, max(c.value) as v from counter c join counter_track t on c.track_id = t.id
		where t.name like 'framescope dropped%' group by t.name`) {
		if m["v"].(float64) != 0 {
			t.Errorf("perfetto: %s = %v", m["name"], m["v"])
		}
	}
}

// checkChrome reads the Chrome JSON trace back with export/chrome and
// checks its spans per track, flows, frames and drops.
func checkChrome(t *testing.T, path string, r recorded) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := chrome.Read(f)
	if err != nil {
		t.Fatalf("chrome: %v", err)
	}
	count := map[string]int{}
	for _, s := range tr.Spans {
		switch k := tr.Track(s.Track); k.Kind {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			count["gpu"]++
		default:
			count[k.Name]++
		}
	}
	want := map[string]int{"gpu": r.zones, "render": r.render, "simulate": r.simulate}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("chrome: %d spans on %s, the example recorded %d", count[k], k, n)
		}
	}
	if len(tr.Flows) != r.flows || len(tr.Frames) != r.frames || tr.Drops != (timeline.Drops{}) {
		t.Errorf("chrome: %d flows, %d frames, drops %+v; the example recorded %d, %d, none",
			len(tr.Flows), len(tr.Frames), tr.Drops, r.flows, r.frames)
	}
}

// checkPprof parses the pprof profile and checks that it holds GPU and CPU
// time.
func checkPprof(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	var gpu, cpu int64
	for _, s := range p.Sample {
		gpu += s.Value[0]
		cpu += s.Value[1]
	}
	if len(p.Sample) == 0 || gpu <= 0 || cpu <= 0 {
		t.Errorf("pprof: %d samples, gpu_time %d ns, cpu_time %d ns: want some of each", len(p.Sample), gpu, cpu)
	}
}
