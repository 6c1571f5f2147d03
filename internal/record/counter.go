package record

import (
	"fmt"
	"math"

	"github.com/framescope/framescope/timeline"
)

// Counter is an application-defined counter track, registered once by
// name with Recorder.Counter. The zero Counter does nothing.
type Counter struct {
	r  *Recorder
	id timeline.TrackID
}

// Counter returns the counter track named name, defining it with unit on
// first use; later calls with the same name return the same counter.
func (r *Recorder) Counter(name string, unit timeline.Unit) Counter {
	r.lock()
	defer r.mu.Unlock()
	id, ok := r.counters[name]
	if !ok {
		id = r.addTrack(timeline.Track{Kind: timeline.TrackCounter, Name: name, Unit: unit, Order: int32(len(r.counters))})
		r.counters[name] = id
	}
	return Counter{r: r, id: id}
}

// ID returns the counter's track ID.
func (c Counter) ID() timeline.TrackID { return c.id }

// Set records value at Now.
func (c Counter) Set(value float64) { c.SetAt(timeline.Now(), value) }

// SetAt records value at host time t. NaN and infinite values are not
// recorded and count as misuse, since no trace format can carry them.
func (c Counter) SetAt(t int64, value float64) {
	r := c.r
	if r == nil {
		return
	}
	r.lock()
	if math.IsNaN(value) || math.IsInf(value, 0) {
		r.misuse++
	} else {
		r.appendSample(timeline.Sample{Track: c.id, Time: t, Value: value})
		r.maybeEvict()
	}
	r.mu.Unlock()
}

// AddCalibration records the quality of a GPU queue's clock model, as the
// profiler refits it: it is kept in Trace.Calibrations and its error bound
// is sampled on the queue's "clock error" counter track. c.Track must be
// a queue track from QueueTrack.
func (r *Recorder) AddCalibration(c timeline.Calibration) error {
	r.lock()
	defer r.mu.Unlock()
	qs := r.queueOf[c.Track]
	if qs == nil {
		return fmt.Errorf("%w %d: calibrations apply to GPU queue tracks", ErrUnknownTrack, c.Track)
	}
	if math.IsNaN(c.ErrNs) || math.IsInf(c.ErrNs, 0) || math.IsNaN(c.DriftPPM) || math.IsInf(c.DriftPPM, 0) {
		return fmt.Errorf("timeline: calibration of %q is not finite (error %v ns, drift %v ppm)", qs.name, c.ErrNs, c.DriftPPM)
	}
	if qs.errTrack == 0 {
		qs.errTrack = r.addTrack(timeline.Track{Kind: timeline.TrackCounter, Name: qs.name + " clock error", Unit: timeline.UnitNs, Order: int32(len(r.queues))})
	}
	r.appendCal(c)
	r.appendSample(timeline.Sample{Track: qs.errTrack, Time: c.Time, Value: c.ErrNs})
	r.maybeEvict()
	return nil
}
