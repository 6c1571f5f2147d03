package layer

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/loopcheck"
	"github.com/framescope/framescope/timeline"
)

var (
	loopSeeds = flag.Int("layer.loops", 9, "TestCheckerLoopsUnderLayer: how many seeds (9 fails without a seat per track name)")
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
// the same with the layer as without.
//
// Each seed also draws the program's shape (loopcheck.Shape): threads
// that make and destroy instances and devices while it records;
// children made by fork (with and without exec), system and
// posix_spawn, with Vulkan or not; SIGINT, SIGTERM, SIGKILL or SIGQUIT
// at a drawn frame, from the program itself or from outside, handled or
// not; more command buffers at once than the layer keeps recordings of;
// more label names than it keeps; frames by time (the program never
// presents) or -frame-every; -work; a layer that holds a lock while it calls
// down, above or below Framescope's. Every run ends within seedLimit;
// the program prints the same and ends the same under the layer as
// without; every process that made a device has a trace that reads back
// (to its last whole batch where a signal ended it) with books that
// balance; each child's holds its submissions. A failing seed prints
// itself (-layer.loop=N replays it; -layer.loops and -layer.loopfirst
// run more).
func TestCheckerLoopsUnderLayer(t *testing.T) {
	dir, prog := built(t), bareProgram(t)
	lock := sharedLibrary(t, "locklayer")
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
	var took []time.Duration
	var failed []int
	for seed := first; seed <= last && len(failed) < 5; seed++ {
		b := loopcheck.NewBare(uint64(seed), dev, spans)
		start := time.Now()
		if msg := bareLoop(t, dir, prog, spirv, lock, b); msg != "" {
			// Go on to the next seed: a run of many on the GPU machine
			// says every seed that fails, up to five.
			keepBare(t, b)
			t.Errorf("%s\nshape: %s\n%s\n(-layer.loop=%d replays it)", b.Loop, b.Shape, msg, seed)
			failed = append(failed, seed)
			continue
		}
		took = append(took, time.Since(start))
		for _, r := range b.Reached {
			reached[r]++
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%s: seeds %v failed (of %d run from %d)", dev.Name, failed, len(took)+len(failed), first)
	}
	slices.Sort(took)
	t.Logf("%s, seeds %d to %d: every invariant held (a seed took %v at the median, %v at most); loops with %v",
		dev.Name, first, last, took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), reached)
	if last-first+1 >= loopcheck.ShapeKinds {
		for _, kind := range loopcheck.ShapeReach() {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(reached)), func(k string) bool { return strings.HasPrefix(k, kind) }) {
				t.Errorf("no seed drew %q", kind)
			}
		}
	}
}

// seedLimit bounds one run of a seed's program (a hang fails); none
// comes near it.
const seedLimit = 3 * time.Minute

// bareRun is how one run of a seed's program ended.
type bareRun struct {
	stdout, stderr string
	status         int // 128+N for signal N
	journal        loopcheck.BareJournal
}

// runBare runs args with env added, in a session of its own (no
// terminal, as from a script), sends the shape's signal from outside
// when the program says "ready", and kills the session at seedLimit.
func runBare(args, env []string, sig *loopcheck.ShapeSignal) (bareRun, string) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return bareRun{}, err.Error()
	}
	if err := cmd.Start(); err != nil {
		return bareRun{}, err.Error()
	}
	hung := time.AfterFunc(seedLimit, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	out := waitReady(stdout, func() {
		if sig != nil && sig.Outside {
			cmd.Process.Signal(sig.Sig)
		}
	})
	err = cmd.Wait()
	r := bareRun{stdout: out, stderr: stderr.String()}
	if !hung.Stop() {
		return r, fmt.Sprintf("%s did not end within %v (killed):\n%s\n%s", strings.Join(args, " "), seedLimit, out, lastOf(stderr.Bytes()))
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.status = 128 + int(ws.Signal())
		}
	default:
		return r, err.Error()
	}
	return r, ""
}

// shapeEnv is the environment a seed's program runs in, both runs: the
// validation layer found, and the lock layer where the shape puts one.
func shapeEnv(t *testing.T, lock string, s loopcheck.Shape) []string {
	path := validationDir()
	var env []string
	if s.Lock != "" {
		for _, e := range lockLayerEnv(t, lock, s.Lock) {
			if p, ok := strings.CutPrefix(e, "VK_ADD_LAYER_PATH="); ok {
				path += ":" + p
				continue
			}
			env = append(env, e)
		}
	}
	return append(env, "VK_ADD_LAYER_PATH="+path)
}

// bareLoop runs b bare and under the layer and returns what broke, or "".
func bareLoop(t *testing.T, dir, prog, spirv, lock string, b loopcheck.Bare) string {
	tmp := t.TempDir()
	lastBareDir = tmp
	script := filepath.Join(tmp, "script")
	if err := os.WriteFile(script, b.Script, 0o644); err != nil {
		return err.Error()
	}
	env := shapeEnv(t, lock, b.Shape)
	sig := b.Shape.Signal
	wantStatus := 0
	if sig.Kills() {
		wantStatus = 128 + int(sig.Sig)
	}
	trace := filepath.Join(tmp, "loop.perfetto-trace")
	run := func(under bool) (bareRun, string) {
		journal := filepath.Join(tmp, fmt.Sprintf("journal-%t", under))
		args := []string{prog, "run", script, journal, spirv}
		if under {
			flags := []string{filepath.Join(dir, "framescope"), "run", "-o", trace}
			if b.Shape.FrameEvery > 0 {
				flags = append(flags, "-frame-every", fmt.Sprint(b.Shape.FrameEvery))
			}
			if b.Shape.Work {
				flags = append(flags, "-work")
			}
			args = append(append(flags, "--"), args...)
		}
		r, msg := runBare(args, env, sig)
		os.WriteFile(journal+".out", []byte(r.stdout+r.stderr), 0o644)
		if msg != "" {
			return r, msg
		}
		all := r.stdout + r.stderr
		switch {
		case strings.Contains(all, "locklayer: re-entered"):
			return r, fmt.Sprintf("the layer called back up through the lock layer (layer %t):\n%s", under, lastOf([]byte(all)))
		case strings.Contains(all, "VUID"):
			return r, fmt.Sprintf("the validation layer spoke (layer %t):\n%s", under, lastOf([]byte(all)))
		case r.status != wantStatus:
			return r, fmt.Sprintf("%s ended %d, want %d:\n%s", strings.Join(args, " "), r.status, wantStatus, lastOf([]byte(all)))
		case sig.Kills():
			return r, ""
		}
		jb, err := os.ReadFile(journal)
		if err != nil {
			return r, err.Error()
		}
		if r.journal, err = loopcheck.ParseBareJournal(jb); err != nil {
			return r, err.Error()
		}
		if j := r.journal; j.Messages > 0 {
			return r, fmt.Sprintf("the validation layer spoke (layer %t): %d messages, the latest: %s\n%s", under, j.Messages, j.Last, lastOf([]byte(all)))
		}
		return r, ""
	}
	bare, msg := run(false)
	if msg != "" {
		return "without the layer: " + msg
	}
	under, msg := run(true)
	if msg != "" {
		return msg
	}
	if under.stdout != bare.stdout {
		return fmt.Sprintf("the program printed\n%s\nunder the layer, and\n%s\nwithout; framescope run said:\n%s", under.stdout, bare.stdout, lastOf([]byte(under.stderr)))
	}
	if msg := checkChildren(trace, b.Shape); msg != "" {
		return msg + "\nframescope run said:\n" + string(lastOf([]byte(under.stderr)))
	}
	if sig.Kills() {
		tr, err := readCut(trace)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "" // ended before its first batch
		case err != nil:
			return err.Error()
		}
		return strings.Join(b.CheckCut(tr), "\n")
	}
	if under.journal.Checksum != bare.journal.Checksum {
		return fmt.Sprintf("what the GPU wrote differs: checksum %s under the layer, %s without", under.journal.Checksum, bare.journal.Checksum)
	}
	tr, err := readTraceErr(trace)
	if err != nil {
		return err.Error()
	}
	if p := b.Check(tr, under.journal); len(p) > 0 {
		return strings.Join(p, "\n")
	}
	return ""
}

// readCut reads a trace that a signal may have cut: up to its last whole
// batch.
func readCut(path string) (*timeline.Trace, error) {
	tr, err := readTraceErr(path)
	var cut *perfetto.CutError
	if errors.As(err, &cut) && tr != nil {
		return tr, nil
	}
	if err != nil {
		return nil, err
	}
	return tr, nil
}

// checkChildren holds the traces beside trace to the shape's children:
// one for each that used Vulkan and was not a fork without exec (those
// pass through unprofiled), but those a signal kept from running, each whole, its books balanced, nothing lost,
// holding its submissions' zones.
func checkChildren(trace string, s loopcheck.Shape) string {
	var want []int
	for _, c := range s.Children {
		if c.Traces() && !(s.Signal.Kills() && c.At > s.Signal.At) {
			want = append(want, c.Subs)
		}
	}
	paths, err := filepath.Glob(strings.TrimSuffix(trace, ".perfetto-trace") + ".*.perfetto-trace")
	if err != nil {
		return err.Error()
	}
	var got []int
	for _, p := range paths {
		if strings.Contains(p, ".part") {
			continue // a later file of a long run's trace (NAME.partK), not a child's
		}
		tr, err := readTraceErr(p)
		if err != nil {
			return fmt.Sprintf("a child's trace: %v", err)
		}
		if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
			return fmt.Sprintf("%s: books %v do not balance: %+v, drops %+v", p, k, tr.Ledger, tr.Drops)
		}
		if d := tr.Drops.Total(); d != 0 {
			return fmt.Sprintf("%s: a child lost %d zones: %+v", p, d, tr.Drops)
		}
		n := map[string]int{}
		for _, z := range loopcheck.GPUZones(tr) {
			n[tr.Name(z.Name)]++
		}
		if n["c"] != n["command buffer"] || len(n) != 2 {
			return fmt.Sprintf("%s: a child's zones %v, want as many \"c\" as command buffers and nothing else", p, n)
		}
		got = append(got, n["c"])
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("traces beside -o: %v, holding %v submissions; the children that used Vulkan made %v", paths, got, want)
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
