package limits_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// Traces no recorder would write, as a reader may hand them over: spans
// that end before they start, times at the ends of int64, arrows to
// nothing, frames repeated, open or inside out, tracks missing. Of must
// not panic, and every frame it reports has a positive length, GPU busy
// and CPU busy within it, and gaps and busy tiling it.
func TestHostileTraces(t *testing.T) {
	times := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, 1000, math.MaxInt64 - 1, math.MaxInt64}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		at := func() int64 {
			if rng.IntN(4) == 0 {
				return times[rng.IntN(len(times))]
			}
			return rng.Int64N(100_000)
		}
		b := newBuilder()
		names := []string{"vkQueueSubmit", "vkWaitForFences", "vkQueuePresentKHR", "x"}
		for range rng.IntN(40) {
			tr := timeline.TrackID(rng.IntN(6))
			b.span(tr, names[rng.IntN(len(names))], at(), at(), uint16(rng.IntN(3)))
		}
		for range rng.IntN(10) {
			b.t.Flows = append(b.t.Flows, timeline.Flow{From: rng.IntN(50) - 5, To: rng.IntN(50) - 5})
		}
		for range rng.IntN(10) {
			b.frame(uint64(rng.IntN(4)), at(), at())
		}
		r := limits.Of(&b.t)
		for _, f := range r.Frames {
			gaps := int64(0)
			for _, g := range f.Gaps {
				gaps += g.End - g.Start
			}
			if f.Dur() <= 0 || f.GPUBusy < 0 || f.GPUBusy > f.Dur() || f.CPUBusy > f.Dur() || gaps+f.GPUBusy != f.Dur() {
				t.Fatalf("seed %d: frame [%d, %d): dur %d, GPU busy %d, CPU busy %d, gaps %d", seed, f.Start, f.End, f.Dur(), f.GPUBusy, f.CPUBusy, gaps)
			}
		}
	}
}
