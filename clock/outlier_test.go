package clock

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestClockModelWarmupOutlier: a sample 100 µs off among the first few,
// which screening does not see (it starts once the window holds
// clockMinKeep samples). The in-window rejection alone must drop it once
// the window holds clockMinKeep samples; from then on every conversion
// lies within its bound, and Quality counts the one outlier.
func TestClockModelWarmupOutlier(t *testing.T) {
	for _, bad := range []int{0, 1, 2, 3} {
		for _, sign := range []float64{1, -1} {
			rng := rand.New(rand.NewPCG(11, uint64(bad)))
			clk := lineClock{period: 1, rate: 1 + 10e-6, tick0: 1 << 40}
			now := 0.0
			m, err := New(Options{PeriodNs: 1, ValidBits: 64, Now: func() int64 { return int64(now) }})
			if err != nil {
				t.Fatal(err)
			}
			const n = 15 // all within WindowDur
			for i := 0; i < n; i++ {
				h := 1e9 + float64(i)*1e9
				now = h + 100e3
				s := clk.sample(rng, h, 3000, math.MaxUint64)
				if i == bad {
					s.Host += int64(sign * 100e3)
				}
				if err := m.Add(s); err != nil {
					t.Fatal(err)
				}
				if i+1 < clockMinKeep {
					continue // warm-up: the bound assumes honest samples
				}
				if q := m.Quality(); q.Outliers != 1 {
					t.Fatalf("bad sample %d (%+.0f µs): after sample %d, %d outliers counted, want 1", bad, sign*100, i, q.Outliers)
				}
				checkConv(t, m, clk, h+0.5e9)
			}
			q := m.Quality()
			if q.Outliers != 1 || q.Added != n || q.Samples != n-1 || q.Resets != 0 {
				t.Errorf("bad sample %d: quality %+v, want 1 outlier, %d added, %d in the window", bad, q, n, n-1)
			}
			if math.Abs(q.DriftPPM-10) > 0.5 || q.ErrNs > 10e3 {
				t.Errorf("bad sample %d: drift %.2f ppm (want 10), bound %.0f ns", bad, q.DriftPPM, q.ErrNs)
			}
		}
	}
}
