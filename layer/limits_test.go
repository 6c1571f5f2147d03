package layer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/knownlimits"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// What limits each frame, of programs whose answer is known
// (testdata/bound.c, a frame a submission): frames bound by the CPU (a
// spin of 20 ms after a small fill) are called CPU-bound, frames bound by
// the GPU (a fill of 128 MiB waited for; on a GPU set BOUND_FILL_MIB and
// BOUND_FILLS for some ms of it) GPU-bound, and a drawn schedule of both
// is followed frame by frame, in at least 95% of frames each; and the
// frames' GPU busy time is within 5% of the frame of what the program's
// own timestamps say, in at least 90% of frames, and within 20% in all
// but one in 20 (knownlimits.Check). (The layer's zone holds the command
// buffer, its own commands at either end too; lavapipe's "GPU" is threads
// of the CPU, which a loaded machine preempts between the program's last
// timestamp and the layer's: 3 frames of 58 over 5% once, under make
// test.) The first frame, which holds the program's start, is left out.
func TestFramesOfKnownLimitUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "bound")
	for _, c := range []struct {
		mode string
		args []string
	}{
		{"cpu", []string{"30"}},
		{"gpu", []string{"30"}},
		{"mixed", []string{"60", "46"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			tr, schedule, own := runBound(t, dir, prog, c.mode, c.args...)
			// Frame k+1 is the program's frame k; its first is left out.
			knownlimits.Check(t, tr, schedule, own, len(schedule)-2, func(f limits.Frame) int {
				if k := int(f.ID) - 1; k >= 1 {
					return k
				}
				return -1
			})
		})
	}
}

var (
	scheduleLine = regexp.MustCompile(`schedule: ([cg]+)\n`)
	gpuLine      = regexp.MustCompile(`gpu ns:([ 0-9]*)\n`)
)

// runBound runs bound's mode under the layer, a frame a submission, and
// returns the trace, the program's schedule and each of its frames' GPU
// time by its own timestamps (ns).
func runBound(t *testing.T, dir, prog, mode string, args ...string) (*timeline.Trace, string, []float64) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), mode+".perfetto-trace")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "framescope"), append([]string{"run", "-frame-every", "1", "-o", trace, "--", prog, mode}, args...)...)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	m, g := scheduleLine.FindSubmatch(out), gpuLine.FindSubmatch(out)
	if err != nil || m == nil || g == nil || !bytes.Contains(out, []byte("ok\n")) {
		t.Fatalf("bound %s %v under the layer: %v\n%s", mode, args, err, lastOf(out))
	}
	var own []float64
	for _, f := range strings.Fields(string(g[1])) {
		v, _ := strconv.ParseFloat(f, 64)
		own = append(own, v)
	}
	if len(own) != len(m[1]) {
		t.Fatalf("bound printed %d GPU times for %d frames", len(own), len(m[1]))
	}
	return readTrace(t, trace), string(m[1]), own
}

// framescope diff compares what limits the frames as it compares zones:
// a CPU-bound program against itself with twice the spin is a regression
// of its frames' CPU busy time, from 5 runs a side (3 give 20 splits,
// whose least p-value is the level itself), and its interval is slower,
// regressed or, where the max-T's other tests outweigh it, inconclusive;
// and the layer's CPU spans are compared run to run, their thread's
// track named alike in every run (by its place and name, not its ID).
func TestDiffSeesFramesSlowerUnderLayer(t *testing.T) {
	dir, prog := built(t), program(t, "bound")
	sides := []string{t.TempDir(), t.TempDir()}
	for run := range 5 {
		for i, spin := range []string{"10", "20"} {
			trace := filepath.Join(sides[i], fmt.Sprintf("run%d.perfetto-trace", run))
			cmd := exec.Command(filepath.Join(dir, "framescope"), "run", "-frame-every", "1", "-o", trace, "--", prog, "cpu", "20")
			cmd.Env = append(os.Environ(), "BOUND_SPIN_MS="+spin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("bound cpu 20 (spin %s ms): %v\n%s", spin, err, lastOf(out))
			}
		}
	}
	out, err := exec.Command(filepath.Join(dir, "framescope"), "diff", sides[0], sides[1]).CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("diff of a spin of 10 ms against 20 ms: exit %d, want 1 (regressed)\n%s", code, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`frame +frames +interval +5/5 .* \+[0-9.]+% .*(REGRESSED|inconclusive)`),
		regexp.MustCompile(`frame +frames +cpu busy .*REGRESSED`),
		regexp.MustCompile(`cpu +thread 1 \(bound\) +vkQueueSubmit +5/5 `),
	} {
		if !want.Match(out) {
			t.Errorf("diff does not say %s:\n%s", want, out)
		}
	}
}

func exitCode(err error) int {
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
