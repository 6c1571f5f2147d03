package limits

import (
	"cmp"
	"slices"

	"github.com/framescope/framescope/timeline"
)

// The CPU spans the analysis knows by name: the layer's, for the Vulkan
// calls it sees on each thread.
var (
	submitNames  = []string{"vkQueueSubmit", "vkQueueSubmit2", "vkQueueSubmit2KHR"}
	waitNames    = []string{"vkWaitForFences", "vkWaitSemaphores", "vkWaitSemaphoresKHR", "vkQueueWaitIdle", "vkDeviceWaitIdle"}
	presentNames = []string{"vkQueuePresentKHR", "vkAcquireNextImageKHR", "vkAcquireNextImage2KHR"}
)

// gpuWork is an outermost GPU zone: its queue's track (a lane's parent),
// its interval, its error bound, and when its submission began (-1:
// unknown).
type gpuWork struct {
	queue      timeline.TrackID
	start, end int64
	errNs      int64
	submitted  int64
}

// cpuSpan is a CPU span of a kind the analysis reads.
type cpuSpan struct {
	start, end int64
}

// thread is one CPU track's submissions, waits and presents, each in
// order of start.
type thread struct {
	submits, waits, presents []cpuSpan
}

// traceIndex is a trace, read once for every frame.
type traceIndex struct {
	work    []gpuWork // in order of start
	longest int64     // the longest work's length: how far back one may reach into a frame
	threads map[timeline.TrackID]*thread
	lastOf  map[uint64]int64 // by frame: the latest end of a span that carries it
}

func index(t *timeline.Trace) *traceIndex {
	in := &traceIndex{threads: map[timeline.TrackID]*thread{}, lastOf: map[uint64]int64{}}
	queueOf := map[timeline.TrackID]timeline.TrackID{}
	cpu := map[timeline.TrackID]bool{}
	for _, tr := range t.Tracks {
		switch tr.Kind {
		case timeline.TrackGPUQueue:
			queueOf[tr.ID] = tr.ID
		case timeline.TrackGPULane:
			queueOf[tr.ID] = tr.Parent
		case timeline.TrackCPU:
			cpu[tr.ID] = true
		}
	}
	submitOf := submissions(t)
	for i, s := range t.Spans {
		if s.Frame != 0 {
			in.lastOf[s.Frame] = max(in.lastOf[s.Frame], s.End)
		}
		if q, ok := queueOf[s.Track]; ok && s.Depth == 0 {
			sub, ok := submitOf[i]
			if !ok {
				sub = -1
			}
			in.work = append(in.work, gpuWork{queue: q, start: s.Start, end: s.End, errNs: int64(s.ErrNs), submitted: sub})
			in.longest = max(in.longest, s.Dur())
		}
		if cpu[s.Track] {
			in.addCPU(t, s)
		}
	}
	slices.SortFunc(in.work, func(a, b gpuWork) int { return cmp.Compare(a.start, b.start) })
	for _, th := range in.threads {
		for _, l := range [][]cpuSpan{th.submits, th.waits, th.presents} {
			slices.SortFunc(l, func(a, b cpuSpan) int { return cmp.Compare(a.start, b.start) })
		}
	}
	return in
}

// addCPU files s, a CPU span, by its name.
func (in *traceIndex) addCPU(t *timeline.Trace, s timeline.Span) {
	name := t.Name(s.Name)
	th := in.threads[s.Track]
	if th == nil {
		th = &thread{}
		in.threads[s.Track] = th
	}
	c := cpuSpan{s.Start, s.End}
	switch {
	case slices.Contains(submitNames, name):
		th.submits = append(th.submits, c)
	case slices.Contains(waitNames, name):
		th.waits = append(th.waits, c)
	case slices.Contains(presentNames, name):
		th.presents = append(th.presents, c)
	}
}

// submissions maps each outermost GPU zone (by its index in t.Spans) that
// an arrow reaches, itself or through a zone inside it, to the start of
// the earliest CPU span an arrow into it comes from: when its work was
// handed to the GPU.
func submissions(t *timeline.Trace) map[int]int64 {
	out := map[int]int64{}
	if len(t.Flows) == 0 {
		return out
	}
	// The outermost zone of each GPU span: the last depth-0 span before it
	// on its track, in the trace's order of spans by track and start.
	order := make([]int, len(t.Spans))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return timeline.CompareSpans(&t.Spans[a], &t.Spans[b]) })
	root := make([]int, len(t.Spans))
	last := -1
	for k, i := range order {
		if k == 0 || t.Spans[i].Track != t.Spans[order[k-1]].Track || t.Spans[i].Depth == 0 {
			last = i
		}
		root[i] = last
	}
	for _, f := range t.Flows {
		if f.From < 0 || f.From >= len(t.Spans) || f.To < 0 || f.To >= len(t.Spans) {
			continue
		}
		r := root[f.To]
		if r < 0 || t.Spans[r].Depth != 0 {
			continue
		}
		at := t.Spans[f.From].Start
		if prev, ok := out[r]; !ok || at < prev {
			out[r] = at
		}
	}
	return out
}
