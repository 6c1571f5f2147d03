package main

import (
	"os"
	pathpkg "path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/export/pprof"
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
				var sum int64
				for _, s := range p.Sample {
					sum += s.Value[0]
				}
				if sum != gpu {
					t.Errorf("pprof gpu_time %d, trace %d", sum, gpu)
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
