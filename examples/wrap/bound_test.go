package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline/limits"
)

var (
	scheduleLine = regexp.MustCompile(`schedule: ([cg]+)\n`)
	gpuLine      = regexp.MustCompile(`gpu ns: ([ 0-9]*)\n`)
)

// Frames whose limit is known, made with the library: a CPU spin of 20
// ms, a fill of the GPU's waited for (128 MiB, or
// FRAMESCOPE_BOUND_FILL_MIB), or drawn between the two. Their
// trace calls each frame as the program drew it in 95% of frames or more,
// and its GPU busy is within 5% of the frame of the program's own
// timestamps around its fills in 95% of frames (within 20% in all).
func TestBoundFramesKnownLimit(t *testing.T) {
	for _, c := range []struct{ mode, seed string }{{"cpu", "1"}, {"gpu", "1"}, {"mixed", "46"}} {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			fill := cmpOr(os.Getenv("FRAMESCOPE_BOUND_FILL_MIB"), "128") // a fast GPU needs more to be bound by it
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
	r := limits.Of(tr)
	first := uint64(math.MaxUint64)
	for _, fr := range tr.Frames {
		first = min(first, fr.ID)
	}
	matched, near := 0, 0
	var wrong, far []string
	for _, fr := range r.Frames {
		k := int(fr.ID - first)
		d := math.Abs(float64(fr.GPUBusy)-own[k]) / float64(fr.Dur())
		if d <= 0.05 {
			near++
		} else {
			far = append(far, fmt.Sprintf("frame %d: GPU busy %v, %v by its own timestamps, of %v", fr.ID,
				time.Duration(fr.GPUBusy), time.Duration(own[k]), time.Duration(fr.Dur())))
		}
		if d > 0.20 {
			t.Errorf("%s: over 20%% of the frame apart", far[len(far)-1])
		}
		want := limits.CPU
		if schedule[k] == 'g' {
			want = limits.GPU
		}
		if fr.Limit == want {
			matched++
		} else {
			wrong = append(wrong, fmt.Sprintf("frame %d: %v, want %v (GPU busy %.2f, CPU busy %.2f of %v)", fr.ID, fr.Limit, want,
				float64(fr.GPUBusy)/float64(fr.Dur()), float64(fr.CPUBusy)/float64(fr.Dur()), time.Duration(fr.Dur())))
		}
	}
	n := len(r.Frames)
	t.Logf("%s: %d of %d frames as drawn; GPU busy within 5%% of the program's own in %d", schedule, matched, n, near)
	if n < len(schedule)-1 || 100*matched < 95*n {
		t.Errorf("%d of %d frames judged as drawn (of %d), want 95%%:\n%v", matched, n, len(schedule), wrong)
	}
	if 100*near < 95*n {
		t.Errorf("GPU busy within 5%% of the program's own in %d of %d frames, want 95%%:\n%v", near, n, far)
	}
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
