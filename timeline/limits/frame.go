package limits

import (
	"cmp"
	"slices"

	"github.com/framescope/framescope/timeline"
)

// frame works out one frame's figures.
func (in *traceIndex) frame(fr timeline.Frame) Frame {
	f := Frame{ID: fr.ID, Start: fr.Start, End: fr.End, Latency: -1, CPUBusy: -1, CPUWait: -1, PresentWait: -1}
	work := in.during(fr.Start, fr.End)
	busy := union(work, fr.Start, fr.End, func(gpuWork) bool { return true })
	maxErr := int64(0)
	for _, w := range work {
		maxErr = max(maxErr, w.errNs)
	}
	f.GPUBusy, f.GPUErrNs = total(busy), 2*int64(len(busy))*maxErr
	f.Queues = queueBusy(work, fr.Start, fr.End)
	f.Thread = in.submitter(fr.Start, fr.End)
	if th := in.threads[f.Thread]; th != nil {
		f.PresentWait = total(clipUnion(th.presents, fr.Start, fr.End))
		f.CPUWait = total(clipUnion(append(slices.Clone(th.waits), th.presents...), fr.Start, fr.End))
		f.CPUBusy = f.Dur() - f.CPUWait
	}
	f.Gaps = in.gaps(busy, work, fr.Start, fr.End, in.threads[f.Thread])
	f.Latency = latency(work, fr.Start, fr.End)
	f.Limit = verdict(f)
	return f
}

// during is the GPU work that overlaps [start, end), in order of start.
func (in *traceIndex) during(start, end int64) []gpuWork {
	from, _ := slices.BinarySearchFunc(in.work, start-in.longest, func(w gpuWork, t int64) int { return cmp.Compare(w.start, t) })
	var out []gpuWork
	for _, w := range in.work[from:] {
		if w.start >= end {
			break
		}
		if w.end > start {
			out = append(out, w)
		}
	}
	return out
}

// stretch is an interval of time.
type stretch struct{ start, end int64 }

// union is the union of the work keep keeps, clipped to [start, end), in
// order: work must be in order of start.
func union(work []gpuWork, start, end int64, keep func(gpuWork) bool) []stretch {
	var out []stretch
	for _, w := range work {
		if !keep(w) {
			continue
		}
		a, b := max(w.start, start), min(w.end, end)
		if b <= a {
			continue
		}
		if n := len(out); n > 0 && a <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, b)
			continue
		}
		out = append(out, stretch{a, b})
	}
	return out
}

// clipUnion is the union of spans (in order of start) clipped to [start,
// end).
func clipUnion(spans []cpuSpan, start, end int64) []stretch {
	slices.SortFunc(spans, func(a, b cpuSpan) int { return cmp.Compare(a.start, b.start) })
	work := make([]gpuWork, len(spans))
	for i, s := range spans {
		work[i] = gpuWork{start: s.start, end: s.end}
	}
	return union(work, start, end, func(gpuWork) bool { return true })
}

func total(s []stretch) int64 {
	t := int64(0)
	for _, x := range s {
		t += x.end - x.start
	}
	return t
}

// queueBusy is each queue's busy time in [start, end), in order of track.
func queueBusy(work []gpuWork, start, end int64) []QueueBusy {
	var queues []timeline.TrackID
	for _, w := range work {
		if !slices.Contains(queues, w.queue) {
			queues = append(queues, w.queue)
		}
	}
	slices.Sort(queues)
	out := make([]QueueBusy, len(queues))
	for i, q := range queues {
		out[i] = QueueBusy{Track: q, Busy: total(union(work, start, end, func(w gpuWork) bool { return w.queue == q }))}
	}
	return out
}

// submitter is the CPU track that began the most submissions in [start,
// end), or, where none did, the one that presented the most there; 0
// where none did either.
func (in *traceIndex) submitter(start, end int64) timeline.TrackID {
	best, most := timeline.TrackID(0), 0
	for _, pick := range []func(*thread) []cpuSpan{
		func(t *thread) []cpuSpan { return t.submits },
		func(t *thread) []cpuSpan { return t.presents },
	} {
		for id, th := range in.threads {
			n := 0
			for _, s := range pick(th) {
				if s.start >= start && s.start < end {
					n++
				}
			}
			if n > most || n == most && n > 0 && id < best {
				best, most = id, n
			}
		}
		if most > 0 {
			return best
		}
	}
	return 0
}

// gaps are the stretches of [start, end) outside busy, each with its
// cause (see Cause).
func (in *traceIndex) gaps(busy []stretch, work []gpuWork, start, end int64, th *thread) []Gap {
	var out []Gap
	at := start
	for _, b := range append(busy, stretch{end, end}) {
		if b.start > at {
			g := Gap{Start: at, End: b.start}
			g.Cause = causeOf(g, work, end, th)
			out = append(out, g)
		}
		at = max(at, b.end)
	}
	return out
}

// causeOf is why the GPU was idle in g, a gap of a frame that ends at end.
func causeOf(g Gap, work []gpuWork, end int64, th *thread) Cause {
	if g.End >= end { // no work after it in the frame
		if th != nil && 2*total(clipUnion(slices.Clone(th.presents), g.Start, g.End)) >= g.End-g.Start {
			return WaitingOnPresent
		}
		return WaitingForSubmit
	}
	submitted := int64(-1)
	for _, w := range work {
		if w.start == g.End && w.submitted >= 0 && (submitted < 0 || w.submitted < submitted) {
			submitted = w.submitted
		}
	}
	switch {
	case submitted < 0:
		return CauseUnknown
	case submitted >= g.Start:
		return WaitingForSubmit
	}
	return WaitingForDependency
}

// latency is from the earliest submission begun in [start, end) to the
// start of the first work it carried.
func latency(work []gpuWork, start, end int64) int64 {
	first, ran := int64(-1), int64(-1)
	for _, w := range work {
		if w.submitted < start || w.submitted >= end {
			continue
		}
		if first < 0 || w.submitted < first || w.submitted == first && w.start < ran {
			first, ran = w.submitted, w.start
		}
	}
	if first < 0 {
		return -1
	}
	return max(ran-first, 0)
}
