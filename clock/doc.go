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
// them; [Model.ConvertSpan] converts a zone's two ticks with one snapshot
// of the model.
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
// # Fit, bound and guarantees
//
// The model fits the window of recent samples robustly (a Theil-Sen line
// drops outliers, weighted least squares fits the rest), screens each new
// sample against the current line (a burst of up to 15 bad samples cannot
// capture it; 16 in a row, three quarters of them on one new line, mean
// the device clock jumped, counted as a Reset), and bounds every
// conversion's error by the samples' own deviations plus an allowance for
// the rate's wander, growing with the distance from the newest sample.
// Within a snapshot conversion never decreases, and a refit never changes
// the conversion of a tick written before it was published (when the
// previous bound held): a later tick never maps to an earlier host time,
// whichever snapshot converted it. The
// derivation, the exact bound, and the figures measured in simulation and
// on an H100 are in docs/design.md of the repository.
//
// # Concurrency
//
// [Model.Add], [Model.Quality] and [Model.Calibration] take a mutex;
// [Model.Convert] and [Model.ConvertSpan] do not: they load an immutable
// snapshot through an atomic pointer, allocate nothing, and may run on
// any number of goroutines alongside Add.
package clock
