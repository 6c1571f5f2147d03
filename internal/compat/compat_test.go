package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/quiet"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// frames is each program's run: few, as lavapipe is slow.
const frames = "6"

// program is one application the test builds and runs.
type program struct {
	name  string
	build func(t *testing.T, bin string) string // returns the binary
	args  func(out string) []string             // flags, validation on, writing into the directory out
	trace string                                // the Perfetto trace it writes there
	quiet func(stdout []byte) error             // its own count of validation messages is 0
}

var programs = []program{
	{name: "wrap-before-apiversion", build: outside("wrap-before-apiversion"), args: wrapArgs, trace: "wrap.perfetto-trace", quiet: wrapQuiet},
	{name: "readme-loop", build: outside("readme-loop"), trace: "loop.perfetto-trace", quiet: matches(`(?m)^readme-loop: .*\bvalidation=true problems=0$`),
		args: func(out string) []string {
			return []string{"-validation", "-frames", frames, "-out", filepath.Join(out, "loop.perfetto-trace")}
		}},
	{name: "examples/wrap", build: inside("wrap"), args: wrapArgs, trace: "wrap.perfetto-trace", quiet: wrapQuiet},
	{name: "examples/triangle", build: inside("triangle"), trace: "triangle.perfetto-trace", quiet: triangleQuiet,
		args: func(out string) []string { return []string{"-validation", "-json", "-frames", frames, "-out", out} }},
}

// TestPrograms builds each program as its users would and runs it on the
// default Vulkan device with the validation layer on: it must exit 0,
// report no validation message, and write a trace that reads back with
// GPU zones and balanced books.
func TestPrograms(t *testing.T) {
	probe(t)
	quiet.Hold(t) // it builds and runs programs: not beside the tests that time the machine
	start := time.Now()
	bin := t.TempDir()
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			exe, out := p.build(t, bin), t.TempDir()
			args := p.args(out)
			hasFlags(t, exe, args)
			stdout := runProgram(t, exe, args)
			if err := p.quiet(stdout); err != nil {
				t.Errorf("%v\nstdout:\n%s", err, stdout)
			}
			checkTrace(t, filepath.Join(out, p.trace))
		})
	}
	t.Logf("built and ran %d programs in %v", len(programs), time.Since(start).Round(time.Millisecond))
}

// probe skips the test, or fails it under FRAMESCOPE_REQUIRE_VULKAN=1,
// unless a device can be made with the validation layer, which every run
// asks for.
func probe(t *testing.T) {
	d, err := vk.Open(vk.Config{InstanceConfig: vk.InstanceConfig{AppName: "compat", Validation: true, RequireValidation: true}})
	if err != nil {
		if vktest.Required() {
			t.Fatalf("no Vulkan device with the validation layer (FRAMESCOPE_REQUIRE_VULKAN=1): %v", err)
		}
		t.Skipf("no Vulkan device with the validation layer: %v", err)
	}
	d.Close()
}

// outside builds the module testdata/dir as a module of its own would be
// built: GOWORK off, its go.mod's replace pointing at this tree. It builds
// with a copy of go.mod and go.sum (-modfile), so that -mod=mod may
// complete them without writing into the source tree.
func outside(dir string) func(*testing.T, string) string {
	return func(t *testing.T, bin string) string {
		t.Helper()
		mod := t.TempDir()
		for _, f := range []string{"go.mod", "go.sum"} {
			b, err := os.ReadFile(filepath.Join("testdata", dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mod, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		exe := filepath.Join(bin, dir)
		goBuild(t, filepath.Join("testdata", dir), []string{"GOFLAGS=-mod=mod"},
			"-modfile", filepath.Join(mod, "go.mod"), "-o", exe, ".")
		return exe
	}
}

// inside builds examples/name of this module.
func inside(name string) func(*testing.T, string) string {
	return func(t *testing.T, bin string) string {
		t.Helper()
		exe := filepath.Join(bin, name)
		goBuild(t, root, nil, "-o", exe, "./examples/"+name)
		return exe
	}
}

// goBuild runs go build in dir, without the race detector, so that each
// program is built as its users build it.
func goBuild(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, append([]string{"build"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS="}, env...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

// hasFlags checks that the program's -h lists every flag args passes, so
// that a renamed flag says so rather than failing the run.
func hasFlags(t *testing.T, exe string, args []string) {
	t.Helper()
	usage, _ := exec.Command(exe, "-h").CombinedOutput() // some exit 1 after -h
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !strings.Contains(string(usage), "\n  "+a+" ") && !strings.Contains(string(usage), "\n  "+a+"\n") {
			t.Fatalf("%s -h does not list %s:\n%s", filepath.Base(exe), a, usage)
		}
	}
}

// validationLine is a validation message as the programs print it
// ("validation: ...") or as the layer prints it itself without a callback.
var validationLine = regexp.MustCompile(`(?m)^validation:|Validation (Error|Warning)|VUID-`)

// runProgram runs exe with args, requires exit status 0 and no validation
// message in its output, and returns its stdout.
func runProgram(t *testing.T, exe string, args []string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(exe), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	for _, b := range [][]byte{stdout.Bytes(), stderr.Bytes()} {
		if validationLine.Match(b) {
			t.Errorf("%s printed a validation message:\n%s", filepath.Base(exe), b)
		}
	}
	return stdout.Bytes()
}

// checkTrace reads the Perfetto trace back with the module's reader and
// requires GPU zones, every zone the books delivered, balanced books and
// nothing dropped.
func checkTrace(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		t.Fatalf("trace %s: %v, %d bytes", path, err, len(b))
	}
	tr, err := perfetto.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("reading %s back: %v", path, err)
	}
	if err := tr.Validate(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	zones := gpuZones(tr)
	l := tr.Ledger
	if zones == 0 || uint64(zones) != l.Zones.Delivered || !l.Balanced(tr.Drops) || tr.Drops.Total() != 0 {
		t.Errorf("%s: %d GPU zones, ledger %+v, drops %+v: want zones, all delivered, balanced books, no drops",
			filepath.Base(path), zones, l, tr.Drops)
	}
}

// gpuZones counts the spans on GPU queue tracks and their lanes.
func gpuZones(tr *timeline.Trace) int {
	n := 0
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track).Kind; k == timeline.TrackGPUQueue || k == timeline.TrackGPULane {
			n++
		}
	}
	return n
}

// wrapArgs are the flags of examples/wrap, then and now.
func wrapArgs(out string) []string {
	return []string{"-validation", "-frames", frames, "-out", out}
}

// wrapQuiet requires the wrap example's summary line to count no
// validation message.
var wrapQuiet = matches(`(?m)^wrap: .*\bvalidation=0$`)

// matches returns a check that stdout matches the expression.
func matches(expr string) func([]byte) error {
	re := regexp.MustCompile(expr)
	return func(stdout []byte) error {
		if !re.Match(stdout) {
			return fmt.Errorf("stdout does not match %s", expr)
		}
		return nil
	}
}

// triangleQuiet requires the triangle's JSON summary to count no
// validation warning or error.
func triangleQuiet(stdout []byte) error {
	var s struct {
		Warnings *uint64 `json:"validation_warnings"`
		Errors   *uint64 `json:"validation_errors"`
	}
	if err := json.Unmarshal(stdout, &s); err != nil {
		return fmt.Errorf("the JSON summary: %v", err)
	}
	if s.Warnings == nil || s.Errors == nil || *s.Warnings+*s.Errors != 0 {
		return errors.New("the JSON summary counts validation warnings or errors, or lacks the counts")
	}
	return nil
}
