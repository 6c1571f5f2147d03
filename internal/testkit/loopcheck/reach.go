package loopcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framescope/framescope/timeline"
)

// Reach names what a run exercised: loop features and the ways zones
// ended. A set of seeds is only as good as what it reaches.
type Reach map[string]bool

// reach notes what r exercised.
func (r *run) reach() Reach {
	l := r.l
	x := Reach{
		"frames in flight > 8": l.Declared > 8, "late waits": l.LateWait, "command reset": !l.HostReset,
		"fallback calibration": !l.Calibrated && l.Calibrate == 0, "calibrate calls": !l.Calibrated && l.Calibrate > 0,
		"queues > 1": l.Queues > 1, "goroutines > 1": l.Goroutines > 1, "labels": l.Labels, "window": l.Window > 0,
		"MaxSpans": l.MaxSpans > 0, "sink": l.Sink, "live view": l.Live, "no Collect stretch": l.NoCollectTo > 0,
		"frames without Submitted": l.NoSubmittedEvery > 0, "sparse GPU work": l.SparseEvery > 0,
		"frame boundary only": l.Boundary, "zones after close": r.j.afterClose > 0,
		"pipeline statistics": l.Stats && r.a.pipelineStats, "Vulkan 1.0 instance": l.API10, "recordings": l.Recordings, "cached secondaries": l.CachedSecondaries, "recordings never ended": r.noEnds > 0,
		"timeline semaphores": l.Timeline && r.a.timeline, "wait before signal": l.WaitBeforeSignal && r.a.timeline && l.Queues > 1,
		"vkQueueSubmit2": l.Submit2 && r.a.sync2, "dynamic rendering": l.Rendering && r.a.rendering, "two devices alive": l.Twin,
		"submitted again without Record": l.Resubmit, "simultaneous-use recordings": l.Simultaneous,
	}
	for _, kind := range l.Recreate {
		x[kind.String()+" made again"] = true
	}
	for _, g := range r.all {
		st := g.Stats()
		x["grown in a frame"] = x["grown in a frame"] || st.Extended > 0
		d := st.Drops
		x["refused: queries"] = x["refused: queries"] || d.QueryLimit > 0
		x["refused: no slot"] = x["refused: no slot"] || d.NoFrame > 0
		x["never ended"] = x["never ended"] || d.Unended > 0
		x["never submitted"] = x["never submitted"] || d.Unsubmitted+d.Pending > 0
		x["misuse"] = x["misuse"] || d.Misuse > 0
		x["overlapped"] = x["overlapped"] || d.Overlapped > 0
		x["run again"] = x["run again"] || d.RunAgain > 0
		x["unlinked"] = x["unlinked"] || d.Flows > 0
		x["work: spent"] = x["work: spent"] || st.WorkMissing[timeline.WorkSpent] > 0
	}
	for _, z := range r.j.zones {
		x["work: dispatches counted"] = x["work: dispatches counted"] || z.compute > 0
	}
	for _, z := range r.j.zones {
		switch {
		case z.end != nil && z.end != z.begin && z.begin.primary == nil:
			x["zones across command buffers"] = true
		case z.begin.primary != nil && z.deliverable():
			x["zones in secondaries"] = true
		}
	}
	return x
}

// Reached gathers what several runs reached.
type Reached map[string]int

func (a Reached) Add(x Reach) {
	for k, on := range x {
		if on {
			a[k]++
		} else if _, ok := a[k]; !ok {
			a[k] = 0
		}
	}
}

// Missed lists what no run reached, but those the device cannot offer.
func (a Reached) Missed(device string, queues int) []string {
	var out []string
	for k, n := range a {
		if n == 0 && !((k == "queues > 1" || k == "wait before signal") && queues < 2) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (a Reached) String() string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d; ", k, a[k])
	}
	return strings.TrimSuffix(b.String(), "; ")
}
