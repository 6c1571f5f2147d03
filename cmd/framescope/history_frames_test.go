package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// history check names the commit where a program became GPU-bound: from
// commit c08 on, its frames wait 9 ms for the GPU where they waited 1 ms,
// and the frames' GPU busy series steps up there.
func TestHistoryNamesWhereFramesBecameGPUBound(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	addHistory(t, db, 12, func(i int) *timeline.Trace {
		if i >= 8 {
			return boundFrames(10, 9, 1)
		}
		return boundFrames(0, 9, 1)
	})
	code, out, errs := runCLI("history", "check", "-db", db, "-testbed", "synthetic")
	if code != exitRegressed {
		t.Fatalf("history check: exit %d, want %d\n%s%s", code, exitRegressed, out, errs)
	}
	want := "REGRESSED frame:frames/gpu busy p50: "
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, want) {
			line = l
		}
	}
	if !strings.Contains(line, "at commit c08 (seq 8)") {
		t.Errorf("history check does not name c08 in %q:\n%s", want, out)
	}
}
