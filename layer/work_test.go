package layer

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// `framescope run -work`: the layer enables pipeline statistics queries
// and every zone counts its work. tris draws N full-screen triangles a
// frame: every render pass zone has its counts, 3N vertices, and the
// validation layer says nothing; framescope diff finds two runs of N=2
// unchanged in their work, from one run a side, and N=4 regressed (exit
// 1), naming the render pass's vertices. vkcube and vkcubepp, unmodified:
// every render pass zone has its counts, 36 vertices (12 triangles), and
// framescope diff finds two runs' work unchanged, from one run a side. A
// primary that executes secondaries (lifecycle secondary) stays valid:
// its counts end before them, its zones open then have none
// (secondaries), and the secondaries' zones count.
func TestWorkUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "tris")
	shaders := filepath.Join("..", "internal", "cmd", "demo", "shaders")
	tmp := t.TempDir()
	run := func(name string, n int) string {
		t.Helper()
		trace := filepath.Join(tmp, name+".perfetto-trace")
		runWork(t, dir, trace, prog, filepath.Join(shaders, "load.vert.spv"), filepath.Join(shaders, "load.frag.spv"), fmt.Sprint(n), "30")
		return trace
	}
	base, same, twice := run("base", 2), run("same", 2), run("twice", 4)
	renderPassWork(t, readTrace(t, base), 30, 6)

	diff := func(a, b string) (int, string) {
		out, err := exec.Command(filepath.Join(dir, "framescope"), "diff", a, b).CombinedOutput()
		var x *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &x):
			return x.ExitCode(), string(out)
		}
		t.Fatalf("framescope diff: %v", err)
		return 0, ""
	}
	// The same triangles: the work unchanged. (The exit status says the
	// times too, which one run a side may call regressed on a loaded
	// machine: a call made once a run, 69 us against 861 us, once.)
	if code, out := diff(base, same); !strings.Contains(out, "; work: 0 regressed") || strings.Contains(out, "WORK REGRESSED") {
		t.Errorf("the same triangles: exit %d, the work not unchanged\n%s", code, out)
	}
	code, out := diff(base, twice)
	if code != 1 {
		t.Errorf("twice the triangles: exit %d, want 1 (regressed)\n%s", code, out)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if strings.Contains(line, "render pass") && strings.Contains(line, "input_assembly_vertices") && len(f) > 0 && f[len(f)-1] == "REGRESSED" {
			found = strings.Contains(line, " 6 ") && strings.Contains(line, " 12 ")
		}
	}
	if !found {
		t.Errorf("twice the triangles: no line of the render pass's vertices regressed from 6 to 12\n%s", out)
	}

	t.Run("secondaries", func(t *testing.T) {
		trace := filepath.Join(tmp, "secondaries.perfetto-trace")
		runWork(t, dir, trace, lifecycle(t), "secondary", "10")
		tr := readTrace(t, trace)
		want := map[string]timeline.WorkMissing{"cached": timeline.WorkCounted, "secondary command buffer": timeline.WorkCounted,
			"outer": timeline.WorkSecondaries, "command buffer": timeline.WorkSecondaries}
		got := map[string]int{}
		for _, s := range tr.Spans {
			name := tr.Name(s.Name)
			w, ok := want[name]
			if !ok {
				continue
			}
			if s.Work == nil || s.Work.Missing != w {
				t.Errorf("a zone %q with work %+v, want %v", name, s.Work, w)
			}
			got[name]++
		}
		for name := range want {
			if got[name] != 10 {
				t.Errorf("%d zones %q, want 10", got[name], name)
			}
		}
	})

	for _, cube := range []string{"vkcube", "vkcubepp"} {
		t.Run(cube, func(t *testing.T) {
			need(t, cube)
			var traces []string
			for k := range 2 {
				trace := filepath.Join(tmp, fmt.Sprintf("%s-%d.perfetto-trace", cube, k))
				cmd := exec.Command("xvfb-run", "-a", filepath.Join(dir, "framescope"), "run", "-work", "-o", trace, "--", cube, "--c", "30")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("framescope run -work %s: %v\n%s", cube, err, out)
				}
				renderPassWork(t, readTrace(t, trace), 30, 36)
				traces = append(traces, trace)
			}
			if code, out := diff(traces[0], traces[1]); !strings.Contains(out, "; work: 0 regressed") || strings.Contains(out, "WORK REGRESSED") {
				t.Errorf("two runs of %s: exit %d, the work not unchanged\n%s", cube, code, out)
			}
		})
	}
}

// runWork runs prog with args under framescope run -work, a frame a
// submission, writing trace, with the validation layer below the layer
// (synchronization validation on), which must say nothing.
func runWork(t *testing.T, dir, trace, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "framescope"), append([]string{"run", "-work", "-frame-every", "1", "-o", trace, "--", prog}, args...)...)
	cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "VK_ADD_LAYER_PATH="+validationDir(),
		"VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run -work %s %v: %v\n%s", filepath.Base(prog), args, err, out)
	}
	if validationSpoke(out) {
		t.Errorf("the validation layer spoke:\n%s", out)
	}
}

// renderPassWork checks that tr has frames render pass zones at least,
// each with its counts, vertices input assembly vertices each.
func renderPassWork(t *testing.T, tr *timeline.Trace, frames int, vertices uint64) {
	t.Helper()
	n := 0
	for _, s := range tr.Spans {
		if tr.Name(s.Name) != "render pass" {
			continue
		}
		n++
		if s.Work == nil || s.Work.Missing != timeline.WorkCounted {
			t.Errorf("a render pass zone without its counts: %+v", s.Work)
			continue
		}
		if v, ok := s.Work.Of(timeline.InputAssemblyVertices); !ok || v != vertices {
			t.Errorf("a render pass zone of %d vertices (%v), want %d", v, ok, vertices)
		}
	}
	if n < frames {
		t.Errorf("%d render pass zones, want %d at least", n, frames)
	}
}

// A program with a pipeline statistics query of its own, under -work:
// Vulkan lets one be active at a time in a command buffer, so the layer's
// counts there end before the program's query begins, and none begins
// until it ends. The validation layer says nothing (before: 3 errors a
// command buffer, VUID-vkCmdBeginQuery-queryPool-01922), the program's
// own count is as without the layer, every zone is delivered, and the
// zones of those command buffers say why they have no counts (query).
func TestProgramStatisticsQueryUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "shapes", "-lpthread")
	plain, err := exec.Command(prog, "statsquery", "20").CombinedOutput()
	if err != nil {
		t.Fatalf("shapes statsquery without the layer: %v\n%s", err, plain)
	}
	trace := filepath.Join(t.TempDir(), "q.perfetto-trace")
	cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-work", "-frame-every", "1", "-o", trace, "--", prog, "statsquery", "20")
	cmd.Env = append(os.Environ(), "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "VK_ADD_LAYER_PATH="+validationDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("framescope run -work shapes statsquery: %v\n%s", err, out)
	}
	if validationSpoke(out) {
		t.Errorf("the validation layer spoke:\n%s", lastOf(out))
	}
	count := regexp.MustCompile(`compute shader invocations \d+`)
	if a, b := count.Find(plain), count.Find(out); a == nil || string(a) != string(b) {
		t.Errorf("the program's own count: %q without the layer, %q under it", a, b)
	}
	tr := readTrace(t, trace)
	const zones = 3 * 20 // the command buffer's zone, outer and inner
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		t.Errorf("books %v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	if d := tr.Drops; d.Work != zones || d.Total() != zones || tr.Ledger.Zones.Delivered != zones {
		t.Errorf("%d zones delivered, drops %+v; want %d delivered, each work counted lost alone", tr.Ledger.Zones.Delivered, d, zones)
	}
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track); k == nil || k.Kind != timeline.TrackGPUQueue {
			continue
		}
		if s.Work == nil || s.Work.Missing != timeline.WorkQuery {
			t.Errorf("zone %q: work %+v, want none, for the program's query", tr.Name(s.Name), s.Work)
		}
	}
}
