// Package clockcheck is framescope clockcheck: it watches a device clock
// against the host's, fits the clock model as a GPU context does, judges
// it on held-out samples, checks causality with events, and reports what a
// one-time calibration would have got wrong.
package clockcheck

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// Options configure Run. Zero fields take defaults.
type Options struct {
	Duration time.Duration // how long to watch the clocks; default 10s
	// SampleEvery is the interval of held-out samples, which the model
	// never sees and is judged on. Default 10ms.
	SampleEvery time.Duration
	// FitEvery is the interval of calibration rounds fed to the model, as
	// a GPU context does in the background (denser during the first
	// interval, as there). Default 1s.
	FitEvery time.Duration
	// CausalityEvery is the interval of causality tries. Default 100ms.
	CausalityEvery time.Duration
	// CausalityTries, when > 0, stops causality tries after that many.
	CausalityTries int
	// Fallback samples by submit-and-wait instead of calibrated timestamps.
	Fallback bool
	// Clock is the host clock to check against. Default profiler.ClockMonotonic.
	Clock profiler.HostClock
	// Progress, when set, receives a line every few seconds.
	Progress io.Writer
}

// Run watches dev's clock against the host clock o.Clock on queue q for
// o.Duration. It submits to q: nothing else may use q meanwhile.
func Run(dev *profiler.Device, q profiler.Queue, o Options) (*Report, error) {
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = 10 * time.Millisecond
	}
	if o.FitEvery <= 0 {
		o.FitEvery = time.Second
	}
	if o.CausalityEvery <= 0 {
		o.CausalityEvery = 100 * time.Millisecond
	}
	pr, err := reach.OpenClockProbe(dev, q, o.Fallback, int(o.Clock))
	if err != nil {
		return nil, err
	}
	g := pr.GPU.(*profiler.GPU)
	defer g.Close()
	caps := pr.Device.Caps
	rep := &Report{
		Device: caps.Name, Driver: caps.DriverName + " " + caps.DriverInfo,
		PeriodNs: float64(caps.TimestampPeriod), ValidBits: q.ValidBits,
		Method: pr.Device.Calibrated, Clock: o.Clock.String(),
	}
	if !pr.Ext {
		rep.Method = "submit-and-wait"
	}
	cz, err := newCausalityRig(pr.Device, q)
	if err != nil {
		return nil, err
	}
	defer cz.destroy()

	sample := func() (clock.Sample, int64, error) {
		t0 := timeline.Now()
		s, err := pr.Sample()
		return s, timeline.Now() - t0, err
	}
	var devs, costs, resid, lags []int64
	var first, last clock.Sample
	start := timeline.Now()
	end := start + int64(o.Duration)
	nextFit, nextCause, nextProgress := start, start, start+int64(5*time.Second)
	for now := start; now < end; now = timeline.Now() {
		if now >= nextFit {
			if err := g.Calibrate(); err != nil {
				return nil, fmt.Errorf("calibration round: %w", err)
			}
			rep.Fits++
			nextFit = timeline.Now() + int64(pr.NextRound(time.Duration(now-start), o.FitEvery))
		}
		s, cost, err := sample()
		if err != nil {
			return nil, err
		}
		if first.Host == 0 {
			first = s
		}
		last = s
		devs = append(devs, s.Deviation)
		costs = append(costs, cost)
		if h, e, ok := g.Clock().Convert(s.Device, s.Host); ok {
			r := h - s.Host
			resid = append(resid, absI(r))
			if absI(r) > e+s.Deviation {
				rep.OutsideBound++
			}
			rep.ModelErrNs = r
		}
		if now >= nextCause && (o.CausalityTries == 0 || rep.CausalityTries < o.CausalityTries) {
			lag, err := cz.try(g.Clock(), pr.Now)
			if err != nil {
				return nil, fmt.Errorf("causality: %w", err)
			}
			rep.CausalityTries++
			lags = append(lags, lag)
			if lag < 0 {
				rep.CausalityViolations++
			}
			nextCause += int64(o.CausalityEvery)
			if o.CausalityTries > 0 && rep.CausalityTries >= o.CausalityTries {
				nextCause = end
			}
		}
		if o.Progress != nil && now >= nextProgress {
			q := g.Clock().Quality()
			fmt.Fprintf(o.Progress, "  %5.0f s: %d samples, drift %+.3f ppm, bound %.0f ns, causality violations %d\n",
				float64(now-start)/1e9, len(devs), q.DriftPPM, q.ErrNs, rep.CausalityViolations)
			nextProgress += int64(5 * time.Second)
		}
		if sleep := time.Duration(min(nextFit, nextCause, now+int64(o.SampleEvery)) - timeline.Now()); sleep > 0 {
			time.Sleep(sleep)
		}
	}
	if len(devs) < 2 {
		return nil, errors.New("clockcheck: fewer than two samples")
	}
	rep.Samples = len(devs)
	rep.periodFigures(first, last)
	rep.MaxDeviation = summarize(devs)
	rep.CallCost = summarize(costs)
	rep.Residual = summarize(resid)
	rep.CausalityLag = summarize(lags)
	rep.Model = g.Clock().Quality()
	return rep, nil
}
