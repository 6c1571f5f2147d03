package limits

import (
	"cmp"
	"slices"

	"github.com/framescope/framescope/timeline"
)

// frame works out one frame's figures. Frames come in order of start:
// the index's lists are swept by them.
func (in *traceIndex) frame(fr timeline.Frame) Frame {
	f := Frame{ID: fr.ID, Start: fr.Start, End: fr.End, Latency: -1, CPUBusy: -1, CPUWait: -1, PresentWait: -1}
	work := in.work.during(fr.Start, fr.End)
	busy := union(work, fr.Start, fr.End)
	maxErr := int64(0)
	for _, w := range work {
		maxErr = max(maxErr, w.errNs)
	}
	f.GPUBusy, f.GPUErrNs = total(busy), 2*int64(len(busy))*maxErr
	f.Queues = queueBusy(work, fr.Start, fr.End)
	var presents []stretch
	f.Thread, presents = in.submitter(fr.Start, fr.End)
	if th := in.threads[f.Thread]; th != nil {
		waits := th.waits.during(fr.Start, fr.End)
		f.PresentWait = total(union(presents, fr.Start, fr.End))
		f.CPUWait = total(union(mergeByStart(waits, presents), fr.Start, fr.End))
		f.CPUBusy = f.Dur() - f.CPUWait
	}
	f.Gaps = gaps(busy, work, fr.Start, fr.End, presents)
	f.Latency = latency(work, fr.Start, fr.End)
	f.Limit = verdict(f)
	return f
}

// union is the union of intervals (in order of start) clipped to [start,
// end), in order.
func union[T interface{ span() stretch }](xs []T, start, end int64) []stretch {
	var out []stretch
	for _, x := range xs {
		sp := x.span()
		a, b := max(sp.start, start), min(sp.end, end)
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

// mergeByStart is two lists in order of start as one.
func mergeByStart(a, b []stretch) []stretch {
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, func(x, y stretch) int { return cmp.Compare(x.start, y.start) })
	return out
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
		mine := slices.DeleteFunc(slices.Clone(work), func(w gpuWork) bool { return w.queue != q })
		out[i] = QueueBusy{Track: q, Busy: total(union(mine, start, end))}
	}
	return out
}

// submitter is the CPU track that began the most submissions in [start,
// end), or, where none did, the one that presented the most there; 0
// where none did either. It returns its presents in the frame too. Every
// thread's submissions and presents are swept by every frame.
func (in *traceIndex) submitter(start, end int64) (timeline.TrackID, []stretch) {
	subs, pres := map[timeline.TrackID]int{}, map[timeline.TrackID][]stretch{}
	for _, id := range in.ids {
		th := in.threads[id]
		for _, s := range th.submits.during(start, end) {
			if s.start >= start {
				subs[id]++
			}
		}
		pres[id] = th.presents.during(start, end)
	}
	best, most := timeline.TrackID(0), 0
	for _, id := range in.ids {
		if subs[id] > most {
			best, most = id, subs[id]
		}
	}
	if most == 0 {
		for _, id := range in.ids {
			n := 0
			for _, p := range pres[id] {
				if p.start >= start {
					n++
				}
			}
			if n > most {
				best, most = id, n
			}
		}
	}
	return best, pres[best]
}

// gaps are the stretches of [start, end) outside busy, each with its
// cause (see Cause); presents are the submitting thread's in the frame.
func gaps(busy []stretch, work []gpuWork, start, end int64, presents []stretch) []Gap {
	var out []Gap
	at := start
	for _, b := range append(busy, stretch{end, end}) {
		if b.start > at {
			g := Gap{Start: at, End: b.start}
			g.Cause = causeOf(g, work, end, presents)
			out = append(out, g)
		}
		at = max(at, b.end)
	}
	return out
}

// causeOf is why the GPU was idle in g, a gap of a frame that ends at end.
// Where the CPU had not handed the work over, and sat in present or
// acquire for most of the gap, presentation held it.
func causeOf(g Gap, work []gpuWork, end int64, presents []stretch) Cause {
	onPresent := 2*total(union(presents, g.Start, g.End)) >= g.End-g.Start
	if g.End >= end { // no work after it in the frame
		if onPresent {
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
	case submitted >= g.Start && onPresent:
		return WaitingOnPresent
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
	if ran <= first { // ran before it was submitted: another submission's
		return 0
	}
	return ran - first
}
