// Package clock converts GPU timestamps to the host's CLOCK_MONOTONIC: a
// drift-aware model fitted to calibration samples (pairs of device tick and
// host time, as vkGetCalibratedTimestamps returns them), which gives every
// converted time an error bound.
//
//	m, err := clock.New(clock.Options{PeriodNs: 1, ValidBits: 64})
//	// once a second, from a calibration goroutine:
//	err = m.Add(clock.Sample{Device: tick, Host: hostNs, Deviation: maxDeviationNs})
//	// on any goroutine, for each timestamp read back:
//	host, errNs, ok := m.Convert(raw, timeline.Now())
//
// The profiler runs one [Model] per GPU queue and calibrates it in the
// background (GPU.Clock returns it); this package is for tools that take
// their own samples, and for reading what the profiler's model states
// ([Model.Quality]). [Model.ConvertBits] converts ticks cut to fewer bits
// than the model's, as a queue family with fewer timestampValidBits writes
// them.
//
// # Input
//
// A [Sample] pairs a raw device tick D (masked to the queue's
// timestampValidBits) with a host time H and the sample's deviation dev
// (vkGetCalibratedTimestamps' maxDeviation, or the round trip of a
// submit-and-wait probe). The model assumes |H - h(D)| <= dev + P, where
// h(x) is the host time at which the device counter reached x and P is
// the timestamp period (the +P covers the tick's own quantization).
//
// # Fit
//
// Raw ticks are first extended to 64 bits and counted
// from the first sample, x = tick - base. The window holds the newest
// Window samples no older than WindowDur, but at least five whatever their
// age, so that one bad sample is always outvoted. Each refit:
//
//  1. Robust line: the Theil-Sen slope (median of pairwise slopes) and the
//     median intercept. Residuals are divided by each sample's dev+P; a
//     sample whose normalized residual exceeds max(5*s, 4), s being 1.4826
//     times the median normalized residual, is dropped as an outlier. Not
//     below five samples: with three or four, one bad sample bends the
//     median line, the step drops a good one instead, and the bad one
//     never leaves the window.
//  2. Weighted least squares on the rest, weights w = 1/(dev+P)^2:
//     h(x) ~ ybar + b*(x - xbar).
//  3. The slope is clamped to the period allowed by MaxDriftPPM, so that
//     the mapping always increases.
//
// Once the window holds five samples, a new sample is first screened
// against the current line: if it is off by more than 3*(E(x)+dev+P) (E
// below) it is held as a suspect, not fitted. A single bad sample, or a
// burst of up to 15 of them, cannot capture the fit. 16 consecutive
// suspects of which at least three quarters agree on a line mean that the
// device clock itself jumped (AMD counter resets, epochs): the model
// restarts from those and counts a Reset ([Quality].Resets). Warm-up: the first five samples
// are not screened and the bound assumes they are honest; from five on,
// the in-window step rejects a bad one among them. Take the first
// calibration as a quick burst of samples to shorten the warm-up.
//
// # Error bound
//
// The fitted value at x is a linear combination sum c_i(x)*H_i with
// c_i(x) = w_i/S + w_i*d_i*(x-xbar)/Sxx (d_i = x_i - xbar, S = sum w,
// Sxx = sum w*d^2). Two hard terms bound its error:
//
//   - noise: sum |c_i(x)| * dv_i, with dv_i = max(dev_i+P, |residual_i|);
//   - wander: if the rate moves by at most Wander (ppm/minute), the curve
//     h(x) bends by at most k = P^2*Wander per tick^2, and the fit's bias
//     is at most (k/2) * sum |c_i(x)| * (x_i - x)^2.
//
// Both are computed exactly at the newest sample x_c and expanded in
// a = |x - x_c| into E(x) = p0 + p1*a + p2*a^2 + p3*a^3 with nonnegative
// coefficients, valid on both sides of x_c: p1 contains the slope's
// uncertainty sum |w_i*d_i/Sxx|*dv_i ("rate uncertainty x distance"), p2
// and p3 the rate-wander allowance. The bound does not assume samples are
// independent, so it holds for systematic errors too; it is therefore
// about the samples' own deviation, not deviation/sqrt(N). With one
// sample, or when the slope is less certain than MaxDriftPPM, the model
// uses the nominal period anchored at the newest sample and
// E = dev + P + P*MaxDrift*a + (k/2)*a^2.
//
// # Guarantees
//
// A snapshot is a chain of linear segments, each with its own bound
// polynomial; the last one is the current fit, extrapolated at its rate.
// When a refit is published, the previous snapshot A stays in force up to
// the freeze point xf: the tick A predicts for host time T+E_A, where T is
// the publication time (Now, clamped to [H, H+1s] of the new sample) and
// E_A is A's bound there. Every tick that was written before T lies at or
// before xf if A's bound held. From xf the mapping slews to the new fit at
// a rate of at most 1000 ppm (a 5 us correction takes 5 ms of ticks), then
// follows it. So:
//
//   - Within one snapshot, conversion is non-decreasing in the extended
//     tick, and continuous up to 1 ns rounding (no steps, even across
//     segments).
//   - A refit never changes the conversion of any extended tick at or
//     before its freeze point; freeze points never move back. Hence, for
//     ticks converted no earlier than they were written, a later tick
//     never maps to an earlier host time, whichever snapshots converted
//     them and in whatever order.
//   - Segments of at least the last 4096 refits are kept (over an hour at
//     one refit a second, 1 MiB at most); older ticks are converted by the
//     oldest kept segment, still monotonic within the snapshot.
//   - A Reset (counted in Quality) starts a new chain; the guarantees
//     hold between resets.
//
// Between freeze points the mapping is thus the linear interpolation of
// frozen knots on successive fits; after the newest one it extrapolates at
// the current rate with E growing as above. Re-interpolating the past
// with a newer fit would move ticks that were already converted, by up to
// a correction, and break the second guarantee; extrapolating a fresh fit
// over one calibration interval costs little.
//
// # Measured
//
// Verified in simulation (TestClockModelSimulated and 200 more seeded runs
// checked while tuning): drift +10, -20 and +50 ppm, rate moving at the
// 0.5 ppm/minute limit, deviations 2.2-12.3 us, periods 1 and 52.08 ns,
// 32-, 36- and 64-bit counters, outliers (50 us-5 ms, 0.5-5%) and bursts
// of five, calibration every 0.1, 1, 3 and 10 s: every conversion lies
// within its stated bound (the worst error/bound ratio, 0.97, comes in the
// warm-up with two samples; after it about 0.5) and conversions are
// monotonic over simulated hours. At 1 s calibration the error after
// warm-up is 0.52 us p50, 1.9 us p99, 2.9 us max, against a bound of 5.2
// us p50, 7.0 us p99; a one-time calibration at the nominal period is 35
// ms off after an hour at 10 ppm, 71 ms at 20 ppm. Calibrating every 10 s
// with a 32-bit counter: 1.6 us p50, 6.6 us p99, bound 9.1 us p50.
// Extrapolating 30 s past the newest sample: 12 us worst.
//
// On 300 s of samples recorded on an H100 (TestClockModelH100, from
// testdata/h100-samples.txt; drift
// -22.7 to -23.1 ppm, maxDeviation about 3 us), samples held out of the
// 1 Hz fit land 60 ns p50, 0.32 us max from their conversion, against a
// bound of 5.9 us: the hard bound is honest but, as maxDeviation is, far
// wider than the agreement the samples show ([Quality].ScatterNs).
//
// # Concurrency
//
// [Model.Add], [Model.Quality] and [Model.Calibration] take a mutex;
// [Model.Convert] does not: it loads
// an immutable snapshot through an atomic pointer, allocates nothing, and
// may run on any number of goroutines alongside Add.
package clock
