package clock

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// simClock is a deterministic device clock against the host clock. Its
// rate error rho moves linearly within segments of 20-180 s, at most wander
// per ns (0.5 ppm/minute), and stays within 3 ppm of the base drift.
// Host times are ns since the simulation start; device time is ns of
// device clock since then; ticks are floor(device ns / period) + tick0.
type simClock struct {
	period float64
	tick0  int64
	segs   []simSeg
}

type simSeg struct {
	t, d, rho, drho float64 // host time, device time and rate at the start; rate slope
}

// wander05 is 0.5 ppm per minute, as a rate change per host ns.
const wander05 = 0.5e-6 / 60e9

func newSimClock(rng *rand.Rand, period, driftPPM, hours float64) *simClock {
	c := &simClock{period: period, tick0: int64(rng.Uint64N(1 << 50))}
	base := driftPPM * 1e-6
	t, d, rho := 0.0, 0.0, base
	end := hours * 3600e9
	for t <= end+60e9 {
		dur := (20 + 160*rng.Float64()) * 1e9
		drho := (2*rng.Float64() - 1) * wander05
		if rng.IntN(3) == 0 { // a third of the time, the steepest allowed
			drho = math.Copysign(wander05, drho)
		}
		if rho+drho*dur > base+3e-6 || rho+drho*dur < base-3e-6 {
			drho = -drho
		}
		c.segs = append(c.segs, simSeg{t: t, d: d, rho: rho, drho: drho})
		d += (1+rho)*dur + 0.5*drho*dur*dur
		rho += drho * dur
		t += dur
	}
	return c
}

// dev returns the device time at host time t.
func (c *simClock) dev(t float64) float64 {
	i := max(0, sort64(len(c.segs), func(i int) bool { return c.segs[i].t > t })-1)
	s := c.segs[i]
	u := t - s.t
	return s.d + (1+s.rho)*u + 0.5*s.drho*u*u
}

// tick returns the device tick at host time t.
func (c *simClock) tick(t float64) int64 {
	return c.tick0 + int64(math.Floor(c.dev(t)/c.period))
}

// hostOf returns the host time at which the device counter reached tick.
func (c *simClock) hostOf(tick int64) float64 {
	y := float64(tick-c.tick0) * c.period
	i := max(0, sort64(len(c.segs), func(i int) bool { return c.segs[i].d > y })-1)
	s := c.segs[i]
	k := y - s.d
	a := 1 + s.rho
	return s.t + 2*k/(a+math.Sqrt(a*a+2*s.drho*k))
}

func sort64(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// simCase is one simulated capture.
type simCase struct {
	name     string
	period   float64
	bits     uint
	driftPPM float64
	hours    float64
	cadence  float64 // seconds between calibrations
	perGap   int     // timestamps read back between two calibrations
	outliers float64 // probability of an outlier sample
	bursts   float64 // probability of a burst of 5 outliers starting
}

// simResult sums up one run.
type simResult struct {
	conversions, probes, failed int
	maxRatio                    float64
	errs, bounds                []float64 // of conversions
	probeErr, probeBound        []float64 // of extrapolations past the newest sample
	naiveErr1h                  float64
	worstAt                     float64 // s, where error/bound was worst
	q                           Quality
}

// runSim runs c and fails t on any conversion outside its bound or any
// non-monotonic pair of causal conversions.
func runSim(t *testing.T, c simCase, seed uint64) simResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	clk := newSimClock(rng, c.period, c.driftPPM, c.hours)
	const hostBase = 4e14 // a machine up for four and a half days
	simNow := 0.0
	m, err := New(Options{
		PeriodNs:  c.period,
		ValidBits: c.bits,
		Now:       func() int64 { return int64(hostBase + simNow) },
	})
	if err != nil {
		t.Fatal(err)
	}
	mask := uint64(math.MaxUint64)
	if c.bits < 64 {
		mask = 1<<c.bits - 1
	}
	type conv struct {
		tick int64
		host int64
	}
	var causal []conv
	var res simResult
	var naiveTick int64
	var naiveHost float64
	check := func(tick int64, hint float64, what string) (h int64, d, e float64, ok bool) {
		h, ei, ok := m.Convert(uint64(tick)&mask, int64(hostBase+hint))
		if !ok {
			res.failed++
			t.Errorf("%s: tick %d not converted", what, tick)
			return 0, 0, 0, false
		}
		truth := hostBase + clk.hostOf(tick)
		d, e = math.Abs(float64(h)-truth), float64(ei)
		if d/e > res.maxRatio {
			res.maxRatio, res.worstAt = d/e, clk.hostOf(tick)/1e9
		}
		if d > e {
			t.Errorf("%s at %.3f s: error %.0f ns beyond the bound %.0f ns", what, clk.hostOf(tick)/1e9, d, e)
		}
		return h, d, e, true
	}
	burst, burstOff := 0, 0.0
	n := int(c.hours * 3600 / c.cadence)
	for i := 0; i <= n; i++ {
		ts := float64(i)*c.cadence*1e9 + rng.Float64()*50e6
		tick := clk.tick(ts)
		dev := 2200 + 1000*rng.Float64()
		switch r := rng.Float64(); {
		case r < 0.03:
			dev = 8000 + 4300*rng.Float64()
		case r < 0.15:
			dev = 3200 + 4800*rng.Float64()
		}
		e := (2*rng.Float64() - 1) * dev
		warm := i >= clockMinKeep // warm-up samples are honest: see the model's docs
		if warm && burst == 0 && rng.Float64() < c.bursts {
			burst, burstOff = 5, math.Copysign(50e3+2e6*rng.Float64(), 2*rng.Float64()-1)
		}
		switch {
		case burst > 0:
			burst--
			e, dev = burstOff, 2500
		case warm && rng.Float64() < c.outliers:
			e = math.Copysign(50e3+5e6*rng.Float64(), 2*rng.Float64()-1)
			dev = 2500
		}
		host := int64(hostBase + ts + e)
		simNow = ts + 10e3 + 500e3*rng.Float64()
		if err := m.Add(Sample{Device: uint64(tick) & mask, Host: host, Deviation: int64(dev)}); err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
		if i == 0 {
			naiveTick, naiveHost = tick, float64(host)
		}
		// Timestamps read back until the next calibration: written
		// before their readback, converted with the hint at submit
		// time (a few ms before) or at readback.
		next := ts + c.cadence*1e9
		for k := 0; k < c.perGap; k++ {
			rb := simNow + (next-simNow)*rng.Float64()
			w := math.Max(0, rb-30e6*rng.Float64())
			hint := rb
			if k%2 == 1 {
				hint = math.Max(0, w-5e6*rng.Float64())
			}
			tk := clk.tick(w)
			if h, d, e, ok := check(tk, hint, "conversion"); ok {
				causal = append(causal, conv{tk, h})
				res.conversions++
				if ts >= 60e9 { // figures after a minute of warm-up
					res.errs = append(res.errs, d)
					res.bounds = append(res.bounds, e)
				}
			}
			if i == n && k == 0 {
				naive := naiveHost + float64(tk-naiveTick)*c.period
				res.naiveErr1h = math.Abs(naive - hostBase - clk.hostOf(tk))
			}
		}
		// Extrapolation 1, 5 and 30 calibration intervals past the newest
		// sample (not yet written: not part of the monotonicity check).
		if i%16 == 1 && ts >= 60e9 {
			for _, ahead := range []float64{1, 5, 30} {
				w := ts + ahead*c.cadence*1e9
				if _, d, e, ok := check(clk.tick(w), w, "extrapolation"); ok {
					res.probes++
					res.probeErr = append(res.probeErr, d)
					res.probeBound = append(res.probeBound, e)
				}
			}
		}
	}
	res.q = m.Quality()
	slices.SortFunc(causal, func(a, b conv) int { return int(a.tick - b.tick) })
	for i := 1; i < len(causal); i++ {
		if causal[i].host < causal[i-1].host {
			t.Errorf("not monotonic: tick %d -> %d, later tick %d -> %d",
				causal[i-1].tick, causal[i-1].host, causal[i].tick, causal[i].host)
			break
		}
	}
	return res
}

func pct(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func TestClockModelSimulated(t *testing.T) {
	cases := []simCase{
		{name: "H200 +10ppm 1ns 64bit 1Hz", period: 1, bits: 64, driftPPM: 9.8, hours: 1, cadence: 1, perGap: 10, outliers: 0.005, bursts: 0.001},
		{name: "H100 -20ppm 1ns 32bit 1Hz", period: 1, bits: 32, driftPPM: -19.6, hours: 1, cadence: 1, perGap: 10, outliers: 0.005, bursts: 0.001},
		{name: "Intel +10ppm 52.08ns 36bit 1Hz", period: 52.08, bits: 36, driftPPM: 10, hours: 1, cadence: 1, perGap: 10, outliers: 0.005, bursts: 0.001},
		{name: "sparse 32bit every 10s", period: 1, bits: 32, driftPPM: 9.8, hours: 2, cadence: 10, perGap: 3, outliers: 0.01, bursts: 0.002},
		{name: "noisy outliers 5%", period: 1, bits: 64, driftPPM: -19.6, hours: 0.5, cadence: 1, perGap: 4, outliers: 0.05, bursts: 0.01},
		// Wraps every 2^32*52.08 ns = 224 s: 16 wraps in the hour.
		{name: "52.08ns 32bit 1Hz", period: 52.08, bits: 32, driftPPM: -19.6, hours: 1, cadence: 1, perGap: 10, outliers: 0.005, bursts: 0.001},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(2*i + 1); seed <= uint64(2*i+2); seed++ {
				r := runSim(t, c, seed)
				if r.conversions == 0 || r.failed > 0 {
					t.Fatalf("%d conversions, %d failed", r.conversions, r.failed)
				}
				if r.q.Resets != 0 {
					t.Errorf("%d resets on a clock that never jumps", r.q.Resets)
				}
				if c.outliers > 0 && r.q.Outliers == 0 {
					t.Errorf("no outlier rejected")
				}
				if seed%2 == 0 {
					continue
				}
				t.Logf("%d conversions (figures after 1 min): error p50 %.0f ns, p99 %.0f ns, max %.0f ns; bound p50 %.0f ns, p99 %.0f ns",
					r.conversions, pct(r.errs, 0.5), pct(r.errs, 0.99), pct(r.errs, 1), pct(r.bounds, 0.5), pct(r.bounds, 0.99))
				t.Logf("%d extrapolations 1-30 intervals ahead: error p50 %.0f ns, max %.0f ns; bound p50 %.0f ns; worst error/bound of all %.2f at %.1f s",
					r.probes, pct(r.probeErr, 0.5), pct(r.probeErr, 1), pct(r.probeBound, 0.5), r.maxRatio, r.worstAt)
				t.Logf("after %.1f h: naive one-time calibration off by %.0f us; model quality %+v",
					c.hours, r.naiveErr1h/1e3, r.q)
			}
		})
	}
}
