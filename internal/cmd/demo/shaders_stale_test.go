package demo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSPIRVUpToDate compiles every shader the way the generate lines of
// generate.go do, into a temporary directory, and compares the
// result with the committed SPIR-V. The header (5 words, which names the
// compiler's version) is left out of the comparison.
func TestSPIRVUpToDate(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
			t.Fatal("glslc is missing (Debian package glslc; make deps installs it)")
		}
		t.Skip("glslc is missing (Debian package glslc)")
	}
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		args, ok := strings.CutPrefix(line, "//go:generate glslc ")
		if !ok {
			continue
		}
		f := strings.Fields(args)
		out := -1
		for i := range f {
			if f[i] == "-o" && i+1 < len(f) {
				out = i + 1
			}
		}
		if out < 0 {
			t.Fatalf("generate.go: no -o in %q", line)
		}
		committed := f[out]
		f[out] = filepath.Join(dir, filepath.Base(committed))
		if b, err := exec.Command("glslc", f...).CombinedOutput(); err != nil {
			t.Fatalf("glslc %s: %v\n%s", strings.Join(f, " "), err, b)
		}
		got, err := os.ReadFile(f[out])
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(committed)
		if err != nil {
			t.Fatal(err)
		}
		const header = 5 * 4
		if len(got) < header || len(want) < header || !bytes.Equal(got[header:], want[header:]) {
			t.Errorf("%s is stale against its GLSL source: run go generate ./internal/cmd/demo", committed)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("generate.go compiles %d shaders, want 5", n)
	}
}
