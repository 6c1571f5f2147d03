package main

import (
	"encoding/json"
	"os"
	pathpkg "path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline/limits"
)

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	tr := synthTrace(8, 20, 3, nil)
	src := writeFile(t, dir, "src.json", tr, formatChrome, false)
	gpu, _ := pprof.Totals(tr)
	tests := []struct {
		name string
		args []string
		out  string
		want traceFormat
	}{
		{"to perfetto", []string{"convert", src}, "a.perfetto-trace", formatPerfetto},
		{"to pftrace.gz", []string{"convert", src}, "a.pftrace.gz", formatPerfetto},
		{"to json", []string{"convert", src}, "a.json", formatChrome},
		{"-to chrome", []string{"convert", "-to", "chrome", src}, "a.out", formatChrome},
		{"to pprof", []string{"convert", src}, "a.pb.gz", formatPprof},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := pathpkg.Join(dir, tc.out)
			if code, _, errs := runCLI(append(tc.args, out)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if tc.want == formatPprof {
				f, err := os.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				p, err := profile.Parse(f)
				if err != nil {
					t.Fatal(err)
				}
				// The work's, and apart (kind=idle) the GPU's idle time in
				// the frames: their gaps.
				var sum, idle, gaps int64
				for _, s := range p.Sample {
					if slices.Contains(s.Label["kind"], "idle") {
						idle += s.Value[0]
					} else {
						sum += s.Value[0]
					}
				}
				for _, f := range limits.Of(tr).Frames {
					for _, g := range f.Gaps {
						gaps += g.End - g.Start
					}
				}
				if sum != gpu || idle != gaps || gaps == 0 {
					t.Errorf("pprof gpu_time %d of work and %d idle; trace %d busy and %d idle", sum, idle, gpu, gaps)
				}
				// pprof is output only.
				if code, _, errs := runCLI("stats", out); code != 2 || !strings.Contains(errs, "pprof") {
					t.Errorf("stats on pprof: exit %d: %s", code, errs)
				}
				return
			}
			got, err := loadTrace(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Spans) != len(tr.Spans) || len(got.Frames) != len(tr.Frames) {
				t.Errorf("%d spans, %d frames; want %d, %d", len(got.Spans), len(got.Frames), len(tr.Spans), len(tr.Frames))
			}
		})
	}
	bad := [][]string{
		{"convert", src},
		{"convert", src, pathpkg.Join(dir, "x.txt")},
		{"convert", "-to", "svg", src, pathpkg.Join(dir, "x.json")},
		{"convert", pathpkg.Join(dir, "none.json"), pathpkg.Join(dir, "x.json")},
		{"convert", src, pathpkg.Join(dir, "no/such/dir/x.json")},
	}
	for _, args := range bad {
		if code, _, _ := runCLI(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if _, err := os.Stat(pathpkg.Join(dir, "x.json")); err == nil {
		t.Error("a failed convert left its output behind")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".framescope-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestConvertRenderStages: -render-stages writes the GPU zones as render
// stages too (one GpuRenderStageEvent a zone, with GPU counters of their
// work), reads back to the same timeline as without it, and is refused
// for other output formats.
func TestConvertRenderStages(t *testing.T) {
	dir := t.TempDir()
	tr := tracecases.WorkTrace()
	src := writeFile(t, dir, "src.pftrace", tr, formatPerfetto, false)
	plain, stages := pathpkg.Join(dir, "plain.pftrace"), pathpkg.Join(dir, "stages.pftrace")
	if code, _, errs := runCLI("convert", src, plain); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI("convert", "-render-stages", src, stages); code != 0 {
		t.Fatalf("-render-stages: exit %d: %s", code, errs)
	}
	// Count the packets holding a render stage (TracePacket field 53)
	// or GPU counters (52).
	count := func(path string) (stageN, counterN int) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for len(data) > 0 {
			_, _, n := protowire.ConsumeTag(data)
			body, m := protowire.ConsumeBytes(data[max(n, 0):])
			if n < 0 || m < 0 {
				t.Fatalf("%s: not a trace", path)
			}
			for b := body; len(b) > 0; {
				f, ft, k := protowire.ConsumeTag(b)
				l := protowire.ConsumeFieldValue(f, ft, b[max(k, 0):])
				if k < 0 || l < 0 {
					t.Fatalf("%s: bad packet", path)
				}
				switch f {
				case 53:
					stageN++
				case 52:
					counterN++
				}
				b = b[k+l:]
			}
			data = data[n+m:]
		}
		return stageN, counterN
	}
	if s, c := count(plain); s != 0 || c != 0 {
		t.Errorf("without -render-stages: %d render stages, %d GPU counter packets", s, c)
	}
	if s, c := count(stages); s != len(tr.Spans) || c == 0 {
		t.Errorf("with -render-stages: %d render stages for %d GPU zones, %d GPU counter packets", s, len(tr.Spans), c)
	}
	a, err := loadTrace(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadTrace(stages)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("with -render-stages the trace reads back otherwise:\n%+v\nwithout:\n%+v", b, a)
	}
	if a.Spans[0].Work == nil {
		t.Error("the work of the zones is lost")
	}
	for _, out := range []string{"x.json", "x.pb.gz"} {
		code, _, errs := runCLI("convert", "-render-stages", src, pathpkg.Join(dir, out))
		if code != 2 || !strings.Contains(errs, "-render-stages needs Perfetto output") {
			t.Errorf("-render-stages to %s: exit %d: %s", out, code, errs)
		}
		if _, err := os.Stat(pathpkg.Join(dir, out)); err == nil {
			t.Errorf("-render-stages to %s wrote it", out)
		}
	}
}

// TestConvertLimits: convert to Chrome JSON writes what limits each
// frame, a verdict slice per analysed frame on the "frame limits"
// thread (this trace has no submitting thread: its frames are GPU-bound,
// without the CPU's args), from JSON that already holds them too, whose
// reader leaves them out: the output holds them once, and reads back to
// the trace's spans alone.
func TestConvertLimits(t *testing.T) {
	dir := t.TempDir()
	tr := synthTrace(3, 12, 3, nil)
	src := writeFile(t, dir, "src.json", tr, formatChrome, false)
	out := pathpkg.Join(dir, "out.json")
	if code, _, errs := runCLI("convert", src, out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var evs []struct {
		Ph, Name string
		Tid      int64
		Args     map[string]any
	}
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatal(err)
	}
	tid := int64(-1)
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args["name"] == "frame limits" {
			tid = e.Tid
		}
	}
	var got []string
	for _, e := range evs {
		if e.Ph == "X" && e.Tid == tid {
			got = append(got, e.Name)
			if _, ok := e.Args["gpu_busy"]; !ok || e.Args["cpu_busy"] != nil {
				t.Errorf("verdict %s args %v: want gpu_busy, and no cpu_busy", e.Name, e.Args)
			}
		}
	}
	var want []string
	for _, f := range limits.Of(tr).Frames {
		want = append(want, f.Limit.Label())
	}
	if len(want) != 11 || !slices.Equal(got, want) {
		t.Errorf("verdict slices %q, want %q (the 11 frames but the last)", got, want)
	}
	back, err := loadTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Spans) != len(tr.Spans) || len(back.Tracks) != len(tr.Tracks) {
		t.Errorf("read back %d spans on %d tracks, want %d on %d", len(back.Spans), len(back.Tracks), len(tr.Spans), len(tr.Tracks))
	}
}
