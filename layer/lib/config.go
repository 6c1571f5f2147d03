package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/framescope/framescope/internal/tracesplit"
)

// config is what `framescope run` asks of the layer, through the
// environment (each variable is named for its flag).
type config struct {
	out          string        // FRAMESCOPE_OUT ("": named after the program, in outDir)
	outDir       string        // FRAMESCOPE_OUT_DIR: where a trace without -o goes
	runDir       string        // FRAMESCOPE_RUN_DIR: the run's claims and records (claimPath)
	frameEvery   uint64        // FRAMESCOPE_FRAME_EVERY: a frame every N submissions (0: at presents)
	window       int           // FRAMESCOPE_WINDOW: a flight recorder of N frames (0: stream them all)
	cpuBudget    time.Duration // FRAMESCOPE_CPU_BUDGET, with the window
	gpuBudget    time.Duration // FRAMESCOPE_GPU_BUDGET, with the window
	renderStages bool          // FRAMESCOPE_RENDER_STAGES: Perfetto's GPU tracks too (default on)
	live         string        // FRAMESCOPE_LIVE: the live view's address ("": none)
	// fileSpans, from FRAMESCOPE_TEST_FILE_SPANS, a knob for tests:
	// lowers the slices (spans and frames) a file of the trace holds
	// before the trace goes on in the next (0: tracesplit.FileSlices).
	fileSpans int
	// firstTimed, from FRAMESCOPE_TEST_FIRST_TIMED, a knob for tests:
	// lowers the wait before the first frame of a program that never
	// presents (record.go's firstTimed, the most it may be).
	firstTimed time.Duration
	// stacks, from FRAMESCOPE_TEST_STACKS, a knob for tests: when to say
	// where every thread is (stacks.go; 0: never).
	stacks time.Duration
	record string // this process's record in the run directory ("": none)
}

// Bounds of the layer's options, which `framescope run` checks first.
const (
	maxFrameEvery = 1 << 20
	maxWindow     = 1 << 16
)

// readConfig reads the environment; a value it cannot take is said, and
// left at its default.
func readConfig() config {
	c := config{out: os.Getenv("FRAMESCOPE_OUT"), outDir: os.Getenv("FRAMESCOPE_OUT_DIR"),
		runDir: os.Getenv("FRAMESCOPE_RUN_DIR"), renderStages: true, live: os.Getenv("FRAMESCOPE_LIVE")}
	num := func(key string, most uint64) uint64 {
		v := os.Getenv(key)
		if v == "" {
			return 0
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > most {
			fmt.Fprintf(os.Stderr, "framescope layer: %s=%q: want an integer from 0 to %d; ignored\n", key, v, most)
			return 0
		}
		return n
	}
	dur := func(key string) time.Duration {
		v := os.Getenv(key)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "framescope layer: %s=%q: want a duration such as 16ms; ignored\n", key, v)
			return 0
		}
		return d
	}
	c.frameEvery = num("FRAMESCOPE_FRAME_EVERY", maxFrameEvery)
	c.window = int(num("FRAMESCOPE_WINDOW", maxWindow))
	c.fileSpans = int(num("FRAMESCOPE_TEST_FILE_SPANS", tracesplit.FileSlices))
	c.cpuBudget, c.gpuBudget = dur("FRAMESCOPE_CPU_BUDGET"), dur("FRAMESCOPE_GPU_BUDGET")
	c.firstTimed = firstTimed
	if d := dur("FRAMESCOPE_TEST_FIRST_TIMED"); d > 0 {
		c.firstTimed = min(d, firstTimed)
	}
	c.stacks = dur("FRAMESCOPE_TEST_STACKS")
	if v := os.Getenv("FRAMESCOPE_RENDER_STAGES"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "framescope layer: FRAMESCOPE_RENDER_STAGES=%q: want true or false; ignored\n", v)
		} else {
			c.renderStages = b
		}
	}
	return c
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// A trace's name. Under `framescope run` (FRAMESCOPE_RUN_DIR set), the
// first process of the run to make a Vulkan device claims -o by making
// the run directory's "owner" file (O_EXCL: one process wins, whether
// they run at once or one after another); every other process writes its
// own trace beside it, NAME.ID.perfetto-trace (NAME: -o less its
// .perfetto-trace; ID: the process's pid, with -K after it for the K-th
// image an exec made of a process already recorded). Each process
// records its trace in the run directory, in a file named ID (the trace,
// its temporary name, the program), for `framescope run` to report.
// Without the run directory the trace is FRAMESCOPE_OUT, or
// framescope-PROGRAM-PID.perfetto-trace.
const (
	traceSuffix = ".perfetto-trace"
	ownerFile   = "owner"
	// maxImages bounds the images of one process that are recorded.
	maxImages = 64
)

// claimPath decides c.out, the trace this process writes, and records it.
func (c *config) claimPath() {
	prog, pid := baseName(os.Args[0]), strconv.Itoa(os.Getpid())
	if c.runDir == "" {
		if c.out == "" {
			c.out = "framescope-" + prog + "-" + pid + traceSuffix
		}
		return
	}
	want := c.out
	if want == "" {
		want = filepath.Join(c.outDir, prog+traceSuffix)
	}
	rec, id, err := newRecord(c.runDir, pid)
	if err != nil {
		c.out = beside(want, pid)
		fmt.Fprintf(os.Stderr, "framescope layer: %v: this process writes %s, which framescope run will not list\n", err, c.out)
		return
	}
	defer rec.Close()
	c.record = filepath.Join(c.runDir, id)
	c.out = beside(want, id)
	if claimOwner(c.runDir, id) {
		c.out = want
	}
	fmt.Fprintf(rec, "%s\n%s\n%s\n", c.out, tmpPath(c.out), prog)
}

// newRecord makes this process's record in dir: ID is pid, or pid-K
// where an earlier image of the process (before an exec) made pid.
func newRecord(dir, pid string) (*os.File, string, error) {
	for k := range maxImages {
		id := pid
		if k > 0 {
			id += "-" + strconv.Itoa(k)
		}
		f, err := os.OpenFile(filepath.Join(dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("recording the trace: %w", err)
		}
	}
	return nil, "", fmt.Errorf("recording the trace: process %s has made more than %d images (exec), the most recorded", pid, maxImages)
}

// claimOwner makes the run's owner file, naming id, and reports whether
// it did: whether this process is the first of the run to write a trace.
func claimOwner(dir, id string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false
	}
	fmt.Fprintln(f, id)
	f.Close()
	return true
}

// beside is the trace of process id beside path: NAME.ID.perfetto-trace.
func beside(path, id string) string {
	return strings.TrimSuffix(path, traceSuffix) + "." + id + traceSuffix
}

// partPath is the k-th file (from 2) of the trace at path, once the
// first holds what a reader takes: NAME.partK.perfetto-trace.
func partPath(path string, k int) string {
	return strings.TrimSuffix(path, traceSuffix) + ".part" + strconv.Itoa(k) + traceSuffix
}

// recordPart adds the k-th file of the trace, path, to the process's
// record, in one write: its path and temporary name, a line each.
func (c *config) recordPart(path string) error {
	if c.record == "" {
		return nil
	}
	f, err := os.OpenFile(c.record, os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(path + "\n" + tmpPath(path) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tmpPath is where the trace at path is written until it holds a batch.
func tmpPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
}
