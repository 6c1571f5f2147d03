package loopcheck

import (
	"fmt"
	"time"

	"github.com/framescope/framescope/internal/testkit/leakcheck"
	"github.com/framescope/framescope/timeline"
)

// Options configure the checker.
type Options struct {
	Dir        string // where each run writes its traces
	Device     string // a substring of the device's name; "": the first GPU, else the first device
	Validation bool   // the validation layer, which must then say nothing
	// TraceProcessor, when set, loads a trace into Perfetto's trace
	// processor and returns what it reports: import errors, and the
	// number of GPU slices and flows it holds.
	TraceProcessor func(path string) (problems []string, gpuSlices, flows int)
}

// Result is what one seed's run did and found.
type Result struct {
	Loop     Loop
	Device   string
	Zones    uint64 // asked for
	Slices   int    // GPU slices in the trace
	Flows    int
	Drops    timeline.Drops
	Messages uint64 // validation messages during the run
	// RunAgain is how many zones the loop ran again in command buffers
	// submitted again without Record (Loop.Resubmit); the trace counts
	// Drops.RunAgain of them, and the rest went unseen.
	RunAgain uint64
	// CalibrateErrors counts GPU.Calibrate calls that failed while frames
	// were in flight (a submit-and-wait past FallbackTimeout): answers,
	// not problems.
	CalibrateErrors int
	Problems        []string
	Reach           Reach
	Queues          int // queues with timestamps the device gave the application
}

// Check runs the render loop of seed on a device of its own and checks
// what came out. An error is a failure to run at all (no device).
func Check(seed uint64, o Options) (res Result, err error) {
	before := leakcheck.Snapshot()
	msgs0, _ := messages()
	a, err := newApp(appConfig{validation: o.Validation, hostReset: true, calibrated: true, queues: 2, device: o.Device, pipelineStats: true, modern: true})
	if err != nil {
		return res, err
	}
	l := Gen(seed, device{queues: len(a.queues), hostReset: a.hostReset, calibrate: a.calibrated, pipelineStats: a.pipelineStats,
		timeline: a.timeline, sync2: a.sync2, rendering: a.rendering})
	res.Loop, res.Device = l, a.name
	if !l.HostReset || !l.Calibrated || !l.Stats || l.API10 {
		// The application enables what the loop says it does.
		a.destroy()
		a, err = newApp(appConfig{validation: o.Validation, hostReset: l.HostReset, calibrated: l.Calibrated, queues: 2, device: o.Device,
			pipelineStats: l.Stats, api10: l.API10, modern: true})
		if err != nil {
			return res, err
		}
	}
	a.useSync2(l.Submit2)
	l.Queues = min(l.Queues, len(a.queues)) // without host query reset, fewer
	res.Loop = l
	r := &run{l: l, a: a, dir: o.Dir}
	var p problems
	path, err := r.runAll()
	if err != nil {
		p.add("run", "%v", err)
	}
	if r.live != nil && r.live.err != nil {
		p.add("live view", "%v", r.live.err)
	}
	if err == nil {
		tr, q := r.check(path)
		p.list = append(p.list, q.list...)
		if tr != nil {
			res.Drops, res.Flows = tr.Drops, len(tr.Flows)
			for _, s := range tr.Spans {
				if k := tr.Track(s.Track).Kind; k == timeline.TrackGPUQueue || k == timeline.TrackGPULane {
					res.Slices++
				}
			}
			if o.TraceProcessor != nil {
				tp, gpu, flows := o.TraceProcessor(path)
				for _, m := range tp {
					p.add("trace processor", "%s", m)
				}
				if gpu != res.Slices || flows != res.Flows {
					p.add("trace processor", "%d GPU slices and %d flows; the trace has %d and %d", gpu, flows, res.Slices, res.Flows)
				}
			}
		}
	}
	res.Reach, res.Queues = r.reach(), len(a.queues)
	r.close()
	a.destroy()
	res.Zones, res.CalibrateErrors, res.RunAgain = r.j.calls, r.calErrs, r.j.resubmitted
	msgs, last := messages()
	res.Messages = msgs - msgs0
	if res.Messages > 0 && !l.LateWait && !l.Resubmit {
		p.add("validation", "%d messages, the latest: %s", res.Messages, last)
	}
	if left := waitGoroutines(before); len(left) > 0 {
		p.add("goroutines", "%d left after the run:\n%s", len(left), leakcheck.Stacks(left))
	}
	res.Problems = p.list
	return res, nil
}

// runAll starts the profiler, runs the frames and finishes, returning
// the trace's path.
func (r *run) runAll() (string, error) {
	if err := r.start(); err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	if err := r.loop(); err != nil {
		return "", err
	}
	return r.finish()
}

// close destroys what the run made on the device, whatever happened.
func (r *run) close() {
	if r.live != nil {
		r.live.stop()
	}
	if r.p != nil {
		r.p.Close()
	}
	r.stopTwin()
	if r.dev != nil {
		r.dev.Close()
	}
	if r.slots != nil {
		r.destroySlots()
	}
	if r.out != nil {
		r.out.Close()
	}
}

// waitGoroutines waits up to 2 s for the goroutines started since before
// to end, and returns those still running.
func waitGoroutines(before map[uint64]bool) []leakcheck.Goroutine {
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := leakcheck.Since(before)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}
