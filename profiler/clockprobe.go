package profiler

import (
	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/reach"
)

func init() { reach.OpenClockProbe = openClockProbe }

// openClockProbe opens a context on dev's queue q for the clock check
// (framescope clockcheck): no background rounds, so that the check alone
// decides what the model is fed.
func openClockProbe(dev, q any, fallback bool, hostClock int) (reach.ClockProbe, error) {
	d := dev.(*Device)
	g, err := New(Options{}).GPU(d, q.(Queue), GPUOptions{CalibrateEvery: -1, Clock: HostClock(hostClock),
		calib: calibration{NoCalibrated: fallback}})
	if err != nil {
		return reach.ClockProbe{}, err
	}
	c := g.cal
	sample := func() (clock.Sample, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.useExt {
			return c.sampleFallback(&g.queue)
		}
		dv, err := d.d.CalibratedTimestamps(c.doms[:], c.ts[:])
		return clock.Sample{Device: c.ts[0], Host: int64(c.ts[1]), Deviation: max(int64(dv), 1)}, err
	}
	return reach.ClockProbe{GPU: g, Device: d.d, Ext: c.useExt, Sample: sample, Now: c.o.Clock.now, NextRound: nextCalibration}, nil
}
