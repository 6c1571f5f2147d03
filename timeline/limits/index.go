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

// stretch is an interval of time.
type stretch struct{ start, end int64 }

func (s stretch) span() stretch { return s }

// gpuWork is an outermost GPU zone: its interval, its queue's track (a
// lane's parent), its error bound, and when its submission began (-1:
// unknown).
type gpuWork struct {
	stretch
	queue     timeline.TrackID
	errNs     int64
	submitted int64
}

// thread is one CPU track's submissions, waits and presents, each in
// order of start, as the frames read them.
type thread struct {
	submits, waits, presents sweep[stretch]
}

// traceIndex is a trace, read once for every frame: its lists are swept
// by the frames in order of start.
type traceIndex struct {
	work    sweep[gpuWork]
	threads map[timeline.TrackID]*thread
	ids     []timeline.TrackID // of threads, in order
	lastOf  map[uint64]int64   // by frame: the latest end of a span that carries it
}

// sweep hands out, for windows given in order of start, the intervals of
// a list (in order of start) that overlap each: an interval is taken in
// once and let go once it ends before a window begins, so that reading
// every frame is linear in the trace, however long one interval is.
type sweep[T interface{ span() stretch }] struct {
	items  []T
	next   int
	active []T
}

func (s *sweep[T]) during(start, end int64) []T {
	s.active = slices.DeleteFunc(s.active, func(x T) bool { return x.span().end <= start })
	for s.next < len(s.items) && s.items[s.next].span().start < end {
		s.active = append(s.active, s.items[s.next])
		s.next++
	}
	var out []T
	for _, x := range s.active {
		if sp := x.span(); sp.start < end && sp.end > start {
			out = append(out, x)
		}
	}
	return out
}

func (s *sweep[T]) sort() {
	slices.SortFunc(s.items, func(a, b T) int { return cmp.Compare(a.span().start, b.span().start) })
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
			if !tr.Across { // zones across command buffers are no work
				queueOf[tr.ID] = tr.Parent
			}
		case timeline.TrackCPU:
			cpu[tr.ID] = true
		}
	}
	submitOf := submissions(t)
	submitted := make([]bool, len(t.Spans)) // a CPU span an arrow leaves: it handed work to the GPU
	for _, f := range t.Flows {
		if f.From >= 0 && f.From < len(t.Spans) {
			submitted[f.From] = true
		}
	}
	for i, s := range t.Spans {
		if s.Frame != 0 {
			in.lastOf[s.Frame] = max(in.lastOf[s.Frame], s.End)
		}
		if q, ok := queueOf[s.Track]; ok && s.Depth == 0 {
			sub, ok := submitOf[i]
			if !ok {
				sub = -1
			}
			in.work.items = append(in.work.items, gpuWork{stretch: stretch{s.Start, s.End}, queue: q, errNs: int64(s.ErrNs), submitted: sub})
		}
		if cpu[s.Track] {
			in.addCPU(t, s, submitted[i])
		}
	}
	in.work.sort()
	for id, th := range in.threads {
		in.ids = append(in.ids, id)
		th.submits.sort()
		th.waits.sort()
		th.presents.sort()
	}
	slices.Sort(in.ids)
	return in
}

// addCPU files s, a CPU span, by its name: the layer names each by the
// Vulkan call, and a program using the library may name its own so. A
// span an arrow leaves (submitted: the library's GPU.Submit) is a
// submission whatever its name.
func (in *traceIndex) addCPU(t *timeline.Trace, s timeline.Span, submitted bool) {
	name := t.Name(s.Name)
	th := in.threads[s.Track]
	if th == nil {
		th = &thread{}
		in.threads[s.Track] = th
	}
	c := stretch{s.Start, s.End}
	switch {
	case submitted || slices.Contains(submitNames, name):
		th.submits.items = append(th.submits.items, c)
	case slices.Contains(waitNames, name):
		th.waits.items = append(th.waits.items, c)
	case slices.Contains(presentNames, name):
		th.presents.items = append(th.presents.items, c)
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
