package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/knownlimits"
	"github.com/framescope/framescope/timeline/limits"
)

var (
	scheduleLine = regexp.MustCompile(`schedule: ([cg]+)\n`)
	gpuLine      = regexp.MustCompile(`gpu ns: ([ 0-9]*)\n`)
)

// Frames whose limit is known, made with the library: a CPU spin of 20
// ms, a fill of the GPU's waited for (512 MiB, or
// FRAMESCOPE_BOUND_FILL_MIB), or drawn between the two. Their
// trace calls each frame as the program drew it in 95% of frames or more,
// and its GPU busy is within 5% of the frame of the program's own
// timestamps around its fills in 90% of frames (within 20% in all but one in 20).
func TestBoundFramesKnownLimit(t *testing.T) {
	for _, c := range []struct{ mode, seed string }{{"cpu", "1"}, {"gpu", "1"}, {"mixed", "46"}} {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			// 512 MiB: under make test's load and -race, a frame's own CPU work
			// took up to 8 ms, as long as a 128 MiB fill on lavapipe.
			fill := cmpOr(os.Getenv("FRAMESCOPE_BOUND_FILL_MIB"), "512")
			out := runWrap(t, dir, "-bound", c.mode, "-frames", "40", "-seed", c.seed, "-fill-mib", fill)
			m, g := scheduleLine.FindStringSubmatch(out), gpuLine.FindStringSubmatch(out)
			if m == nil || g == nil {
				t.Fatalf("no schedule or GPU times in %q", out)
			}
			var own []float64
			for _, f := range strings.Fields(g[1]) {
				v, _ := strconv.ParseFloat(f, 64)
				own = append(own, v)
			}
			checkBound(t, filepath.Join(dir, "wrap.perfetto-trace"), m[1], own)
		})
	}
}

func checkBound(t *testing.T, path, schedule string, own []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := perfetto.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	first := uint64(math.MaxUint64)
	for _, fr := range tr.Frames {
		first = min(first, fr.ID)
	}
	knownlimits.Check(t, tr, schedule, own, len(schedule)-1, func(f limits.Frame) int { return int(f.ID - first) })
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
