package apicheck

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/quiet"
)

var update = flag.Bool("update", false, "rewrite api/framescope.txt from the module's exported API")

// root is the module's root, seen from this package's directory.
const root = "../.."

// regenerate rewrites the record; it is run at the module's root.
const regenerate = "go test ./internal/apicheck -run TestAPIRecord -update"

const recordHeader = `# The exported API of github.com/framescope/framescope: every exported name
# of the packages other modules can import (not internal, main or test-only
# ones), one line each. Generated; TestAPIRecord fails when the API differs
# from this file. After a deliberate change to the API, regenerate it at the
# repository root with
#
#	` + regenerate + `
#
# (or make api) and commit it with the change, so review sees the change.
`

// TestAPIRecord holds the module's exported API to api/framescope.txt.
func TestAPIRecord(t *testing.T) {
	if out, _ := exec.Command("go", "env", "CGO_ENABLED").Output(); strings.TrimSpace(string(out)) == "0" {
		t.Skip("the profiler's packages need cgo, which is off")
	}
	quiet.Hold(t) // go list -export compiles: not beside the tests that time the machine
	pkgs, err := PublicPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range pkgs {
		paths = append(paths, p.ImportPath)
		readSources(t, p.Dir)
	}
	got, err := Generate(root, paths...)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(root, "api", "framescope.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(record), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(record, Format(recordHeader, got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", record, len(got))
		return
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("%v; to write it, run at the repository root:\n\t%s", err, regenerate)
	}
	if added, removed := Diff(Parse(data), got); len(added)+len(removed) > 0 {
		t.Errorf("the exported API differs from api/framescope.txt (-recorded, +now):\n%s\n"+
			"If the change is meant, regenerate the file at the repository root with\n\t%s\n"+
			"and commit it with the change.", Report(added, removed), regenerate)
	}
}

// readSources reads a package directory's Go files, only so that go
// test's cache, which knows the files a test opens but not those its go
// list reads, runs the test again when they change.
func readSources(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			if _, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDiffReportsChangedSignature runs the generator on a fixture package
// whose record has an older signature of Scale: the diff must report that
// change and nothing else, so the record is also the fixture's golden file.
func TestDiffReportsChangedSignature(t *testing.T) {
	readSources(t, filepath.Join("testdata", "fixture"))
	got, err := Generate(".", "./testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "fixture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "pkg internal/apicheck/testdata/fixture, "
	want := "-" + pkg + "func Scale(float64) float64\n" +
		"+" + pkg + "func Scale(float64, int) float64\n"
	if report := Report(Diff(Parse(data), got)); report != want {
		t.Errorf("diff of the fixture:\n%s\nwant:\n%s", report, want)
	}
}

// TestChangelogVersion checks that CHANGELOG.md's newest version heading
// ("## v0.9.0 — unreleased") names the version in VERSION.
func TestChangelogVersion(t *testing.T) {
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "v" + strings.TrimSpace(string(version))
	for _, line := range strings.Split(string(changelog), "\n") {
		if strings.HasPrefix(line, "## v") {
			if got := strings.Fields(line)[1]; got != want {
				t.Errorf("CHANGELOG.md's newest version is %s; VERSION says %s", got, want)
			}
			return
		}
	}
	t.Errorf("CHANGELOG.md has no version heading (## %s …)", want)
}
