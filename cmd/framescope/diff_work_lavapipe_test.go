//go:build cgo

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffWorkGateOnLavapipe is issue 23's acceptance of the work gate on
// the default device (lavapipe where there is no GPU): two single demo
// runs with the same load, counting pipeline statistics, do not say
// regressed; -load 2 against -load 3, one run each, exits 1 naming the
// fragment shader invocations of the zones around the load draws.
func TestDiffWorkGateOnLavapipe(t *testing.T) {
	needVulkan(t)
	dir := t.TempDir()
	bin := buildDemo(t, dir)
	demo := func(name, load string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command(bin, "-frames", "60", "-load", load, "-size", "64", "-quiet", "-pipeline-stats", "-out", out)
		cmd.Env = append(os.Environ(), "LP_NUM_THREADS=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, b)
		}
		return filepath.Join(out, "triangle.perfetto-trace")
	}
	base, same, more := demo("a", "2"), demo("b", "2"), demo("c", "3")

	code, out, errs := runCLI("diff", base, same)
	t.Logf("-load 2 against -load 2, one run each: exit %d\n%s%s", code, out, errs)
	if !strings.Contains(out, "; work: 0 regressed") {
		t.Skipf("the demo's zones carry no work on this device:\n%s", out)
	}
	if code == exitRegressed || code == exitBadInput || strings.Contains(out, "REGRESSED") {
		t.Errorf("the same load: exit %d, a regression", code)
	}

	code, out, errs = runCLI("diff", base, more)
	t.Logf("-load 2 against -load 3, one run each: exit %d\n%s%s", code, out, errs)
	if code != exitRegressed {
		t.Fatalf("-load 3: exit %d, want 1", code)
	}
	// The frame and render pass zones hold the load draws and count their
	// work (zones inside the render pass have none: a zone around them,
	// begun outside it, is counting).
	for _, zone := range []string{"frame", "render pass"} {
		found := false
		for _, line := range strings.Split(squash(out), "\n") {
			if strings.Contains(line, " "+zone+" fragment_shader_invocations 1/1 ") && strings.HasSuffix(line, " exact REGRESSED") {
				found = true
			}
		}
		if !found {
			t.Errorf("no regression of %s's fragment_shader_invocations", zone)
		}
	}
}
