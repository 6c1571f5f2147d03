package timeline

// The calibrated clock model: device ticks to host CLOCK_MONOTONIC ns.
//
// # Input
//
// A ClockSample pairs a raw device tick D (masked to the queue's
// timestampValidBits) with a host time H and the sample's deviation dev
// (vkGetCalibratedTimestamps' maxDeviation, or the round trip of a
// submit-and-wait probe). The model assumes |H - h(D)| <= dev + P, where
// h(x) is the host time at which the device counter reached x and P is
// the timestamp period (the +P covers the tick's own quantization).
//
// # Fit
//
// Raw ticks are first extended to 64 bits (calib_wrap.go) and counted
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
// restarts from those and counts a Reset. Warm-up: the first five samples
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
//   - A Reset (counted in ClockQuality) starts a new chain; the guarantees
//     hold between resets.
//
// Between freeze points the mapping is thus the linear interpolation of
// frozen knots on successive fits; after the newest one it extrapolates at
// the current rate with E growing as above. Re-interpolating the past
// with a newer fit would move ticks that were already converted, by up to
// a correction, and break the second guarantee; extrapolating a fresh fit
// over one calibration interval costs little (see calib_sim_test.go).
//
// Verified in the simulation (calib_sim_test.go; 200 more seeded runs were
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
// On 300 s of samples recorded on an H100 (calib_h100_test.go; drift
// -22.7 to -23.1 ppm, maxDeviation about 3 us), samples held out of the
// 1 Hz fit land 60 ns p50, 0.32 us max from their conversion, against a
// bound of 5.9 us: the hard bound is honest but, as maxDeviation is, far
// wider than the agreement the samples show (ClockQuality.ScatterNs).
//
// # Concurrency
//
// Add, Quality and Calibration take a mutex; Convert does not: it loads
// an immutable snapshot through an atomic pointer, allocates nothing, and
// may run on any number of goroutines alongside Add.

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// ClockSample is one calibration sample of a device clock against the
// host clock.
type ClockSample struct {
	Device    uint64 // raw device tick; bits above ValidBits are ignored
	Host      int64  // host CLOCK_MONOTONIC, ns
	Deviation int64  // how far Host may be from the tick's true host time, ns; >= 1
}

// ClockConfig describes a device clock and how to fit it. Zero optional
// fields take the defaults below.
type ClockConfig struct {
	PeriodNs  float64 // timestampPeriod: nominal ns per tick, > 0 (Intel: 52.08)
	ValidBits uint    // timestampValidBits, 1..64

	Window    int           // most samples in the fit; default 32, 2..1024; 5 or more to reject outliers
	WindowDur time.Duration // oldest sample age in the fit; default 20s
	// WanderPPMPerMin bounds how fast the device clock's rate moves
	// against the host's; default 0.5 ppm per minute.
	WanderPPMPerMin float64
	// MaxDriftPPM bounds the device clock's rate error; default 500 ppm.
	MaxDriftPPM float64
	// Now reads the host clock when a refit is published, to place its
	// freeze point (see Guarantees atop calib_model.go); default Now.
	// Simulations and replays set their own.
	Now func() int64
}

// Defaults of ClockConfig.
const (
	DefaultClockWindow       = 32
	DefaultClockWindowDur    = 20 * time.Second
	DefaultClockWanderPPMMin = 0.5
	DefaultClockMaxDriftPPM  = 500
)

// ClockQuality is how good the clock model is now.
type ClockQuality struct {
	ErrNs    float64 // error bound of a conversion at the newest sample, ns
	DriftPPM float64 // device clock rate against the host, minus 1, in ppm
	// ScatterNs is how well the fitted samples agree with each other:
	// 1.4826 times their median absolute residual, ns. Not a bound: it
	// cannot see an error all samples share, which ErrNs covers. On an
	// H100 it was 28 ns, with maxDeviation about 3 us and ErrNs 5.5 us.
	ScatterNs float64
	Samples   int    // samples in the fit window
	LastHost  int64  // host time of the newest fitted sample; 0 before any
	Added     uint64 // samples accepted into the fit
	Outliers  uint64 // samples rejected as outliers
	Resets    uint64 // times the model restarted after a device clock jump
}

// Errors returned by NewClockModel and Add; match them with errors.Is.
var (
	ErrClockConfig = errors.New("timeline: invalid clock config")
	ErrClockSample = errors.New("timeline: invalid clock sample")
)

// Tuning constants of the model; see the comment block above.
const (
	clockScreenK    = 3       // screening tolerance, in bounds
	clockRejectK    = 5       // in-window rejection, in robust scales
	clockRejectMin  = 4       // in-window rejection floor, in deviations
	clockResetAfter = 16      // consecutive agreeing suspects that reset
	clockMinKeep    = 5       // samples kept whatever their age
	clockSlewMax    = 1e-3    // most relative rate change while slewing
	clockMaxSegs    = 1 << 14 // segments kept; halved when full
	clockPublishLag = int64(time.Second)
	clockLimit      = float64(1 << 62) // conversions beyond this fail
)

// ClockModel converts the ticks of one device clock (one VkDevice) to host
// time. Create it with NewClockModel; feed it with Add from a background
// goroutine; read it with Convert, or ConvertBits for a queue family with
// fewer valid bits, on any goroutine.
type ClockModel struct {
	snap atomic.Pointer[clockSnap]

	mu       sync.Mutex
	cfg      ClockConfig
	period   float64 // P
	drift    float64 // MaxDriftPPM as a fraction
	kappa    float64 // curvature bound, host ns per tick^2
	mask     uint64
	started  bool
	base     uint64 // extended tick of x = 0
	lastHost int64  // newest sample seen, fitted or not
	win      []clockPoint
	suspects []clockPoint
	fit      clockFit
	segs     []clockSeg // append-only: snapshots share its prefix
	freeze   int64
	added    uint64
	outliers uint64
	resets   uint64
	scratch  []float64
	keep     []bool
}

// clockPoint is a sample in the model's frame.
type clockPoint struct {
	x   int64 // extended tick - base
	h   int64 // host ns
	dev float64
}

// NewClockModel validates cfg and returns an empty model.
func NewClockModel(cfg ClockConfig) (*ClockModel, error) {
	if !(cfg.PeriodNs > 0) || math.IsInf(cfg.PeriodNs, 0) || cfg.PeriodNs > 1e12 {
		return nil, fmt.Errorf("%w: PeriodNs %v, want a finite number > 0", ErrClockConfig, cfg.PeriodNs)
	}
	if cfg.ValidBits < 1 || cfg.ValidBits > 64 {
		return nil, fmt.Errorf("%w: ValidBits %d, want 1..64", ErrClockConfig, cfg.ValidBits)
	}
	switch {
	case cfg.Window == 0:
		cfg.Window = DefaultClockWindow
	case cfg.Window < 2 || cfg.Window > 1024:
		return nil, fmt.Errorf("%w: Window %d, want 2..1024", ErrClockConfig, cfg.Window)
	}
	switch {
	case cfg.WindowDur == 0:
		cfg.WindowDur = DefaultClockWindowDur
	case cfg.WindowDur < 0:
		return nil, fmt.Errorf("%w: WindowDur %v, want > 0", ErrClockConfig, cfg.WindowDur)
	}
	switch {
	case cfg.WanderPPMPerMin == 0:
		cfg.WanderPPMPerMin = DefaultClockWanderPPMMin
	case !(cfg.WanderPPMPerMin > 0) || cfg.WanderPPMPerMin > 1e6:
		return nil, fmt.Errorf("%w: WanderPPMPerMin %v, want 0..1e6", ErrClockConfig, cfg.WanderPPMPerMin)
	}
	switch {
	case cfg.MaxDriftPPM == 0:
		cfg.MaxDriftPPM = DefaultClockMaxDriftPPM
	case !(cfg.MaxDriftPPM > 0) || cfg.MaxDriftPPM > 1e5:
		return nil, fmt.Errorf("%w: MaxDriftPPM %v, want 0..1e5", ErrClockConfig, cfg.MaxDriftPPM)
	}
	if cfg.Now == nil {
		cfg.Now = Now
	}
	m := &ClockModel{cfg: cfg, period: cfg.PeriodNs, drift: cfg.MaxDriftPPM * 1e-6}
	m.mask = math.MaxUint64
	if cfg.ValidBits < 64 {
		m.mask = 1<<cfg.ValidBits - 1
	}
	// |d2h/dx2| = P^2 * rho' / (1+rho)^3 <= (P/(1-drift))^2 * rho' / (1-drift).
	pmax := m.period / (1 - m.drift)
	m.kappa = pmax * pmax * cfg.WanderPPMPerMin * 1e-6 / 60e9 / (1 - m.drift)
	n := cfg.Window
	m.win = make([]clockPoint, 0, n+1)
	m.scratch = make([]float64, 0, n*(n-1)/2+2*n)
	m.keep = make([]bool, 0, n+1)
	return m, nil
}

// Config returns the model's configuration with defaults filled in.
func (m *ClockModel) Config() ClockConfig { return m.cfg }

// Add extends s's raw tick, screens it, refits the model and publishes the
// new mapping. It returns an error, and changes nothing, for a deviation
// below 1 or a host time not after the previous sample's. A sample judged
// an outlier is not an error: it is counted in ClockQuality.Outliers.
func (m *ClockModel) Add(s ClockSample) error {
	if s.Deviation < 1 {
		return fmt.Errorf("%w: deviation %d ns, want >= 1", ErrClockSample, s.Deviation)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	raw := s.Device & m.mask
	dev := float64(s.Deviation) + m.period
	if !m.started {
		m.started = true
		m.base = raw
		m.lastHost = s.Host
		m.win = append(m.win, clockPoint{x: 0, h: s.Host, dev: dev})
		m.added++
		m.refit()
		m.publish(s.Host, true)
		return nil
	}
	if s.Host <= m.lastHost {
		return fmt.Errorf("%w: host time %d ns not after the previous sample's %d ns", ErrClockSample, s.Host, m.lastHost)
	}
	pred := m.fit.tickAt(s.Host)
	x := extendTick(raw, pred, m.base, m.mask)
	p := clockPoint{x: x, h: s.Host, dev: dev}
	m.lastHost = s.Host
	r := math.Abs(float64(s.Host) - m.fit.hostAt(x))
	if len(m.win) >= min(clockMinKeep, m.cfg.Window) && !(r <= clockScreenK*(m.fit.bound(x)+dev)) {
		m.suspects = append(m.suspects, p)
		if len(m.suspects) >= clockResetAfter {
			m.trySuspects(s.Host)
		}
		return nil
	}
	m.outliers += uint64(len(m.suspects))
	m.suspects = m.suspects[:0]
	m.win = append(m.win, p)
	m.added++
	m.trim()
	m.refit()
	m.publish(s.Host, false)
	return nil
}

// trim drops the oldest samples beyond Window, and those older than
// WindowDur while more than clockMinKeep remain.
func (m *ClockModel) trim() {
	n := len(m.win)
	drop := 0
	if n > m.cfg.Window {
		drop = n - m.cfg.Window
	}
	newest := m.win[n-1].h
	for drop < n-clockMinKeep && newest-m.win[drop].h > int64(m.cfg.WindowDur) {
		drop++
	}
	if drop > 0 {
		m.win = append(m.win[:0], m.win[drop:]...)
	}
}

// trySuspects restarts the model from the held suspects if they agree with
// each other; otherwise it drops the oldest as an outlier.
func (m *ClockModel) trySuspects(host int64) {
	f, rejected := fitPoints(m.suspects, m)
	agree := rejected <= len(m.suspects)/4
	for i, p := range m.suspects {
		if m.keep[i] && !(math.Abs(float64(p.h)-f.hostAt(p.x)) <= clockRejectMin*p.dev) {
			agree = false
		}
	}
	if !agree {
		m.outliers++
		m.suspects = append(m.suspects[:0], m.suspects[1:]...)
		return
	}
	m.resets++
	m.outliers += uint64(rejected)
	m.win = m.win[:0]
	for i, p := range m.suspects {
		if m.keep[i] {
			m.win = append(m.win, p)
		}
	}
	m.added += uint64(len(m.win))
	m.suspects = m.suspects[:0]
	m.trim()
	m.refit()
	m.publish(host, true)
}

// refit fits the window, dropping in-window outliers from it.
func (m *ClockModel) refit() {
	f, rejected := fitPoints(m.win, m)
	if rejected > 0 {
		w := m.win[:0]
		for i, p := range m.win {
			if m.keep[i] {
				w = append(w, p)
			}
		}
		m.win = w
		m.outliers += uint64(rejected)
	}
	m.fit = f
}

// Quality reports the model's current quality.
func (m *ClockModel) Quality() ClockQuality {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := ClockQuality{
		Samples:  len(m.win),
		Added:    m.added,
		Outliers: m.outliers,
		Resets:   m.resets,
	}
	if m.started && len(m.win) > 0 {
		q.ErrNs = m.fit.p[0]
		q.DriftPPM = (m.period/m.fit.slope - 1) * 1e6
		q.ScatterNs = m.fit.scatter
		q.LastHost = m.win[len(m.win)-1].h
	}
	return q
}

// Calibration returns the model's quality as a Calibration record for the
// GPU queue track it converts for.
func (m *ClockModel) Calibration(track TrackID) Calibration {
	q := m.Quality()
	return Calibration{
		Track:    track,
		Time:     q.LastHost,
		ErrNs:    q.ErrNs,
		DriftPPM: q.DriftPPM,
		Samples:  q.Samples,
	}
}
