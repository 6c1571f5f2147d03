package demo

import (
	"bytes"
	"encoding/json"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	"github.com/google/pprof/profile"
)

// testConfig is a short run on a device vktest opened (validation on; the
// test fails at cleanup on any validation message; skipped without Vulkan
// unless FRAMESCOPE_REQUIRE_VULKAN=1).
func testConfig(t *testing.T, frames int) Config {
	t.Helper()
	cfg := defaultConfig()
	cfg.dev = vktest.Open(t, vk.Config{})
	cfg.frames = frames
	cfg.out = t.TempDir()
	cfg.png = filepath.Join(cfg.out, "last.png")
	cfg.quiet = true
	return cfg
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// checkPNG: the centre shows the average of the triangle's vertex colors,
// the corners the clear color.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	at := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	if c, want := at(b.Dx()/2, b.Dy()/2), (color.RGBA{85, 85, 85, 255}); !near(c, want, 3) {
		t.Errorf("centre pixel %v, want the triangle's %v", c, want)
	}
	clear := color.RGBA{uint8(clearColor[0]*255 + 0.5), uint8(clearColor[1]*255 + 0.5), uint8(clearColor[2]*255 + 0.5), 255}
	for _, p := range [][2]int{{0, 0}, {b.Dx() - 1, 0}, {0, b.Dy() - 1}, {b.Dx() - 1, b.Dy() - 1}} {
		if c := at(p[0], p[1]); !near(c, clear, 1) {
			t.Errorf("corner %v is %v, want the clear color %v", p, c, clear)
		}
	}
}

// spanCounts counts a trace's spans by "kind/name".
func spanCounts(tr *timeline.Trace) map[string]int {
	kinds := map[timeline.TrackID]timeline.TrackKind{}
	for _, tk := range tr.Tracks {
		k := tk.Kind
		if k == timeline.TrackGPULane {
			k = timeline.TrackGPUQueue
		}
		kinds[tk.ID] = k
	}
	out := map[string]int{}
	for _, s := range tr.Spans {
		out[kinds[s.Track].String()+"/"+tr.Name(s.Name)]++
	}
	return out
}

// wantSpans is what a run of cfg writes, by "kind/name".
func wantSpans(cfg Config) map[string]int {
	n := cfg.frames
	w := map[string]int{
		"gpu-queue/frame": n, "gpu-queue/render pass": n, "gpu-queue/draw": n, "gpu-queue/copy": n,
		"frames/frame":        n,
		"cpu/vkWaitForFences": n, "cpu/collect": n, "cpu/update": n, "cpu/record": n, "cpu/submit": n,
	}
	if cfg.hasLoadZone() {
		w["gpu-queue/load"] = n
	}
	if cfg.zones > 0 {
		w["gpu-queue/zone"] = n * cfg.zones
	}
	return w
}

func sameCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d spans %q, want %d", what, got[k], k, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %d unexpected spans %q", what, v, k)
		}
	}
}

// TestRender renders a short run on lavapipe and checks the image, the
// summary, and the three files: our readers and Perfetto's trace
// processor must find every zone, span, flow and counter sample.
func TestRender(t *testing.T) {
	cfg := testConfig(t, 20)
	cfg.load, cfg.iterations, cfg.zones, cfg.rawZones = 2, 4, 3, 2
	cfg.json, cfg.quiet = true, false
	cfg.flushEvery = 6 // several batches: flows and counters must survive streaming
	var out bytes.Buffer
	s, err := run(cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, cfg.png)

	// The summary, as the measurement scripts parse it.
	var js map[string]any
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatalf("-json output: %v\n%s", err, out.String())
	}
	fg, _ := js["frame_gpu_ms"].(map[string]any)
	for _, k := range []string{"p50", "p95", "mean"} {
		if v, _ := fg[k].(float64); v <= 0 {
			t.Errorf("frame_gpu_ms.%s = %v, want > 0", k, fg[k])
		}
	}
	if js["device"] != cfg.dev.Caps.Name {
		t.Errorf("device %v, want %q", js["device"], cfg.dev.Caps.Name)
	}
	perFrame := 5 + cfg.zones // frame, pass, load, draw, copy and the extra zones
	if s.FrameGPU.N != cfg.frames || s.Zones != uint64(cfg.frames*perFrame) || s.ZonesDropped != 0 || s.SpansDropped != 0 {
		t.Errorf("summary: %d frame zones, %d zones, %d zones and %d spans dropped; want %d, %d, 0, 0",
			s.FrameGPU.N, s.Zones, s.ZonesDropped, s.SpansDropped, cfg.frames, cfg.frames*perFrame)
	}
	if s.RawPairs != uint64(cfg.frames*cfg.rawZones) || s.RawPairNs <= 0 {
		t.Errorf("raw pairs: %d, mean %.0f ns; want %d, > 0", s.RawPairs, s.RawPairNs, cfg.frames*cfg.rawZones)
	}
	if s.ValidationErrors+s.ValidationWarnings != 0 {
		t.Errorf("validation: %d warnings, %d errors", s.ValidationWarnings, s.ValidationErrors)
	}
	if s.FrameGPU.P50 > s.FrameGPU.P95 || s.FrameGPU.Min > s.FrameGPU.Mean || s.FrameGPU.Mean > s.FrameGPU.Max {
		t.Errorf("frame GPU stats out of order: %+v", s.FrameGPU)
	}

	pf := filepath.Join(cfg.out, perfettoFile)
	tr := readPerfetto(t, pf)
	if err := tr.Validate(); err != nil {
		t.Errorf("perfetto trace: %v", err)
	}
	want := wantSpans(cfg)
	sameCounts(t, "perfetto", spanCounts(tr), want)
	if got, want := len(tr.Flows), cfg.frames*perFrame; got != want {
		t.Errorf("perfetto: %d flows, want one from each submit to each zone it carried: %d", got, want)
	}
	checkFlows(t, tr)
	checkDepths(t, tr)
	checkCounter(t, tr, "draws", float64(1+cfg.load), cfg.frames)
	for _, name := range []string{"GPU time per frame", "CPU time per frame"} {
		if n := countSamples(tr, name); n != cfg.frames {
			t.Errorf("counter %q: %d samples, want one a frame: %d", name, n, cfg.frames)
		}
	}
	if len(tr.Frames) != cfg.frames {
		t.Errorf("%d frames, want %d", len(tr.Frames), cfg.frames)
	}

	jf := filepath.Join(cfg.out, chromeFile)
	ct := readChrome(t, jf)
	sameCounts(t, "chrome", spanCounts(ct), want)

	checkPprof(t, filepath.Join(cfg.out, pprofFile))

	// Perfetto's own trace processor: no import errors or data loss, and
	// the same slices and flows. The JSON's slices too.
	sess := tpcheck.Check(t, pf)
	tpSlices(t, sess, "perfetto", want)
	if r := sess.MustQuery("select count(*) as n from flow"); r[0]["n"] != int64(cfg.frames*perFrame) {
		t.Errorf("trace processor: %v flows, want %d", r[0]["n"], cfg.frames*perFrame)
	}
	tpSlices(t, tpcheck.Check(t, jf), "chrome", want)
}

// tpSlices compares the trace processor's slice counts by name with want
// (merged over track kinds: the frames track's "frame" slices join the
// GPU's).
func tpSlices(t *testing.T, s *tpcheck.Session, what string, want map[string]int) {
	t.Helper()
	byName := map[string]int{}
	for k, v := range want {
		_, name, _ := cutKind(k)
		byName[name] += v
	}
	got := map[string]int{}
	for _, r := range s.MustQuery("select name, count(*) as n from slice group by name") {
		name, _ := r["name"].(string)
		n, _ := r["n"].(int64)
		got[name] = int(n)
	}
	for name, v := range byName {
		if got[name] != v {
			t.Errorf("trace processor (%s): %d slices %q, want %d", what, got[name], name, v)
		}
	}
}

func cutKind(k string) (kind, name string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return "", k, false
}

func readPerfetto(t *testing.T, path string) *timeline.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := perfetto.Read(f)
	if err != nil {
		t.Fatalf("perfetto.Read: %v", err)
	}
	return tr
}

func readChrome(t *testing.T, path string) *timeline.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := chrome.Read(f)
	if err != nil {
		t.Fatalf("chrome.Read: %v", err)
	}
	return tr
}

// checkFlows: every flow goes from a CPU "submit" span to a GPU zone of
// the same frame that began after the submit did (within the clock
// model's error bound): the GPU cannot run work before it is submitted.
func checkFlows(t *testing.T, tr *timeline.Trace) {
	t.Helper()
	kind := map[timeline.TrackID]timeline.TrackKind{}
	for _, tk := range tr.Tracks {
		kind[tk.ID] = tk.Kind
	}
	bad := 0
	for _, f := range tr.Flows {
		from, to := tr.Spans[f.From], tr.Spans[f.To]
		switch {
		case kind[from.Track] != timeline.TrackCPU || tr.Name(from.Name) != "submit":
			t.Errorf("flow from %q on a %v track, want from a CPU submit", tr.Name(from.Name), kind[from.Track])
		case kind[to.Track] != timeline.TrackGPUQueue && kind[to.Track] != timeline.TrackGPULane:
			t.Errorf("flow to %q on a %v track, want to a GPU zone", tr.Name(to.Name), kind[to.Track])
		case from.Frame != to.Frame:
			t.Errorf("flow from frame %d to frame %d", from.Frame, to.Frame)
		case to.Start+int64(to.ErrNs) < from.Start:
			bad++
			if bad <= 3 {
				t.Errorf("zone %q of frame %d starts at %d ± %d, before its submit began at %d",
					tr.Name(to.Name), to.Frame, to.Start, to.ErrNs, from.Start)
			}
		}
	}
}

// checkDepths: GPU zones nest as recorded (frame > render pass > load >
// zone, render pass > draw, frame > copy) and CPU spans are outermost.
func checkDepths(t *testing.T, tr *timeline.Trace) {
	t.Helper()
	want := map[string]uint16{"frame": 0, "render pass": 1, "load": 2, "zone": 3, "draw": 2, "copy": 1,
		"vkWaitForFences": 0, "collect": 0, "update": 0, "record": 0, "submit": 0}
	kind := map[timeline.TrackID]timeline.TrackKind{}
	for _, tk := range tr.Tracks {
		kind[tk.ID] = tk.Kind
	}
	bad := 0
	for _, s := range tr.Spans {
		k := kind[s.Track]
		if k != timeline.TrackGPUQueue && k != timeline.TrackGPULane && k != timeline.TrackCPU {
			continue
		}
		if d, ok := want[tr.Name(s.Name)]; ok && d != s.Depth {
			if bad++; bad <= 5 {
				t.Errorf("%v span %q of frame %d at depth %d, want %d", k, tr.Name(s.Name), s.Frame, s.Depth, d)
			}
		}
	}
}

// checkCounter: the counter named name has n samples, all equal to v.
func checkCounter(t *testing.T, tr *timeline.Trace, name string, v float64, n int) {
	t.Helper()
	var id timeline.TrackID
	for _, tk := range tr.Tracks {
		if tk.Kind == timeline.TrackCounter && tk.Name == name {
			id = tk.ID
		}
	}
	if id == 0 {
		t.Fatalf("no counter track %q", name)
	}
	got := 0
	for _, s := range tr.Samples {
		if s.Track == id {
			got++
			if s.Value != v {
				t.Errorf("counter %q sample %v, want %v", name, s.Value, v)
			}
		}
	}
	if got != n {
		t.Errorf("counter %q: %d samples, want %d", name, got, n)
	}
}

// countSamples counts the samples of the counter track named name.
func countSamples(tr *timeline.Trace, name string) int {
	n := 0
	for _, s := range tr.Samples {
		if tk := tr.Track(s.Track); tk != nil && tk.Kind == timeline.TrackCounter && tk.Name == name {
			n++
		}
	}
	return n
}

// checkPprof: the profile parses and has GPU and CPU time.
func checkPprof(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("pprof: %v", err)
	}
	totals := make([]int64, len(p.SampleType))
	for _, s := range p.Sample {
		for i, v := range s.Value {
			totals[i] += v
		}
	}
	for i, st := range p.SampleType {
		if totals[i] <= 0 {
			t.Errorf("pprof: no %s", st.Type)
		}
	}
	if len(p.SampleType) != 2 {
		t.Errorf("pprof sample types %v, want gpu_time and cpu_time", p.SampleType)
	}
}

// TestStages runs a few frames with each stage pair -stages offers by
// default: every zone is read back, nothing is dropped, and validation
// stays quiet.
func TestStages(t *testing.T) {
	for _, st := range []string{"top-bottom", "top-top", "bottom-bottom", "all-all"} {
		t.Run(st, func(t *testing.T) {
			cfg := testConfig(t, 6)
			var err error
			if cfg.stages, err = parseStages(st); err != nil {
				t.Fatal(err)
			}
			cfg.zones, cfg.rawZones, cfg.load, cfg.iterations = 2, 2, 1, 1
			s, err := run(cfg, new(bytes.Buffer))
			if err != nil {
				t.Fatal(err)
			}
			if want := uint64(cfg.frames * (5 + cfg.zones)); s.Zones != want || s.ZonesDropped != 0 {
				t.Errorf("%d zones read back, %d dropped; want %d, 0", s.Zones, s.ZonesDropped, want)
			}
			if s.GPULanes != 0 {
				t.Errorf("%d extra GPU lanes: zones recorded nested did not nest under %s", s.GPULanes, st)
			}
			if s.Stages != st {
				t.Errorf("summary says stages %q, want %q", s.Stages, st)
			}
			checkPNG(t, cfg.png)
		})
	}
}

// TestMoreZonesThanQueries: zones over the per-frame query budget are
// dropped and counted, in the summary and in the trace, and the frame
// still renders and reads back.
func TestMoreZonesThanQueries(t *testing.T) {
	cfg := testConfig(t, 5)
	cfg.zones, cfg.queries = 100, 64
	s, err := run(cfg, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	// 32 zones fit in 64 queries: frame, render pass, load and 29 zones.
	perFrame := 5 + cfg.zones
	kept := cfg.queries / 2
	if want := uint64(cfg.frames * (perFrame - kept)); s.ZonesDropped != want || s.Zones != uint64(cfg.frames*kept) {
		t.Errorf("%d zones read back, %d dropped; want %d, %d", s.Zones, s.ZonesDropped, cfg.frames*kept, want)
	}
	tr := readPerfetto(t, filepath.Join(cfg.out, perfettoFile))
	if tr.Drops.QueryLimit != s.ZonesDropped {
		t.Errorf("trace says %d zones dropped, summary %d", tr.Drops.QueryLimit, s.ZonesDropped)
	}
	checkPNG(t, cfg.png)
}

// TestRunOwnDevice runs the way main does: run opens the device itself,
// with the validation layer, and prints the text summary.
func TestRunOwnDevice(t *testing.T) {
	cfg := defaultConfig()
	cfg.frames, cfg.size, cfg.validation = 5, 32, true
	cfg.out = t.TempDir()
	var out bytes.Buffer
	s, err := run(cfg, &out)
	if err != nil {
		if vktest.Required() {
			t.Fatal(err)
		}
		t.Skipf("no Vulkan device: %v", err)
	}
	if s.ValidationErrors+s.ValidationWarnings != 0 {
		t.Errorf("validation: %d warnings, %d errors", s.ValidationWarnings, s.ValidationErrors)
	}
	text := out.String()
	for _, want := range []string{s.Device, "GPU frame", "ui.perfetto.dev", perfettoFile, chromeFile, pprofFile} {
		if !strings.Contains(text, want) {
			t.Errorf("summary does not mention %q:\n%s", want, text)
		}
	}
	for _, f := range s.Files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v, %v", f, st, err)
		}
	}
}

// TestNoCalibratedTimestamps: on a device without calibrated timestamps
// the loop samples the clocks itself (submit-and-wait, in "calibrate"
// spans), and every zone still lands on the host timeline.
func TestNoCalibratedTimestamps(t *testing.T) {
	cfg := defaultConfig()
	cfg.dev = vktest.Open(t, vk.Config{NoCalibrated: true})
	cfg.frames, cfg.out, cfg.quiet = 8, t.TempDir(), true
	s, err := run(cfg, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if s.Calibrated != "" {
		t.Fatalf("calibrated timestamps %q in use; want none", s.Calibrated)
	}
	if want := uint64(cfg.frames * 4); s.Zones != want || s.ZonesDropped != 0 {
		t.Errorf("%d zones, %d dropped (unconverted included); want %d, 0", s.Zones, s.ZonesDropped, want)
	}
	tr := readPerfetto(t, filepath.Join(cfg.out, perfettoFile))
	if n := spanCounts(tr)["cpu/calibrate"]; n < 2 {
		t.Errorf("%d calibrate spans, want one before the first frame and one at the end at least", n)
	}
	if got := spanCounts(tr)["gpu-queue/frame"]; got != cfg.frames {
		t.Errorf("%d GPU frame zones in the trace, want %d", got, cfg.frames)
	}
}

// TestWarmup: the first -warmup frames are in the trace but not in the
// summary's statistics.
func TestWarmup(t *testing.T) {
	cfg := testConfig(t, 10)
	cfg.warmup = 4
	s, err := run(cfg, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.frames - cfg.warmup; s.FrameGPU.N != n || s.Record.N != n || s.FrameCPU.N != n {
		t.Errorf("statistics over %d GPU, %d record, %d CPU frames; want %d each", s.FrameGPU.N, s.Record.N, s.FrameCPU.N, n)
	}
	if s.Zones != uint64(4*cfg.frames) {
		t.Errorf("%d zones read back, want all %d", s.Zones, 4*cfg.frames)
	}
}

// TestCmdGPU: -cmdgpu times every command buffer as a whole with raw
// timestamps, whichever way the raw queries are reset: one sample per frame
// after the warm-up, each at least as long as the "frame" zone it
// contains, and validation stays quiet.
func TestCmdGPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		vc   vk.Config
	}{
		{"host reset", vk.Config{}},
		{"command reset", vk.Config{NoHostQueryReset: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, 12)
			cfg.dev = vktest.Open(t, tc.vc)
			if cfg.dev.HostQueryReset == tc.vc.NoHostQueryReset {
				t.Fatalf("hostQueryReset %v with NoHostQueryReset %v", cfg.dev.HostQueryReset, tc.vc.NoHostQueryReset)
			}
			cfg.cmdGPU, cfg.warmup, cfg.rawZones, cfg.load, cfg.iterations = true, 3, 2, 1, 1
			s, err := run(cfg, new(bytes.Buffer))
			if err != nil {
				t.Fatal(err)
			}
			n := cfg.frames - cfg.warmup
			if s.CmdGPU.N != n || s.FrameGPU.N != n {
				t.Fatalf("%d command buffer times, %d frame zones; want %d each", s.CmdGPU.N, s.FrameGPU.N, n)
			}
			// Each command buffer contains its frame zone, so its k-th
			// smallest time is at least the frame zones' k-th smallest.
			if s.CmdGPU.Min < s.FrameGPU.Min || s.CmdGPU.P50 < s.FrameGPU.P50 || s.CmdGPU.Max < s.FrameGPU.Max {
				t.Errorf("command buffers %+v shorter than the frame zones %+v", s.CmdGPU, s.FrameGPU)
			}
			if s.RawPairs != uint64(cfg.frames*cfg.rawZones) || s.Zones != uint64(cfg.frames*5) || s.ZonesDropped != 0 {
				t.Errorf("%d raw pairs, %d zones, %d dropped; want %d, %d, 0", s.RawPairs, s.Zones, s.ZonesDropped, cfg.frames*cfg.rawZones, cfg.frames*5)
			}
			checkPNG(t, cfg.png)
		})
	}
}
