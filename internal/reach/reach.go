// Package reach hands the live view and the clock check what package
// profiler keeps unexported: a Profiler's recorder and the channel its
// Close closes, and a GPU context's raw clock samples. Package profiler
// sets the functions when it loads.
package reach

import (
	"time"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/vk"
)

// Profiler returns the recorder of p, a *profiler.Profiler, and a channel
// closed once p's Close has collected and flushed everything.
var Profiler func(p any) (rec *record.Recorder, done <-chan struct{})

// ClockProbe is a GPU context opened for the clock check: its model is
// fed only by the context's Calibrate, and Sample reads both clocks
// without feeding it.
type ClockProbe struct {
	GPU    any        // the *profiler.GPU; the check closes it
	Device *vk.Device // its device
	Ext    bool       // Sample uses calibrated timestamps, else submit-and-wait
	Sample func() (clock.Sample, error)
	Now    func() int64 // reads the host clock the context calibrates against
	// NextRound is how long after a round at age (the context's time
	// since it began) a context with interval between rounds calibrates
	// next: denser while it is young.
	NextRound func(age, interval time.Duration) time.Duration
}

// OpenClockProbe opens a ClockProbe on dev (a *profiler.Device) and q (a
// profiler.Queue), against the host clock hostClock (a
// profiler.HostClock), by submit-and-wait when fallback is set.
var OpenClockProbe func(dev, q any, fallback bool, hostClock int) (ClockProbe, error)
