// Package limits says what limits each frame of a trace: the CPU, the
// GPU, or presentation, with the figures the verdict stands on: how much
// of the frame the GPU was busy (the union of every queue's work), where
// it sat idle and why, and how much of it the submitting thread worked
// rather than waited.
//
//	r := limits.Of(t) // t: a *timeline.Trace
//	fmt.Printf("GPU-bound in %.0f%% of %d frames\n", 100*r.Share(limits.GPU), len(r.Frames))
//	for _, f := range r.Frames {
//		fmt.Println(f.ID, f.Limit, f.GPUBusy, f.CPUBusy)
//	}
//
// The figures follow PresentMon's where they fit: GPUBusy is its
// MsGPUBusy (time at least one queue ran the program's work, overlap
// counted once), CPUBusy its MsCPUBusy and CPUWait its MsCPUWait, on the
// frame's submitting thread; Latency its MsGPULatency, from the frame's
// first submission. Vulkan's timestamps add an error bound to every GPU
// figure (GPUErrNs). The rule of the verdict is Frame.Limit's.
package limits

import (
	"cmp"
	"slices"

	"github.com/framescope/framescope/timeline"
)

// Limit is what bounds a frame.
type Limit uint8

const (
	// Unknown: the frame has no GPU work, or no length.
	Unknown Limit = iota
	// CPU: the submitting thread worked more of the frame than the GPU
	// was busy.
	CPU
	// GPU: the GPU was busy at least as much of the frame as the
	// submitting thread worked (or no submitting thread is known).
	GPU
	// Present: neither was busy half the frame, and the submitting thread
	// waited in vkQueuePresentKHR and vkAcquireNextImageKHR a quarter of
	// it or more. This rule comes before the two above.
	Present
	numLimits
)

func (l Limit) String() string {
	if l >= numLimits {
		return "unknown"
	}
	return [...]string{"unknown", "cpu", "gpu", "present"}[l]
}

// Label is how outputs name a frame of limit l: "CPU-bound", "GPU-bound",
// "presentation-bound" or "unknown".
func (l Limit) Label() string {
	if l >= numLimits {
		l = Unknown
	}
	return [...]string{"unknown", "CPU-bound", "GPU-bound", "presentation-bound"}[l]
}

// Cause is why the GPU sat idle in a gap.
type Cause uint8

const (
	// CauseUnknown: no submission of the work after the gap is in the
	// trace.
	CauseUnknown Cause = iota
	// WaitingForSubmit: the work after the gap was submitted during it
	// (the CPU had not handed it over yet), or no work came before the
	// frame's end; either way the submitting thread was not in present or
	// acquire for most of the gap.
	WaitingForSubmit
	// WaitingForDependency: the work after the gap was submitted before
	// the gap began: it waited on a semaphore, another queue, or the
	// GPU's own scheduling.
	WaitingForDependency
	// WaitingOnPresent: the submitting thread was in present or acquire
	// for most of the gap, and the work after it was submitted during it,
	// or none came before the frame's end: presentation held the CPU,
	// which held the GPU.
	WaitingOnPresent
	numCauses
)

func (c Cause) String() string {
	if c >= numCauses {
		return "unknown"
	}
	return [...]string{"unknown", "waiting for submit", "waiting for a dependency", "waiting on present"}[c]
}

// Gap is a time in a frame when no queue ran the program's work.
type Gap struct {
	Start, End int64 // host ns
	Cause      Cause
}

// QueueBusy is one queue's busy time in a frame.
type QueueBusy struct {
	Track timeline.TrackID // the queue's track (its lanes' work counted with it)
	Busy  int64
}

// Frame is one frame's figures, in ns of the host clock.
type Frame struct {
	ID uint64
	// Start and End are the frame's interval: from its start to the next
	// frame's (PresentMon's MsBetweenAppStart), or to its own end where
	// that is later (frames that overlap). A frame the layer ends at
	// a submission (-frame-every) or a present ends there, but its thread
	// goes on with its frame until the next begins: the wait for the GPU,
	// and what it does before its next recording. So the last frame of
	// several, whose next never began, is left out; a trace of one frame
	// has it to its end or that of the last span it carries (its GPU
	// work), whichever is later.
	Start, End int64
	// GPUBusy is the time at least one queue ran the frame's or anyone's
	// GPU work within the frame's interval (the outermost zones of each
	// queue and lane), overlap counted once; Queues each queue's.
	GPUBusy int64
	Queues  []QueueBusy
	// GPUErrNs bounds GPUBusy's error: the clock model's bound on each
	// end of each busy stretch.
	GPUErrNs int64
	Gaps     []Gap
	// Thread is the submitting thread's track (the one that submitted the
	// most of the frame's work, or presented); 0 where none did, and
	// CPUBusy and CPUWait are then -1.
	Thread timeline.TrackID
	// CPUBusy is the frame's interval less CPUWait, on Thread; CPUWait
	// its time in waits (fences, semaphores, queue and device idle,
	// acquire and present), PresentWait the part in acquire and present.
	CPUBusy, CPUWait, PresentWait int64
	// Latency is from the frame's first submission to the start of the
	// first GPU work it carried; -1 where the trace has no arrow from it.
	Latency int64
	Limit   Limit
}

// Dur is the frame's interval.
func (f Frame) Dur() int64 { return f.End - f.Start }

// Report is what limits a trace's frames.
type Report struct {
	Frames []Frame // closed frames of positive length (that an int64 holds) but the last (see Frame), in order of start
	shares [numLimits]int
}

// Share is the share of frames whose limit is l, from 0 to 1.
func (r Report) Share(l Limit) float64 {
	if len(r.Frames) == 0 || l >= numLimits {
		return 0
	}
	return float64(r.shares[l]) / float64(len(r.Frames))
}

// BusyShares returns each frame's GPU busy and CPU busy time as shares of
// its interval, for frames that have them (GPU: every frame with GPU
// work; CPU: every frame with a submitting thread).
func (r Report) BusyShares() (gpu, cpu []float64) {
	for _, f := range r.Frames {
		if f.GPUBusy > 0 {
			gpu = append(gpu, float64(f.GPUBusy)/float64(f.Dur()))
		}
		if f.Thread != 0 {
			cpu = append(cpu, float64(f.CPUBusy)/float64(f.Dur()))
		}
	}
	return gpu, cpu
}

// Of says what limits each of t's closed frames (none of a nil t).
func Of(t *timeline.Trace) Report {
	if t == nil {
		return Report{}
	}
	in := index(t)
	var r Report
	frames := slices.Clone(t.Frames)
	slices.SortFunc(frames, func(a, b timeline.Frame) int { return cmp.Compare(a.Start, b.Start) })
	for k, fr := range frames {
		switch {
		case fr.End <= fr.Start || fr.End-fr.Start <= 0 || fr.Start < 0:
			continue // open, or inside out, longer than an int64 holds or before the clock's zero (a hostile file)
		case k+1 < len(frames):
			if fr.End = max(frames[k+1].Start, fr.End); fr.End-fr.Start <= 0 {
				continue
			}
		case k > 0:
			continue // the last of several: where its frame ends, the trace does not say
		default:
			if fr.End = max(fr.End, in.lastOf[fr.ID]); fr.End-fr.Start <= 0 {
				continue
			}
		}
		f := in.frame(fr)
		r.shares[f.Limit]++
		r.Frames = append(r.Frames, f)
	}
	return r
}

// verdict is Limit's rule, of a frame's figures.
func verdict(f Frame) Limit {
	d := float64(f.Dur())
	if f.GPUBusy == 0 || d <= 0 {
		return Unknown
	}
	g := float64(f.GPUBusy) / d
	c := 0.0
	if f.Thread != 0 {
		c = float64(f.CPUBusy) / d
	}
	busiest := GPU
	if c > g {
		busiest = CPU
	}
	if max(g, c) < 0.5 && f.Thread != 0 && float64(f.PresentWait) >= 0.25*d {
		return Present
	}
	return busiest
}
