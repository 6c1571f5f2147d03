// Package layer holds the tests of Framescope's Vulkan layer (layer/shim,
// the C half; layer/lib, the Go half) on unmodified programs.
package layer

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/loopcheck"
	"github.com/framescope/framescope/internal/testkit/quiet"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// built builds the layer as `make layer` does, once per test binary, and
// returns its directory (the framescope command beside it).
//
// $FRAMESCOPE_LAYER_BUILT names one built elsewhere, with the test
// programs (lifecycle, drawn) beside it: the GPU machine has no compiler.
func built(t *testing.T) string {
	t.Helper()
	quiet.Hold(t) // the layer's tests load the machine: not beside the performance gate
	if dir := os.Getenv("FRAMESCOPE_LAYER_BUILT"); dir != "" {
		return dir
	}
	for _, tool := range []string{"gcc", "xvfb-run"} {
		need(t, tool)
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "framescope-layer-")
		if buildErr != nil {
			return
		}
		root, err := filepath.Abs("..")
		if err != nil {
			buildErr = err
			return
		}
		shim, _ := filepath.Glob(filepath.Join(root, "layer", "shim", "*.c"))
		steps := [][]string{
			append(append([]string{"gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O2", "-flto", "-fPIC", "-shared", "-fvisibility=hidden", "-Iprofiler",
				"-o", filepath.Join(buildDir, "libVkLayer_framescope.so")}, shim...), "-ldl", "-lpthread"),
			{"go", "build", "-buildmode=c-shared", "-o", filepath.Join(buildDir, "libframescope_go.so"), "./layer/lib"},
			{"go", "build", "-o", filepath.Join(buildDir, "framescope"), "./cmd/framescope"},
			{"cp", filepath.Join(root, "layer", "VkLayer_framescope.json"), buildDir},
		}
		for _, s := range steps {
			cmd := exec.Command(s[0], s[1:]...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("building the layer: %v", buildErr)
	}
	return buildDir
}

// need skips the test without tool, or fails it where make test set
// FRAMESCOPE_REQUIRE_VULKAN=1 (its set-up installs them all).
func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if vktest.Required() {
			t.Fatalf("%s is missing (FRAMESCOPE_REQUIRE_VULKAN=1): scripts/deps.sh installs it", tool)
		}
		t.Skipf("%s is missing: scripts/deps.sh installs it", tool)
	}
}

// validationMessage is a line vkcube's --validate messenger prints for a
// message of the validation layer.
var validationMessage = regexp.MustCompile(`(?m)^.*: VALIDATION - .*$`)

// Debian's vkcube and vkcubepp, unmodified, under the layer with `framescope
// run`, 300 frames on lavapipe in Xvfb, the validation layer below the
// layer (framescope run names its own first), so that it also sees every
// call the profiler makes, which go down the chain, with
// synchronization validation: the program ends well, the validation layer
// says nothing, and Perfetto's trace processor loads the trace without
// error and finds 300 frames, a GPU zone per render pass per frame, each
// also a gpu_slice, a CPU span for each submit and present, an arrow from
// a submit to each zone; the books balance.
func TestVkcubeUnderLayer(t *testing.T) {
	dir := built(t)
	for _, prog := range []string{"vkcube", "vkcubepp"} {
		t.Run(prog, func(t *testing.T) {
			need(t, prog)
			out := filepath.Join(t.TempDir(), prog+".perfetto-trace")
			cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", out, "--", "xvfb-run", "-a", prog, "--c", "300", "--validate")
			cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
				"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("framescope run: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			if m := validationMessage.FindAllString(stdout.String()+stderr.String(), 5); len(m) > 0 || strings.Contains(stdout.String()+stderr.String(), "VUID-") {
				t.Errorf("the validation layer spoke:\n%s", strings.Join(m, "\n"))
			}
			t.Logf("framescope run's summary:\n%s", stderr.String())
			checkCube(t, out)
		})
	}
}

func checkCube(t *testing.T, path string) {
	t.Helper()
	tr := readTrace(t, path)
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	if tr.Ledger.Zones.Issued == 0 {
		t.Errorf("no zones in the books: %+v", tr.Ledger)
	}

	s := tpcheck.Load(t, path)
	if r := s.MustQuery(`select name, value from stats where value > 0 and (severity in ('error', 'data_loss')
		or name like 'flow%' or name like '%interned%' or name like 'track_event%' or name like 'clock_sync_failure%')`); len(r) > 0 {
		t.Errorf("the trace processor counted problems: %v", r)
	}
	count := func(sql string) int64 {
		t.Helper()
		r := s.MustQuery(sql)
		if len(r) != 1 {
			t.Fatalf("%s: %v", sql, r)
		}
		return r[0]["n"].(int64)
	}
	frames := count(`select count(*) as n from slice s join track t on s.track_id = t.id where t.name = 'Frames'`)
	zones := count(`select count(*) as n from slice where name = 'render pass' and category = 'gpu'`)
	framesWithOne := count(`select count(*) as n from (select f.id from slice f join track t on f.track_id = t.id
		join slice z on z.name = 'render pass' and z.category = 'gpu' and z.ts >= f.ts and z.ts < f.ts + f.dur
		where t.name = 'Frames' group by f.id having count(*) = 1)`)
	gpuSlices := count(`select count(*) as n from gpu_slice where name = 'render pass'`)
	submits := count(`select count(*) as n from slice where name = 'vkQueueSubmit'`)
	presents := count(`select count(*) as n from slice where name = 'vkQueuePresentKHR'`)
	arrows := count(`select count(*) as n from flow fl join slice z on fl.slice_in = z.id
		join slice c on fl.slice_out = c.id where z.name = 'render pass' and c.name = 'vkQueueSubmit'`)
	t.Logf("frames %d, render pass zones %d (alone in their frame: %d), gpu_slices %d, submits %d, presents %d, arrows %d",
		frames, zones, framesWithOne, gpuSlices, submits, presents, arrows)
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"frames", frames, 300},
		{"render pass zones", zones, 300},
		{"gpu_slices of them", gpuSlices, zones},
		{"presents", presents, 300},
		{"arrows from a submit to a zone", arrows, zones},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if submits < 300 {
		t.Errorf("%d submits, want at least 300", submits)
	}
}

// A Go program under the layer: its Go runtime cannot share the process
// with the layer's, so the layer says so and passes every call through;
// the program runs to its end as without it (here the demo, which
// profiles itself with the library), and no trace is written.
func TestGoProgramUnderLayer(t *testing.T) {
	dir := built(t)
	demo := filepath.Join(t.TempDir(), "triangle")
	if out, err := exec.Command("go", "build", "-o", demo, "../examples/triangle").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	trace := filepath.Join(t.TempDir(), "demo.perfetto-trace")
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", trace, "--", demo, "-frames", "30", "-quiet", "-out", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the demo under the layer: %v\n%s", err, out)
	}
	for _, want := range []string{"framescope layer: triangle is a Go program", "framescope run: no trace"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(trace); err == nil {
		t.Errorf("%s was written", trace)
	}
}

// vkcube killed with SIGKILL mid-run: the trace the layer streamed reads
// back, with Framescope's reader and Perfetto's, up to its last flush
// (every 60 frames).
func TestKilledUnderLayer(t *testing.T) {
	dir := built(t)
	need(t, "vkcube")
	need(t, "pkill")
	trace := filepath.Join(t.TempDir(), "killed.perfetto-trace")
	const frames = "987654" // a count no other vkcube here runs, to find this one
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", trace, "--", "xvfb-run", "-a", "vkcube", "--c", frames)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := os.Stat(trace); err == nil && st.Size() > 64<<10 {
			break // some flushes in
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no trace grew within 60 s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := exec.Command("pkill", "-KILL", "-f", "^vkcube --c "+frames).Run(); err != nil {
		t.Fatalf("pkill: %v", err)
	}
	if err := cmd.Wait(); err == nil {
		t.Errorf("framescope run exited 0 for a program killed:\n%s", out.String())
	}
	tr := readTrace(t, trace)
	zones := 0
	for _, s := range tr.Spans {
		if tr.Name(s.Name) == "render pass" {
			zones++
		}
	}
	t.Logf("%d frames, %d render pass zones; framescope run said:\n%s", len(tr.Frames), zones, out.String())
	if len(tr.Frames) < 60 || zones < 60 {
		t.Errorf("%d frames and %d zones read back, want 60 or more of each", len(tr.Frames), zones)
	}
	s := tpcheck.Load(t, trace)
	if r := s.MustQuery(`select name, value from stats where value > 0 and severity in ('error', 'data_loss')`); len(r) > 0 {
		t.Errorf("the trace processor counted problems: %v", r)
	}
}

// A C program's ways with its objects, under the layer (testdata/
// lifecycle.c, a frame a submission): instance and device destroyed and
// made again, two devices alive at once, an exit without destroying
// anything, a Vulkan 1.0 instance. Every labelled region of every
// submission is a zone, nested as labelled, on one track per device (one
// made again continues its track), and the books balance.
func TestLifecycleUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	const n = 20
	for _, c := range []struct {
		mode          string
		uses, devices int
	}{{"recreate", 2, 1}, {"two", 2, 2}, {"nodestroy", 1, 1}, {"v10", 1, 1}} {
		t.Run(c.mode, func(t *testing.T) {
			tr, out := runLifecycle(t, dir, prog, c.mode, n)
			checkLifecycle(t, tr, c.uses*n, c.devices)
			if t.Failed() {
				t.Logf("framescope run said:\n%s", out)
			}
		})
	}
}

// lifecycleDepth is where lifecycle's zones nest: its labels inside the
// zone of the command buffer they are recorded in.
var lifecycleDepth = map[string]uint16{"command buffer": 0, "outer": 1, "inner a": 2, "inner b": 2,
	"secondary command buffer": 2, "cached": 3, "render pass": 2}

func checkLifecycle(t *testing.T, tr *timeline.Trace, submits, devices int) {
	t.Helper()
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	if d := tr.Drops.Total(); d != 0 {
		t.Errorf("dropped %d: %+v", d, tr.Drops)
	}
	byName := map[string]int{}
	tracks := map[timeline.TrackID]bool{}
	for i, s := range tr.Spans {
		k := tr.Track(s.Track)
		if k == nil || k.Kind != timeline.TrackGPUQueue {
			continue
		}
		name := tr.Name(s.Name)
		byName[name]++
		tracks[s.Track] = true
		if want := lifecycleDepth[name]; s.Depth != want {
			t.Errorf("zone %d %q at depth %d, want %d", i, name, s.Depth, want)
		}
	}
	for _, name := range []string{"command buffer", "outer", "inner a", "inner b"} {
		if byName[name] != submits {
			t.Errorf("%d zones %q, want %d: %v", byName[name], name, submits, byName)
		}
	}
	if len(tracks) != devices {
		t.Errorf("zones on %d GPU tracks, want %d (one a device)", len(tracks), devices)
	}
	if len(tr.Frames) != submits {
		t.Errorf("%d frames, want %d (one a submission)", len(tr.Frames), submits)
	}
}

// lifecycle builds testdata/lifecycle.c (or takes it from beside a layer
// built elsewhere).
func lifecycle(t *testing.T) string {
	t.Helper()
	return program(t, "lifecycle", "-lpthread")
}

// program builds testdata/NAME.c, or takes NAME from beside a layer built
// elsewhere ($FRAMESCOPE_LAYER_BUILT).
func program(t *testing.T, name string, libs ...string) string {
	t.Helper()
	if dir := os.Getenv("FRAMESCOPE_LAYER_BUILT"); dir != "" {
		return filepath.Join(dir, name)
	}
	prog := filepath.Join(t.TempDir(), name)
	args := append([]string{"-std=gnu11", "-Wall", "-Werror", "-O2", "-o", prog, "testdata/" + name + ".c", "-lvulkan"}, libs...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return prog
}

// runLifecycle runs lifecycle's mode under the layer, a frame a
// submission, with the validation layer (synchronization included), and
// returns the trace and what was printed; the validation layer must say
// nothing. framescope run names the layer first, so the validation layer
// is below it and sees the profiler's calls as it sees the program's (a
// validation layer above sees the program's alone: the profiler calls
// down the chain).
func runLifecycle(t *testing.T, dir, prog, mode string, n int) (*timeline.Trace, []byte) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), mode+".perfetto-trace")
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-frame-every", "1", "-o", trace, "--", prog, mode, fmt.Sprint(n))
	cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"VK_ADD_LAYER_PATH="+validationDir(),
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("VUID")) || bytes.Contains(out, []byte("SYNC-")) || bytes.Contains(out, []byte("Validation Error")) {
		t.Errorf("the validation layer spoke:\n%s", out)
	}
	return readTrace(t, trace), out
}

// Secondary command buffers under the layer (lifecycle secondary): one
// recorded once and executed every submission is timed at every
// execution (its zone and its label's), nested in the primary's region
// within the error bounds (checkNesting);
// the zones of one that continues a render pass (its own and its
// label's) cannot be timed (a recording's query reset may not be
// recorded inside a render pass): they are refused and counted, once a
// recording, as no_frame, and nothing else is lost.
func TestSecondariesUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	const n = 20
	tr, out := runLifecycle(t, dir, prog, "secondary", n)
	byName := map[string]int{}
	for _, z := range loopcheck.GPUZones(tr) {
		name := tr.Name(z.Name)
		byName[name]++
		if msg := checkNesting(tr, z, lifecycleDepth[name], name == "secondary command buffer" || name == "cached"); msg != "" {
			t.Error(msg)
		}
	}
	want := map[string]int{"command buffer": n, "outer": n, "secondary command buffer": n, "cached": n, "render pass": n}
	if fmt.Sprint(byName) != fmt.Sprint(want) {
		t.Errorf("zones %v, want %v", byName, want)
	}
	if d := tr.Drops; d.NoFrame != 2*n || d.Total() != 2*n {
		t.Errorf("drops %+v, want no_frame %d alone", d, 2*n)
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v", k, tr.Ledger)
	}
	if t.Failed() {
		t.Logf("framescope run said:\n%s", out)
	}
}

// framescope run's flags reach the layer: -window keeps the last frames
// (a flight recorder written at exit) and -gpu-budget writes the frames
// over it beside the trace, 16 at most; a flag past its bound, or a
// budget without a window, is refused before the program starts.
func TestRunFlagsUnderLayer(t *testing.T) {
	dir := built(t)
	need(t, "vkcube")
	tmp := t.TempDir()
	trace := filepath.Join(tmp, "w.perfetto-trace")
	out, err := exec.Command(filepath.Join(dir, "framescope"), "run", "-window", "50", "-gpu-budget", "1ns", "-o", trace,
		"--", "xvfb-run", "-a", "vkcube", "--c", "200").CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run: %v\n%s", err, out)
	}
	tr := readTrace(t, trace)
	if len(tr.Frames) != 50 {
		t.Errorf("%d frames in the window's trace, want 50", len(tr.Frames))
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	// Every frame is over a budget of 1 ns, but the profiler passes a
	// frame over again only once the window has moved on or when it is
	// worse than the one last passed: how many, the run decides.
	overs, _ := filepath.Glob(filepath.Join(tmp, "w-over-*.perfetto-trace"))
	said := strings.Contains(string(out), "frames over budget; the first 16 written")
	if len(overs) == 0 || len(overs) > 16 || said && len(overs) != 16 {
		t.Errorf("%d traces of frames over budget, want 1 to 16, 16 when the rest were counted:\n%s", len(overs), out)
	}
	for _, o := range overs {
		if _, err := readTraceErr(o); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range [][]string{{"-gpu-budget", "1ms"}, {"-window", "65537"}, {"-frame-every", "1048577"}} {
		cmd := exec.Command(filepath.Join(dir, "framescope"), append(append([]string{"run"}, bad...), "--", "true")...)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), bad[0]) {
			t.Errorf("run %v: %v, want a refusal naming %s:\n%s", bad, err, bad[0], out)
		}
	}
}

// What the program renders is the same with the layer as without it: the
// checksum of what every frame of lifecycle's cost mode left in its
// buffer (16 labelled regions a frame, each filling 4 KiB with values of
// the frame and region), under the validation layer both times.
func TestRenderingUnchangedUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	sum := func(out []byte) string {
		m := regexp.MustCompile(`(?m)^checksum [0-9a-f]+$`).Find(out)
		if m == nil {
			t.Fatalf("no checksum in:\n%s", out)
		}
		return string(m)
	}
	env := append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
	plain := exec.Command(prog, "cost", "20", "16", "labels", "4")
	plain.Env = env
	without, err := plain.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, without)
	}
	layered := exec.Command(filepath.Join(dir, "framescope"), "run", "-frame-every", "1", "-o", filepath.Join(t.TempDir(), "c.perfetto-trace"),
		"--", prog, "cost", "20", "16", "labels", "4")
	layered.Env = env
	with, err := layered.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, with)
	}
	if a, b := sum(without), sum(with); a != b {
		t.Errorf("without the layer %s, with it %s", a, b)
	}
	for _, out := range [][]byte{without, with} {
		if bytes.Contains(out, []byte("VUID")) || bytes.Contains(out, []byte("SYNC-")) {
			t.Errorf("the validation layer spoke:\n%s", out)
		}
	}
}

// A label left open at its primary's end, which Vulkan lets a later
// command buffer of the queue end, and none ever does ("open"): it is
// carried, and counted unended at the end, once an execution; the zones
// around and beside it are delivered as they nest.
func TestSpanningLabelUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	const n = 20
	tr, out := runLifecycle(t, dir, prog, "open", n)
	byName := map[string]int{}
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track); k != nil && k.Kind == timeline.TrackGPUQueue {
			byName[tr.Name(s.Name)]++
		}
	}
	want := map[string]int{"command buffer": 2 * n, "first": n, "second": n}
	if fmt.Sprint(byName) != fmt.Sprint(want) {
		t.Errorf("zones %v, want %v", byName, want)
	}
	if d := tr.Drops; d.Unended != n || d.Total() != n {
		t.Errorf("drops %+v, want unended %d alone", d, n)
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v", k, tr.Ledger)
	}
	if t.Failed() {
		t.Logf("framescope run said:\n%s", out)
	}
}

// A label begun in one primary and ended in the next of the same
// submission ("span", as engines label a frame): it is timed, from its
// begin in the first to its end in the second, on a lane of the queue's
// track, and nothing is lost. lavapipe (Mesa 22.3) crashes on such a
// program without the layer: there the test is skipped.
func TestLabelAcrossCommandBuffersUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	const n = 20
	if out, err := exec.Command(prog, "span", "1").CombinedOutput(); err != nil {
		t.Skipf("the driver fails the program without the layer (%v): %s", err, out)
	}
	tr, out := runLifecycle(t, dir, prog, "span", n)
	byName := map[string]int{}
	byFrame := map[uint64]map[string]timeline.Span{}
	for _, s := range tr.Spans {
		k := tr.Track(s.Track)
		if k == nil || k.Kind != timeline.TrackGPUQueue && k.Kind != timeline.TrackGPULane {
			continue
		}
		name := tr.Name(s.Name)
		byName[name]++
		if name == "spans" && k.Kind != timeline.TrackGPULane {
			t.Errorf("the label across command buffers is on %q, not on a lane", k.Name)
		}
		if byFrame[s.Frame] == nil {
			byFrame[s.Frame] = map[string]timeline.Span{}
		}
		byFrame[s.Frame][name] = s
	}
	want := map[string]int{"command buffer": 2 * n, "first": n, "second": n, "spans": n}
	if fmt.Sprint(byName) != fmt.Sprint(want) {
		t.Errorf("zones %v, want %v", byName, want)
	}
	for f, z := range byFrame {
		sp, first, second := z["spans"], z["first"], z["second"]
		slack := int64(sp.ErrNs) + int64(max(first.ErrNs, second.ErrNs))
		if sp.Start+slack < first.End || sp.End > second.Start+slack {
			t.Errorf("frame %d: the label across [%d, %d] does not lie between the first's end %d and the second's start %d", f, sp.Start, sp.End, first.End, second.Start)
		}
	}
	if d := tr.Drops; d.Total() != 0 {
		t.Errorf("drops %+v, want none", d)
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v", k, tr.Ledger)
	}
	if t.Failed() {
		t.Logf("framescope run said:\n%s", out)
	}
}

// A program that exits while another of its threads records and submits
// (lifecycle exit): the layer closes the profiler at exit while that
// thread is inside its hooks, and the program still exits as it asked,
// with status 0, in each of 20 runs; the trace reads back.
//
// NVIDIA's driver crashes such a program without the layer (20 of 20 on
// an H100): where the program does, the test says so and skips.
func TestExitWhileRecordingUnderLayer(t *testing.T) {
	dir, prog := built(t), lifecycle(t)
	if out, err := exec.Command(prog, "exit", "20").CombinedOutput(); err != nil {
		t.Skipf("the program itself fails so, without the layer: %v\n%s", err, out)
	}
	for i := range 20 {
		trace := filepath.Join(t.TempDir(), "exit.perfetto-trace")
		out, err := exec.Command(filepath.Join(dir, "framescope"), "run", "-frame-every", "1", "-o", trace, "--", prog, "exit", fmt.Sprint(20+5*i)).CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if _, err := readTraceErr(trace); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}

var (
	drawnSeeds = flag.Int("layer.seeds", 12, "TestDrawnLoopsUnderLayer: how many seeds")
	drawnFirst = flag.Int("layer.first", 1, "TestDrawnLoopsUnderLayer: the first seed")
	drawnSeed  = flag.Int("layer.seed", 0, "TestDrawnLoopsUnderLayer: replay this seed only")
)

// Render loops in C drawn from seeds (testdata/drawn.c: frames, command
// buffers a frame, some recorded once, trees of nested labels, render
// passes, a secondary recorded once, submissions split or merged, command
// buffers freed and made again), each run under the layer with the
// validation layer, and held to the journal the program wrote: the
// validation layer says nothing; each zone name's count is what the GPU
// ran; each label's zone lies at the depth its name says; each zone lies
// within its frame's window on the host clock (before its first
// submission, after the wait for its last), within its error bound; the
// books balance, with nothing lost but the zones of a secondary recorded
// and never run (unsubmitted). A failing seed prints itself
// (-layer.seed=N replays it; -layer.seeds and -layer.first run more).
func TestDrawnLoopsUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "drawn")
	first, last := *drawnFirst, *drawnFirst+*drawnSeeds-1
	if *drawnSeed != 0 {
		first, last = *drawnSeed, *drawnSeed
	}
	var all drawnVerdicts
	for seed := first; seed <= last; seed++ {
		msg, v := drawnLoop(t, dir, prog, seed)
		if msg != "" {
			t.Fatalf("seed %d: %s (-layer.seed=%d replays it)", seed, msg, seed)
		}
		all.judged, all.matched = all.judged+v.judged, all.matched+v.matched
		for _, w := range v.wrong {
			all.wrong = append(all.wrong, fmt.Sprintf("seed %d (-layer.seed=%d replays it): %s", seed, seed, w))
		}
	}
	t.Logf("seeds %d to %d: every invariant held; %d of %d frames judged as drawn", first, last, all.matched, all.judged)
	if 100*all.matched < 95*all.judged {
		t.Errorf("%d of %d frames judged as drawn, want 95%%:\n%s", all.matched, all.judged, strings.Join(all.wrong, "\n"))
	}
}

// drawnVerdicts are the frames a drawn loop bound by the CPU or the GPU
// (each drawn frame's last, the layer's frame from its last submission
// to the next frame's first) judged as drawn, of those judged.
type drawnVerdicts struct {
	judged, matched int
	wrong           []string
}

// verdictsOf judges, for each window but the last, the layer's frame its
// end (after the last wait) lies in.
func verdictsOf(tr *timeline.Trace, j drawnJournal) drawnVerdicts {
	var v drawnVerdicts
	r := limits.Of(tr)
	for i, w := range j.windows {
		k := slices.IndexFunc(r.Frames, func(f limits.Frame) bool { return f.Start <= w[1] && w[1] < f.End })
		if k < 0 || i >= len(j.bounds) {
			continue
		}
		f, want := r.Frames[k], limits.CPU
		if j.bounds[i] == 'g' {
			want = limits.GPU
		}
		v.judged++
		if f.Limit == want {
			v.matched++
		} else {
			v.wrong = append(v.wrong, fmt.Sprintf("frame %d: %v, drawn %v (GPU busy %.2f, CPU busy %.2f of %v)", i, f.Limit, want,
				float64(f.GPUBusy)/float64(f.Dur()), float64(f.CPUBusy)/float64(f.Dur()), time.Duration(f.Dur())))
		}
	}
	return v
}

// drawnJournal is what drawn.c wrote of its run.
type drawnJournal struct {
	windows     [][2]int64 // each frame's, on CLOCK_MONOTONIC
	bounds      []byte     // each frame's: 'c' bound by the CPU, 'g' by the GPU
	zones       map[string]int
	unsubmitted uint64
}

func readDrawnJournal(path string) (drawnJournal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return drawnJournal{}, err
	}
	j := drawnJournal{zones: map[string]int{}}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "window":
			var w [2]int64
			fmt.Sscan(f[1], &w[0])
			fmt.Sscan(f[2], &w[1])
			j.windows = append(j.windows, w)
			j.bounds = append(j.bounds, f[3][0])
		case len(f) == 3 && f[0] == "zone":
			var n int
			fmt.Sscan(f[2], &n)
			if n > 0 {
				j.zones[strings.ReplaceAll(f[1], "-", " ")] = n
			}
		case len(f) == 2 && f[0] == "unsubmitted":
			fmt.Sscan(f[1], &j.unsubmitted)
		}
	}
	return j, nil
}

// drawnLoop runs one seed and returns what broke, or "", and how its
// frames were judged.
func drawnLoop(t *testing.T, dir, prog string, seed int) (string, drawnVerdicts) {
	msg, tr, j := drawnRun(t, dir, prog, seed)
	if msg != "" {
		return msg, drawnVerdicts{}
	}
	return "", verdictsOf(tr, j)
}

// drawnRun runs one seed and returns what broke, or "", with its trace
// and journal.
func drawnRun(t *testing.T, dir, prog string, seed int) (string, *timeline.Trace, drawnJournal) {
	tmp := t.TempDir()
	trace, journal := filepath.Join(tmp, "drawn.perfetto-trace"), filepath.Join(tmp, "journal")
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-frame-every", "1", "-o", trace, "--", prog, fmt.Sprint(seed), journal)
	cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"VK_ADD_LAYER_PATH="+validationDir(),
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
	out, err := cmd.CombinedOutput()
	var j drawnJournal
	if err != nil {
		return fmt.Sprintf("framescope run: %v\n%s", err, out), nil, j
	}
	if bytes.Contains(out, []byte("VUID")) || bytes.Contains(out, []byte("Validation Error")) {
		return fmt.Sprintf("the validation layer spoke:\n%s", out), nil, j
	}
	j, err = readDrawnJournal(journal)
	if err != nil {
		return err.Error(), nil, j
	}
	tr, err := readTraceErr(trace)
	if err != nil {
		return err.Error(), nil, j
	}
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		return fmt.Sprintf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops), nil, j
	}
	if d := tr.Drops; d.Unsubmitted != j.unsubmitted || d.Total() != j.unsubmitted {
		return fmt.Sprintf("drops %+v, want unsubmitted %d alone", d, j.unsubmitted), nil, j
	}
	got := map[string]int{}
	for _, s := range loopcheck.GPUZones(tr) {
		name := tr.Name(s.Name)
		got[name]++
		if want, ok := drawnDepth(name); ok {
			if msg := checkNesting(tr, s, want, name == "secondary command buffer" || name[0] == 'S'); msg != "" {
				return msg, nil, j
			}
		}
		if !inWindow(j.windows, s) {
			return fmt.Sprintf("a zone %q at [%d, %d] (error bound %d ns) lies in no frame's window", name, s.Start, s.End, s.ErrNs), nil, j
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(j.zones) {
		return fmt.Sprintf("zones by name %v, the program ran %v", got, j.zones), nil, j
	}
	return "", tr, j
}

// drawnDepth is the depth a zone's name says: a label "L3" or "S2" its
// number, a command buffer 0, a secondary 1; a render pass says none.
func drawnDepth(name string) (uint16, bool) {
	switch {
	case name == "command buffer":
		return 0, true
	case name == "secondary command buffer":
		return 1, true
	case len(name) == 2 && (name[0] == 'L' || name[0] == 'S') && name[1] >= '0' && name[1] <= '9':
		return uint16(name[1] - '0'), true
	}
	return 0, false
}

// inWindow reports whether s lies within one of the windows, with its
// error bound.
func inWindow(windows [][2]int64, s timeline.Span) bool {
	for _, w := range windows {
		if loopcheck.InWindow(s, w[0], w[1]) {
			return true
		}
	}
	return false
}

// validationDir is where the validation layer's manifest is: the
// system's, or where $VK_ADD_LAYER_PATH (the GPU machine's set-up) says.
func validationDir() string {
	if d := os.Getenv("VK_ADD_LAYER_PATH"); d != "" {
		return d
	}
	return "/usr/share/vulkan/explicit_layer.d"
}

// readTrace reads a trace the layer wrote, failing the test if it does
// not read back.
func readTrace(t *testing.T, path string) *timeline.Trace {
	t.Helper()
	tr, err := readTraceErr(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func readTraceErr(path string) (*timeline.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := perfetto.Read(f)
	if err != nil {
		return tr, fmt.Errorf("%s: %w", path, err) // tr: what a cut trace holds, if any
	}
	return tr, nil
}

// checkNesting is the checker's rule (loopcheck.Nesting), with the
// layer's command buffer zones as the primaries.
func checkNesting(tr *timeline.Trace, z timeline.Span, depth uint16, fromSecondary bool) string {
	var primaries []timeline.Span
	if fromSecondary {
		primaries = loopcheck.Primaries(tr, "command buffer")
	}
	return loopcheck.Nesting(tr, z, int(depth), fromSecondary, primaries)
}

// -draws: a zone for each draw (vkcube records one a frame, inside its
// render pass); without it, none.
func TestDrawsUnderLayer(t *testing.T) {
	dir := built(t)
	need(t, "vkcube")
	for _, draws := range []bool{false, true} {
		trace := filepath.Join(t.TempDir(), "d.perfetto-trace")
		out, err := exec.Command(filepath.Join(dir, "framescope"), "run", fmt.Sprintf("-draws=%t", draws), "-o", trace,
			"--", "xvfb-run", "-a", "vkcube", "--c", "50").CombinedOutput()
		if err != nil {
			t.Fatalf("framescope run: %v\n%s", err, out)
		}
		tr := readTrace(t, trace)
		byName := map[string]int{}
		for _, z := range loopcheck.GPUZones(tr) {
			byName[tr.Name(z.Name)]++
		}
		want := 0
		if draws {
			want = byName["render pass"]
		}
		if byName["draw"] != want || byName["render pass"] != 50 {
			t.Errorf("-draws=%t: zones %v, want %d draws and 50 render passes", draws, byName, want)
		}
	}
}

// VK_EXT_frame_boundary: a program that marks its frames' ends
// (testdata/boundary.c: 30 submissions, a frame end every 3, never a
// present) gets the extension from the layer where the driver lacks it,
// gets its chains back as it made them, and a frame per mark, with no
// -frame-every; the validation layer below the layer, which predates the
// extension, sees none of it and says nothing.
func TestFrameBoundaryUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "boundary")
	out, err := exec.Command(prog, "30", "3").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Logf("without the layer the driver offers the extension itself (%v):\n%s", err, out)
	}
	trace := filepath.Join(t.TempDir(), "boundary.perfetto-trace")
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", trace, "--", prog, "30", "3")
	cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"VK_ADD_LAYER_PATH="+validationDir(),
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("VUID")) || bytes.Contains(out, []byte("Validation")) {
		t.Errorf("the validation layer spoke:\n%s", out)
	}
	tr := readTrace(t, trace)
	if len(tr.Frames) != 10 {
		t.Errorf("%d frames, want 10 (one a frame end marked)", len(tr.Frames))
	}
	n := 0
	for _, z := range loopcheck.GPUZones(tr) {
		if tr.Name(z.Name) == "work" {
			n++
		}
	}
	if n != 30 || tr.Drops.Total() != 0 {
		t.Errorf("%d zones work, want 30; drops %+v", n, tr.Drops)
	}
}

// vulkaninfo (Debian's, unmodified) under the layer: it lists every
// device extension, VK_EXT_frame_boundary among them (the layer's offer),
// queries features through long chains, and submits nothing; it ends
// well, and its trace, with no zone, reads back, framescope run's summary
// included (the stream was an empty file, which the CLI refuses, before
// the recorder gave an idle sink one batch at Close).
func TestVulkaninfoUnderLayer(t *testing.T) {
	dir := built(t)
	need(t, "vulkaninfo")
	trace := filepath.Join(t.TempDir(), "vulkaninfo.perfetto-trace")
	out, err := exec.Command(filepath.Join(dir, "framescope"), "run", "-o", trace, "--", "vulkaninfo").CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("VK_EXT_frame_boundary")) {
		t.Errorf("vulkaninfo lists no VK_EXT_frame_boundary under the layer")
	}
	if !bytes.Contains(out, []byte("wrote       "+trace)) {
		t.Errorf("framescope run did not read its trace back:\n%s", out[max(0, len(out)-400):])
	}
	tr := readTrace(t, trace)
	if n := len(loopcheck.GPUZones(tr)); n != 0 || tr.Drops.Total() != 0 {
		t.Errorf("%d GPU zones, drops %+v: vulkaninfo records nothing", n, tr.Drops)
	}
}
