package live

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

func viewOf(t *testing.T, base string) (view, []byte) {
	t.Helper()
	code, b := get(t, base+"json")
	if code != 200 {
		t.Fatalf("json: %d %s", code, b)
	}
	var v view
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("json: %v", err)
	}
	return v, b
}

// The view's JSON gives each GPU zone of the selected frame its counts by
// statistic key, or why it has none; each zone of the window its counts'
// means; the window the statistics counted and the zones without counts
// by reason. A zone that counts nothing has none of these keys.
func TestViewWork(t *testing.T) {
	tr := tracecases.WorkTrace()
	base := serve(t, windowed(t, tr))
	v, _ := viewOf(t, base)
	if v.Selected != 1 || len(v.Zones) != len(tr.Spans) {
		t.Fatalf("selected %d, %d zones, want frame 1 and %d", v.Selected, len(v.Zones), len(tr.Spans))
	}
	want := []string{"input_assembly_vertices", "vertex_shader_invocations", "clipping_primitives",
		"fragment_shader_invocations", "compute_shader_invocations"}
	if !slices.Equal(v.WorkStats, want) {
		t.Errorf("work_stats %q, want %q", v.WorkStats, want)
	}
	reasons := map[string]int{}
	for _, m := range []timeline.WorkMissing{timeline.WorkRenderPass, timeline.WorkElsewhere, timeline.WorkSpent,
		timeline.WorkFrames, timeline.WorkUnavailable, timeline.WorkMisnested} {
		reasons[m.String()] = 1
	}
	if len(v.NoCounts) != len(reasons) {
		t.Errorf("no_counts %v, want %v", v.NoCounts, reasons)
	}
	for k, n := range reasons {
		if v.NoCounts[k] != n {
			t.Errorf("no_counts[%s] = %d, want %d", k, v.NoCounts[k], n)
		}
	}

	byName := map[string][]zoneView{}
	for _, z := range v.Zones {
		byName[z.Name] = append(byName[z.Name], z)
	}
	if f := byName["frame"]; len(f) != 1 || f[0].Work["fragment_shader_invocations"] != 3*4_194_304 ||
		f[0].Work["vertex_shader_invocations"] != 18 || len(f[0].Work) != 5 || f[0].NoCounts != "" {
		t.Errorf("frame: %+v", f)
	}
	if c := byName["cull"]; len(c) != 1 || c[0].Work["compute_shader_invocations"] != 1<<60+3 {
		t.Errorf("cull: %+v, want compute_shader_invocations %d exactly", c, uint64(1<<60+3))
	}
	if p := byName["post"]; len(p) != 1 || p[0].Work != nil || p[0].NoCounts != "" {
		t.Errorf("post (counts nothing): %+v", p)
	}
	var missing []string
	for _, z := range byName["draw"] {
		if z.Work != nil {
			t.Errorf("draw without counts has work %v", z.Work)
		}
		missing = append(missing, z.NoCounts)
	}
	slices.Sort(missing)
	if got := strings.Join(missing, ","); got != "elsewhere,frames,misnested,render_pass,spent,unavailable" {
		t.Errorf("draw's reasons: %s", got)
	}

	stats := map[string]zoneStats{}
	for _, s := range v.Stats {
		stats[s.Name] = s
	}
	if w := stats["gbuffer"].Work; w == nil || w.Counted != 1 || w.NoCounts != 0 || w.Mean["fragment_shader_invocations"] != 8_388_608 || len(w.Mean) != 5 {
		t.Errorf("gbuffer over the window: %+v", w)
	}
	if w := stats["draw"].Work; w == nil || w.Counted != 0 || w.NoCounts != 6 || len(w.Mean) != 0 {
		t.Errorf("draw over the window: %+v", w)
	}
	if w := stats["post"].Work; w != nil {
		t.Errorf("post (counts nothing) over the window: %+v", w)
	}
}

// A window without work gives the JSON it gave before zones had work: no
// work key anywhere.
func TestViewNoWork(t *testing.T) {
	base := serve(t, windowed(t, noWork(tracecases.WorkTrace())))
	v, b := viewOf(t, base)
	if len(v.Zones) == 0 || len(v.Stats) == 0 {
		t.Fatalf("empty view: %s", b)
	}
	for _, k := range []string{`"work":{`, `"work_stats"`, `"no_counts"`} { // "drops" has "work":0
		if bytes.Contains(b, []byte(k)) {
			t.Errorf("the JSON of a window without work has %s: %s", k, b)
		}
	}
}

// Work goes from the recorder through the poller's window to the view:
// the zones added with Work show it, those without do not.
func TestViewWorkRecorded(t *testing.T) {
	p := profiler.New(profiler.Options{})
	t.Cleanup(func() { p.Close() })
	rec, _ := reach.Profiler(p)
	q := rec.QueueTrack(timeline.Queue{Device: "sim", Flags: "graphics"})
	src := rec.GPUSource(q)
	draw, post := p.Name("draw"), p.Name("post")
	w := &timeline.Work{Stats: timeline.FragmentShaderInvocations | timeline.VertexShaderInvocations}
	w.Count[7], w.Count[2] = 640_000, 3
	spent := &timeline.Work{Stats: w.Stats, Missing: timeline.WorkSpent}
	for range 20 {
		f := p.BeginFrame()
		p.EndFrame()
		t0 := timeline.Now()
		rec.AddGPUSpans(q, []record.GPUSpan{
			{Name: draw, Start: t0, End: t0 + 1000, Frame: f, Work: w},
			{Name: draw, Start: t0 + 2000, End: t0 + 3000, Frame: f, Work: spent},
			{Name: post, Start: t0 + 4000, End: t0 + 5000, Frame: f},
		})
		src.Settle(f)
	}
	base := serve(t, Handler(p))
	v := waitView(t, base)
	var counted, none, plain int
	for _, z := range v.Zones {
		switch {
		case z.Name == "draw" && z.Work["fragment_shader_invocations"] == 640_000 && z.Work["vertex_shader_invocations"] == 3 && len(z.Work) == 2:
			counted++
		case z.Name == "draw" && z.NoCounts == "spent" && z.Work == nil:
			none++
		case z.Name == "post" && z.Work == nil && z.NoCounts == "":
			plain++
		default:
			t.Errorf("zone %+v", z)
		}
	}
	if counted != 1 || none != 1 || plain != 1 {
		t.Errorf("the frame's zones: %d counted, %d without counts, %d that count nothing; want one each", counted, none, plain)
	}
	for _, s := range v.Stats {
		if s.Name == "draw" && (s.Work == nil || s.Work.Counted != 20 || s.Work.NoCounts != 20 || s.Work.Mean["fragment_shader_invocations"] != 640_000) {
			t.Errorf("draw over the window: %+v", s.Work)
		}
		if s.Name == "post" && s.Work != nil {
			t.Errorf("post over the window: %+v", s.Work)
		}
	}
	if v.NoCounts["spent"] != 20 || len(v.NoCounts) != 1 {
		t.Errorf("no_counts %v, want spent 20", v.NoCounts)
	}
}

// pageDOM returns a function that renders the page at a base URL in
// headless Chromium and returns what it shows, without its script's
// text; it skips t where there is no Chromium.
func pageDOM(t *testing.T) func(base string) string {
	t.Helper()
	chromium := os.Getenv("FRAMESCOPE_CHROMIUM")
	if chromium == "" {
		var err error
		if chromium, err = exec.LookPath("chromium"); err != nil {
			t.Skip("chromium not found (set FRAMESCOPE_CHROMIUM)")
		}
	}
	dir := t.TempDir()
	return func(base string) string {
		args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "chromium"), "--window-size=1200,900",
			"--virtual-time-budget=3000", "--dump-dom", base}
		out, err := exec.Command(chromium, args...).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return regexp.MustCompile(`(?s)<script>.*</script>`).ReplaceAllString(string(out), "")
	}
}

// TestPageShowsWork renders the page in headless Chromium on a window
// with work and on one without: the zones table gets a "no counts"
// column and a column a statistic, the zones of the frame their counts
// (in full on hover) or why they have none, and the reasons are listed;
// none of it without work.
func TestPageShowsWork(t *testing.T) {
	dom := pageDOM(t)
	base := serve(t, windowed(t, tracecases.WorkTrace()))
	d := dom(base)
	if !strings.Contains(d, `<span id="selected">1</span>`) {
		t.Fatalf("the page drew no frame:\n%s", d)
	}
	for _, want := range []string{
		// The zones over the window: the columns, draw's 6 without counts,
		// gbuffer's mean of fragment shader invocations.
		`<th title="zones without counts">no counts</th>`,
		`<th title="fragment_shader_invocations, mean per zone counted">FS inv</th>`,
		`<th title="compute_shader_invocations, mean per zone counted">CS inv</th>`,
		`<td class="l">draw</td><td>gpu</td><td>6</td>`,
		`<td>8.39M</td>`,
		// The zones of the frame: counts shortly, in full on hover; the
		// reason of each without.
		`FS inv 12.6M`,
		"fragment_shader_invocations 12582912",
		"compute_shader_invocations 115292150460684", // 2^60+3 as a JavaScript number prints it, to 53 bits
		`CS inv 1.15E`,
		`no counts (render_pass)`,
		`no counts (misnested)`,
		`no counts in the window: elsewhere 1, frames 1, misnested 1, render_pass 1, spent 1, unavailable 1`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the page lacks %q:\n%s", want, d)
		}
	}
	if m := regexp.MustCompile(`<td class="l">post</td>(<td>[^<]*</td>)*</tr>`).FindString(d); m == "" || strings.Count(m, "<td>") != 5+1+5 {
		t.Errorf("post (counts nothing) is not a row of empty work cells: %q", m)
	}

	base = serve(t, windowed(t, noWork(tracecases.WorkTrace())))
	d = dom(base)
	if !strings.Contains(d, `<span id="selected">1</span>`) || !strings.Contains(d, `<td class="l">draw</td>`) {
		t.Fatalf("the page drew no frame:\n%s", d)
	}
	for _, bad := range []string{"no counts", "FS inv", `class="w`} {
		if strings.Contains(d, bad) {
			t.Errorf("the page of a window without work shows %q", bad)
		}
	}
	if !strings.Contains(d, `<th>max ms</th></tr></thead>`) {
		t.Errorf("the zones table of a window without work has more columns than before")
	}
}
