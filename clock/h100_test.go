package clock

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestClockModelH100 runs the model on calibration samples recorded on an
// NVIDIA H100 (driver 580.159, timestampPeriod 1 ns): every 0.5 s for
// 300 s, each the best of a burst of 8 vkGetCalibratedTimestamps calls
// (device, CLOCK_MONOTONIC), as the profiler takes them. Every other
// sample feeds the model at 1 Hz; the others are held out and converted
// with a hint one second late, as 64-bit ticks, as ticks cut to 32 bits
// (the H100's transfer family) by a 32-bit model, and by the 64-bit model
// through ConvertBits. A held-out sample is itself within
// its maxDeviation of the truth, so the conversion must land within the
// bound plus that deviation. The recorded clock ran 22.7-23.1 ppm slow,
// its rate moving up to 0.3 ppm/minute; maxDeviation was 2.8-3.6 us, yet
// held-out samples land within 0.3 us of the model (ScatterNs 28 ns).
func TestClockModelH100(t *testing.T) {
	ss := h100Samples(t)
	for _, bits := range []uint{64, 32} {
		t.Run(fmt.Sprintf("%dbit", bits), func(t *testing.T) {
			mask := uint64(math.MaxUint64)
			if bits < 64 {
				mask = 1<<bits - 1
			}
			now := int64(0)
			m, err := New(Options{PeriodNs: 1, ValidBits: bits, Now: func() int64 { return now }})
			if err != nil {
				t.Fatal(err)
			}
			var errs, bounds []float64
			for i, s := range ss {
				s.Device &= mask
				if i%2 == 0 {
					now = s.Host + 200e3
					if err := m.Add(s); err != nil {
						t.Fatal(err)
					}
					continue
				}
				h, e, ok := m.Convert(s.Device, s.Host+1e9)
				if !ok {
					t.Fatalf("sample %d not converted", i)
				}
				// A 32-bit family's tick through the 64-bit model.
				if h2, e2, ok2 := m.ConvertBits(s.Device&(1<<32-1), 32, s.Host+1e9); h2 != h || e2 != e || !ok2 {
					t.Fatalf("sample %d: ConvertBits(32) = %d ± %d, Convert = %d ± %d", i, h2, e2, h, e)
				}
				d := math.Abs(float64(h - s.Host))
				if d > float64(e+s.Deviation) {
					t.Errorf("sample %d: converted %d ns from its host time, beyond bound %d + deviation %d", i, h-s.Host, e, s.Deviation)
				}
				if i > 10 {
					errs, bounds = append(errs, d), append(bounds, float64(e))
				}
			}
			q := m.Quality()
			t.Logf("%d held out: |converted - host| p50 %.0f ns, p99 %.0f ns, max %.0f ns; bound p50 %.0f ns; quality %+v",
				len(errs), pct(errs, 0.5), pct(errs, 0.99), pct(errs, 1), pct(bounds, 0.5), q)
			if p99 := pct(errs, 0.99); p99 > 1000 {
				t.Errorf("p99 %.0f ns: the recorded samples agree to 0.3 us", p99)
			}
			if q.DriftPPM < -23.3 || q.DriftPPM > -22.5 || q.Outliers != 0 || q.Resets != 0 {
				t.Errorf("quality %+v, want drift about -23 ppm, no outlier, no reset", q)
			}
			if q.ScatterNs <= 0 || q.ScatterNs > 1000 || q.ScatterNs > q.ErrNs {
				t.Errorf("scatter %.0f ns, want about 0.1 us and below the bound", q.ScatterNs)
			}
		})
	}
}

// h100Samples reads testdata/h100-samples.txt, the samples described
// above: the first line is device tick, host ns and
// maxDeviation; each further line holds the differences of device tick
// and host time from the line before, and maxDeviation.
func h100Samples(t *testing.T) []Sample {
	t.Helper()
	var ss []Sample
	b, err := os.ReadFile("testdata/h100-samples.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d, h, dev int64
		if _, err := fmt.Sscan(l, &d, &h, &dev); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i > 0 {
			p := ss[i-1]
			d, h = int64(p.Device)+d, p.Host+h
		}
		ss = append(ss, Sample{Device: uint64(d), Host: h, Deviation: dev})
	}
	return ss
}
