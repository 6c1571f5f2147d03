package perfettopb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// protocVersion matches the header line naming protoc's version, the one
// line of framescope_trace.pb.go that depends on the machine rather than the sources.
var protocVersion = regexp.MustCompile(`(?m)^// \tprotoc +v.*\n`)

// TestGeneratedIsFresh regenerates framescope_trace.pb.go into a temporary directory
// and fails if the committed file differs.
func TestGeneratedIsFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
			t.Fatal("protoc is not installed (make deps installs it), and FRAMESCOPE_REQUIRE_VULKAN=1 requires this check")
		}
		t.Skip("protoc is not installed: cannot check that framescope_trace.pb.go is fresh")
	}
	if testing.Short() {
		t.Skip("builds protoc-gen-go; skipped in -short mode")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./internal/protogen", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("regenerating: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(filepath.Join(out, "framescope_trace.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("framescope_trace.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	fresh = protocVersion.ReplaceAll(fresh, nil)
	committed = protocVersion.ReplaceAll(committed, nil)
	if !bytes.Equal(fresh, committed) {
		t.Fatal("framescope_trace.pb.go is stale: run `go generate ./internal/perfettopb` and commit the result")
	}
}
