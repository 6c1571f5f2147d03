package clockcheck

import (
	"math"
	"testing"

	"github.com/framescope/framescope/clock"
)

// Run's period figures from simulated samples of a counter with
// few valid bits, as submit-and-wait reads it from a query pool: the span
// must count the wraps, or the effective period, its ppm error and the
// naive error come out wrong once the counter wraps.
func TestClockCheckPeriodFiguresCountWraps(t *testing.T) {
	cases := []struct {
		name     string
		period   float64
		bits     uint32
		driftPPM float64
		tick0    uint64  // raw tick at the first sample
		seconds  float64 // span first to last
	}{
		{"H100 32bit 1ns, wraps twice", 1, 32, -22.7, 1<<32 - 1000, 10},
		{"32bit 1ns, no wrap", 1, 32, 9.8, 12345, 3},
		{"32bit 1ns, wraps just before the end", 1, 32, 9.8, 1<<32 - 3_999_000_000, 4},
		{"Intel 32bit 52.08ns, wraps once in 300 s", 52.08, 32, 10, 1<<32 - 5_000_000, 300},
		{"36bit 52.08ns", 52.08, 36, -19.6, 1<<36 - 1, 60},
		{"64bit 1ns", 1, 64, -22.7, 1 << 62, 10},
	}
	const host0 = int64(4e14)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mask := uint64(math.MaxUint64)
			if c.bits < 64 {
				mask = 1<<c.bits - 1
			}
			rate := 1 + c.driftPPM*1e-6 // device ns per host ns
			elapsed := int64(c.seconds * 1e9)
			want := uint64(math.Floor(float64(elapsed) * rate / c.period)) // ticks first to last
			first := clock.Sample{Device: c.tick0 & mask, Host: host0, Deviation: 2000}
			last := clock.Sample{Device: (c.tick0 + want) & mask, Host: host0 + elapsed, Deviation: 2000}
			if got := tickSpan(first.Device, last.Device, uint(c.bits), elapsed, c.period); got != want {
				t.Errorf("tickSpan = %d, want %d (%d wraps)", got, want, want>>min(c.bits, 63))
			}
			r := &Report{PeriodNs: c.period, ValidBits: c.bits}
			r.periodFigures(first, last)
			if math.Abs(r.Seconds-c.seconds) > 1e-9 {
				t.Errorf("Seconds %v, want %v", r.Seconds, c.seconds)
			}
			if wantEff := float64(elapsed) / float64(want); math.Abs(r.EffectivePeriod-wantEff) > 1e-9*wantEff {
				t.Errorf("EffectivePeriod %.9g ns, want %.9g ns", r.EffectivePeriod, wantEff)
			}
			if math.Abs(r.PeriodErrPPM-c.driftPPM) > 0.01 {
				t.Errorf("PeriodErrPPM %+.4f, want %+.4f", r.PeriodErrPPM, c.driftPPM)
			}
			// One sample at the nominal period is off by the drift over the span.
			wantNaive := float64(elapsed) * c.driftPPM * 1e-6
			if math.Abs(float64(r.NaiveErrNs)-wantNaive) > c.period+1 {
				t.Errorf("NaiveErrNs %d, want %.0f", r.NaiveErrNs, wantNaive)
			}
		})
	}
}
