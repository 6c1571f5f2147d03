package clockcheck

import (
	"fmt"
	"io"
	"math"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/stats"
)

// Summary describes a sample of values in ns: count, sum (saturated),
// mean, extremes and percentiles interpolated between order statistics.
type Summary struct {
	Count         int
	Total         int64
	Mean          float64
	Min           int64
	P50, P95, P99 float64
	Max           int64
}

func summarize(xs []int64) Summary {
	s := stats.Summarize(xs)
	return Summary{Count: s.Count, Total: s.Total, Mean: s.Mean, Min: s.Min, P50: s.P50, P95: s.P95, P99: s.P99, Max: s.Max}
}

// Report is what Run measured.
type Report struct {
	Device, Driver  string
	Method          string  // calibrated timestamps extension, or "submit-and-wait"
	Clock           string  // the host clock
	Seconds         float64 // measured span
	PeriodNs        float64 // timestampPeriod as reported
	ValidBits       uint32
	EffectivePeriod float64 // measured ns per tick, first to last sample
	PeriodErrPPM    float64 // timestampPeriod against the measured period

	Samples      int     // held-out samples
	MaxDeviation Summary // per calibration call, ns
	CallCost     Summary // one calibration call, ns
	Fits         int     // calibration rounds fed to the model

	// Residual: |model prediction - actual host time| on held-out samples, ns.
	Residual Summary
	// OutsideBound counts held-out samples whose residual exceeded the
	// model's stated bound plus the sample's own deviation.
	OutsideBound int
	Model        clock.Quality

	CausalityTries      int
	CausalityViolations int
	CausalityLag        Summary // converted GPU time minus host set time, ns

	// NaiveErrNs is what one start-up sample with the nominal period would
	// have got wrong at the end, ns; ModelErrNs is the model's residual
	// there.
	NaiveErrNs, ModelErrNs int64
}

// periodFigures sets Seconds, EffectivePeriod, PeriodErrPPM and NaiveErrNs
// from the first and last samples, whose ticks count r.ValidBits bits.
func (r *Report) periodFigures(first, last clock.Sample) {
	elapsed := last.Host - first.Host
	r.Seconds = float64(elapsed) / 1e9
	ticks := tickSpan(first.Device, last.Device, uint(r.ValidBits), elapsed, r.PeriodNs)
	if ticks > 0 {
		r.EffectivePeriod = float64(elapsed) / float64(ticks)
		r.PeriodErrPPM = (r.PeriodNs/r.EffectivePeriod - 1) * 1e6
	}
	naive := first.Host + int64(math.Round(float64(ticks)*r.PeriodNs))
	r.NaiveErrNs = naive - last.Host
}

// tickSpan returns how many ticks a counter of validBits bits advanced from
// raw value first to raw value last over elapsed host ns: their difference
// in the low bits, plus the whole wraps that elapsed implies at periodNs.
// Submit-and-wait samples come from a query pool and wrap (every 4.3 s with
// 32 bits at 1 ns); the count is right while periodNs is off by less than
// half a wrap over elapsed (500 ppm over 10 s is 5 ms, a wrap 4.3 s).
func tickSpan(first, last uint64, validBits uint, elapsed int64, periodNs float64) uint64 {
	if validBits == 0 || validBits >= 64 {
		return last - first
	}
	mask := uint64(1)<<validBits - 1
	d := (last - first) & mask
	wraps := math.Round((float64(elapsed)/periodNs - float64(d)) / float64(mask+1))
	if !(wraps > 0) || wraps > float64(uint64(1)<<(64-validBits)-1) {
		return d
	}
	return d + uint64(wraps)<<validBits
}

func absI(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	us := func(ns float64) string { return fmt.Sprintf("%.3f µs", ns/1e3) }
	fmt.Fprintf(w, "device:               %s (%s)\n", r.Device, r.Driver)
	fmt.Fprintf(w, "calibration:          %s against %s; %d rounds fed to the model over %.1f s\n", r.Method, r.Clock, r.Fits, r.Seconds)
	fmt.Fprintf(w, "timestampPeriod:      %.6g ns (valid bits %d); measured %.9g ns: the reported period is off by %+.3f ppm\n",
		r.PeriodNs, r.ValidBits, r.EffectivePeriod, r.PeriodErrPPM)
	fmt.Fprintf(w, "maxDeviation:         p50 %s, p99 %s, max %s (%d calls)\n",
		us(r.MaxDeviation.P50), us(r.MaxDeviation.P99), us(float64(r.MaxDeviation.Max)), r.MaxDeviation.Count)
	fmt.Fprintf(w, "one calibration call: p50 %s, p99 %s, max %s\n",
		us(r.CallCost.P50), us(r.CallCost.P99), us(float64(r.CallCost.Max)))
	fmt.Fprintf(w, "model residual:       p50 %s, p99 %s, max %s on %d held-out samples; %d outside the stated bound\n",
		us(r.Residual.P50), us(r.Residual.P99), us(float64(r.Residual.Max)), r.Residual.Count, r.OutsideBound)
	ratio := 0.0
	if r.MaxDeviation.P50 > 0 {
		ratio = r.Residual.P99 / r.MaxDeviation.P50
	}
	fmt.Fprintf(w, "                      residual p99 / median maxDeviation = %.2f (goal <= 2)\n", ratio)
	fmt.Fprintf(w, "model now:            drift %+.3f ppm, bound %s, %d samples in window, %d outliers rejected\n",
		r.Model.DriftPPM, us(r.Model.ErrNs), r.Model.Samples, r.Model.Outliers)
	fmt.Fprintf(w, "causality violations: %d\n", r.CausalityViolations)
	fmt.Fprintf(w, "causality lag:        p50 %s, p99 %s, min %s over %d tries (GPU timestamp after a host vkSetEvent, converted, minus the host time of the set)\n",
		us(r.CausalityLag.P50), us(r.CausalityLag.P99), us(float64(r.CausalityLag.Min)), r.CausalityTries)
	fmt.Fprintf(w, "one start-up calibration with the nominal period would be off by %s at the end; the model is off by %s\n",
		us(float64(r.NaiveErrNs)), us(float64(r.ModelErrNs)))
}
