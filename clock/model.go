package clock

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/timeline"
)

// Sample is one calibration sample of a device clock against the
// host clock.
type Sample struct {
	Device    uint64 // raw device tick; bits above ValidBits are ignored
	Host      int64  // host CLOCK_MONOTONIC, ns
	Deviation int64  // how far Host may be from the tick's true host time, ns; >= 1
}

// Options describes a device clock and how to fit it. Zero optional
// fields take the defaults below.
type Options struct {
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
	// freeze point (see Guarantees in the package doc); default timeline.Now.
	// Simulations and replays set their own.
	Now func() int64
}

// Defaults of Options.
const (
	defaultWindow          = 32
	defaultWindowDur       = 20 * time.Second
	defaultWanderPPMPerMin = 0.5
	defaultMaxDriftPPM     = 500
)

// Quality is how good the clock model is now.
type Quality struct {
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

// Errors returned by New and Add; match them with errors.Is.
var (
	ErrInvalidOptions = errors.New("clock: invalid options")
	ErrInvalidSample  = errors.New("clock: invalid sample")
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

// Model converts the ticks of one device clock (one VkDevice) to host
// time. Create it with New; feed it with Add from a background
// goroutine; read it with Convert, or ConvertBits for a queue family with
// fewer valid bits, on any goroutine.
type Model struct {
	snap atomic.Pointer[clockSnap]

	mu       sync.Mutex
	cfg      Options
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

// New validates cfg and returns an empty model.
func New(cfg Options) (*Model, error) {
	if !(cfg.PeriodNs > 0) || math.IsInf(cfg.PeriodNs, 0) || cfg.PeriodNs > 1e12 {
		return nil, fmt.Errorf("%w: PeriodNs %v, want a finite number > 0", ErrInvalidOptions, cfg.PeriodNs)
	}
	if cfg.ValidBits < 1 || cfg.ValidBits > 64 {
		return nil, fmt.Errorf("%w: ValidBits %d, want 1..64", ErrInvalidOptions, cfg.ValidBits)
	}
	switch {
	case cfg.Window == 0:
		cfg.Window = defaultWindow
	case cfg.Window < 2 || cfg.Window > 1024:
		return nil, fmt.Errorf("%w: Window %d, want 2..1024", ErrInvalidOptions, cfg.Window)
	}
	switch {
	case cfg.WindowDur == 0:
		cfg.WindowDur = defaultWindowDur
	case cfg.WindowDur < 0:
		return nil, fmt.Errorf("%w: WindowDur %v, want > 0", ErrInvalidOptions, cfg.WindowDur)
	}
	switch {
	case cfg.WanderPPMPerMin == 0:
		cfg.WanderPPMPerMin = defaultWanderPPMPerMin
	case !(cfg.WanderPPMPerMin > 0) || cfg.WanderPPMPerMin > 1e6:
		return nil, fmt.Errorf("%w: WanderPPMPerMin %v, want 0..1e6", ErrInvalidOptions, cfg.WanderPPMPerMin)
	}
	switch {
	case cfg.MaxDriftPPM == 0:
		cfg.MaxDriftPPM = defaultMaxDriftPPM
	case !(cfg.MaxDriftPPM > 0) || cfg.MaxDriftPPM > 1e5:
		return nil, fmt.Errorf("%w: MaxDriftPPM %v, want 0..1e5", ErrInvalidOptions, cfg.MaxDriftPPM)
	}
	if cfg.Now == nil {
		cfg.Now = timeline.Now
	}
	m := &Model{cfg: cfg, period: cfg.PeriodNs, drift: cfg.MaxDriftPPM * 1e-6}
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
func (m *Model) Options() Options { return m.cfg }

// Add extends s's raw tick, screens it, refits the model and publishes the
// new mapping. It returns an error, and changes nothing, for a deviation
// below 1 or a host time not after the previous sample's. A sample judged
// an outlier is not an error: it is counted in Quality.Outliers.
func (m *Model) Add(s Sample) error {
	if s.Deviation < 1 {
		return fmt.Errorf("%w: deviation %d ns, want >= 1", ErrInvalidSample, s.Deviation)
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
		return fmt.Errorf("%w: host time %d ns not after the previous sample's %d ns", ErrInvalidSample, s.Host, m.lastHost)
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
func (m *Model) trim() {
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
func (m *Model) trySuspects(host int64) {
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
func (m *Model) refit() {
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
func (m *Model) Quality() Quality {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := Quality{
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
func (m *Model) Calibration(track timeline.TrackID) timeline.Calibration {
	q := m.Quality()
	return timeline.Calibration{
		Track:    track,
		Time:     q.LastHost,
		ErrNs:    q.ErrNs,
		DriftPPM: q.DriftPPM,
		Samples:  q.Samples,
	}
}
