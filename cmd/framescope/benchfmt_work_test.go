package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchfmtWork: benchfmt writes each counted statistic of a zone as a
// metric of its own, its mean count per occurrence, and nothing of work
// for zones without it.
func TestBenchfmtWork(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "run")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, "run.pftrace", workRun(1, scaled("z2", fragStat, 1.5)), formatPerfetto, false)
	code, out, errs := runCLI("benchfmt", d)
	if code != 0 {
		t.Fatalf("benchfmt: exit %d %s", code, errs)
	}
	var z2, cpu string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "BenchmarkGPU/") && strings.Contains(line, "/zone=z2 "):
			z2 = line
		case strings.HasPrefix(line, "BenchmarkCPU/"):
			cpu = line
		}
	}
	if !strings.Contains(z2, " 18432 fragment_shader_invocations/op") || !strings.Contains(z2, " ns/op ") {
		t.Errorf("z2's line %q lacks 18432 fragment_shader_invocations/op:\n%s", z2, out)
	}
	if strings.Contains(cpu, "/op ") && strings.Contains(cpu, "invocations") {
		t.Errorf("a CPU span's line has work: %q", cpu)
	}
}
