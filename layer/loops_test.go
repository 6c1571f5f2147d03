package layer

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/framescope/framescope/internal/testkit/loopcheck"
)

var (
	loopSeeds = flag.Int("layer.loops", 8, "TestCheckerLoopsUnderLayer: how many seeds")
	loopFirst = flag.Int("layer.loopfirst", 1, "TestCheckerLoopsUnderLayer: the first seed")
	loopSeed  = flag.Int("layer.loop", 0, "TestCheckerLoopsUnderLayer: replay this seed only")
)

// The render-loop checker's application (internal/testkit/loopcheck),
// its Vulkan all C, run as a program of its own with no profiler in it
// (loopcheck.Bare: the checker's loops, zones made labels) under the
// layer, with the validation layer and synchronization validation: each
// seed's loop runs once bare and once under the layer, and the layer's
// trace is held to what the program did (Bare.Check: books, each loss
// where the program made it, each zone's count, each zone inside the
// window of a submission that ran it, nesting as labelled, a track a
// device), the validation layer says nothing, and what the GPU wrote is
// the same with the layer as without. A failing seed prints itself
// (-layer.loop=N replays it; -layer.loops and -layer.loopfirst run more).
func TestCheckerLoopsUnderLayer(t *testing.T) {
	dir, prog := built(t), bareProgram(t)
	tmp := t.TempDir()
	spirv := filepath.Join(tmp, "count.spv")
	if err := os.WriteFile(spirv, loopcheck.CountSPIRV(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(prog, "probe", spirv).CombinedOutput()
	if err != nil {
		t.Fatalf("bare probe: %v\n%s", err, out)
	}
	dev, err := loopcheck.ParseBareProbe(out)
	if err != nil {
		t.Fatal(err)
	}
	// lavapipe (Mesa 22.3) crashes on a label ended in a later primary.
	spans := !strings.Contains(dev.Name, "llvmpipe")
	first, last := *loopFirst, *loopFirst+*loopSeeds-1
	if *loopSeed != 0 {
		first, last = *loopSeed, *loopSeed
	}
	reached := map[string]int{}
	for seed := first; seed <= last; seed++ {
		b := loopcheck.NewBare(uint64(seed), dev, spans)
		if msg := bareLoop(t, dir, prog, spirv, b); msg != "" {
			keepBare(t, b)
			t.Fatalf("%s\n%s\n(-layer.loop=%d replays it)", b.Loop, msg, seed)
		}
		for _, r := range b.Reached {
			reached[r]++
		}
	}
	t.Logf("%s, seeds %d to %d: every invariant held; loops with %v", dev.Name, first, last, reached)
}

// bareLoop runs b bare and under the layer and returns what broke, or "".
func bareLoop(t *testing.T, dir, prog, spirv string, b loopcheck.Bare) string {
	tmp := t.TempDir()
	lastBareDir = tmp
	script := filepath.Join(tmp, "script")
	if err := os.WriteFile(script, b.Script, 0o644); err != nil {
		return err.Error()
	}
	run := func(under bool) (loopcheck.BareJournal, string, string) {
		journal := filepath.Join(tmp, fmt.Sprintf("journal-%t", under))
		trace := filepath.Join(tmp, "loop.perfetto-trace")
		args := []string{prog, "run", script, journal, spirv}
		if under {
			frames := fmt.Sprint(1 + b.Loop.Seed%8)
			args = append([]string{filepath.Join(dir, "framescope"), "run", "-frame-every", frames, "-o", trace, "--"}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "VK_ADD_LAYER_PATH="+validationDir())
		out, err := cmd.CombinedOutput()
		os.WriteFile(journal+".out", out, 0o644)
		if err != nil {
			return loopcheck.BareJournal{}, "", fmt.Sprintf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		b, err := os.ReadFile(journal)
		if err != nil {
			return loopcheck.BareJournal{}, "", err.Error()
		}
		j, err := loopcheck.ParseBareJournal(b)
		if err != nil {
			return j, "", err.Error()
		}
		if j.Messages > 0 || bytes.Contains(out, []byte("VUID")) {
			return j, "", fmt.Sprintf("the validation layer spoke (layer %t): %d messages, the latest: %s\n%s", under, j.Messages, j.Last, out)
		}
		return j, trace, ""
	}
	bare, _, msg := run(false)
	if msg != "" {
		return "without the layer: " + msg
	}
	j, trace, msg := run(true)
	if msg != "" {
		return msg
	}
	if j.Checksum != bare.Checksum {
		return fmt.Sprintf("what the GPU wrote differs: checksum %s under the layer, %s without", j.Checksum, bare.Checksum)
	}
	tr, err := readTraceErr(trace)
	if err != nil {
		return err.Error()
	}
	if p := b.Check(tr, j); len(p) > 0 {
		return strings.Join(p, "\n")
	}
	return ""
}

var (
	bareOnce sync.Once
	bareProg string
	bareErr  error
)

// bareProgram builds the checker's application as a program of its own,
// or takes it from beside a layer built elsewhere.
func bareProgram(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("FRAMESCOPE_LAYER_BUILT"); dir != "" {
		return filepath.Join(dir, "bare")
	}
	bareOnce.Do(func() {
		src := filepath.Join("..", "internal", "testkit", "loopcheck")
		d, err := os.MkdirTemp("", "framescope-bare-")
		if err != nil {
			bareErr = err
			return
		}
		bareProg = filepath.Join(d, "bare")
		args := []string{"-std=gnu11", "-Wall", "-Werror", "-O2", "-I" + src, "-o", bareProg, filepath.Join(src, "bare", "bare.c")}
		for _, f := range []string{"app.c", "submit.c", "twin.c", "render.c"} {
			args = append(args, filepath.Join(src, f))
		}
		if out, err := exec.Command("gcc", append(args, "-lvulkan", "-lpthread")...).CombinedOutput(); err != nil {
			bareErr = fmt.Errorf("gcc: %v\n%s", err, out)
		}
	})
	if bareErr != nil {
		t.Fatal(bareErr)
	}
	return bareProg
}

// lastBareDir holds the latest seed's script, journals and trace.
var lastBareDir string

// keepBare copies a failing seed's files to $FRAMESCOPE_BARE_KEEP, where
// set (the GPU machine's runs bring them back).
func keepBare(t *testing.T, b loopcheck.Bare) {
	to := os.Getenv("FRAMESCOPE_BARE_KEEP")
	if to == "" || lastBareDir == "" {
		return
	}
	if out, err := exec.Command("cp", "-r", lastBareDir, filepath.Join(to, fmt.Sprint("seed-", b.Loop.Seed))).CombinedOutput(); err != nil {
		t.Logf("keeping the seed's files: %v\n%s", err, out)
	}
}
