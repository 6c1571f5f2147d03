package live

import (
	"maps"
	"math"
	"sort"

	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// pending is the limit of a frame whose verdict waits on what is yet to
// come: its GPU work not settled, or the next frame, where its interval
// ends, not begun.
const pending = "pending"

// gapView is one stretch of the selected frame in which no GPU queue ran
// work, from the frame's start, and why (limits.Cause's words).
type gapView struct {
	StartMs float64 `json:"start_ms"`
	DurMs   float64 `json:"dur_ms"`
	Cause   string  `json:"cause"`
}

// verdicts are what limits the window's frames (timeline/limits), judged
// as they close: a frame's verdict stands on the spans in its interval,
// from its start to the next frame's, and the GPU work there is of it and
// the frames before it, so once it has settled and the next frame has
// begun, nothing to come changes it but a CPU span begun in its interval
// and ended after (a span reaches the window once it ends), which the
// verdict leaves out. Each view change reads only the frames that closed
// since the last.
type verdicts struct {
	by   map[uint64]*limits.Frame // of the window's judged frames, by ID
	next uint64                   // the frames before this ID are judged, or never will be
	// reach is the earliest start of the spans merged since the last
	// judge (late: any were). A span can reach the window after the
	// frames it lies in were judged (the layer hands its CPU spans over
	// in batches), and those frames are judged again.
	reach int64
	late  bool
}

// merged notes spans that reached the window, for judge to take back
// what they change.
func (v *verdicts) merged(spans []timeline.Span) {
	for i := range spans {
		if !v.late || spans[i].Start < v.reach {
			v.reach, v.late = spans[i].Start, true
		}
	}
}

// rejudge takes back the verdicts of the frames whose interval (to the
// next frame's start) ends after reach: a span merged since lies in them.
func (v *verdicts) rejudge(frames []timeline.Frame) {
	if !v.late {
		return
	}
	v.late = false
	i := sort.Search(len(frames), func(i int) bool {
		end := frames[i].End
		if i+1 < len(frames) {
			end = max(end, frames[i+1].Start)
		}
		return end > v.reach
	})
	if i < len(frames) && frames[i].ID < v.next {
		v.next = frames[i].ID
	}
}

// judge reads what limits the window's frames that closed since the last
// call. The oldest frame of the window, where the frame before it is gone
// unjudged (the window began after the recorder's first frame, or no
// view was made while frames went by), is never judged: that frame's
// work, which may run in its interval, is not in the window. Caller holds
// mu.
func (w *watcher) judge() {
	wn, v := &w.win, &w.win.verdicts
	if len(wn.frames) == 0 {
		return
	}
	oldest := wn.frames[0].ID
	if v.by == nil {
		v.by = map[uint64]*limits.Frame{}
	}
	v.rejudge(wn.frames)
	maps.DeleteFunc(v.by, func(id uint64, _ *limits.Frame) bool { return id < oldest })
	if v.next <= oldest && oldest != 1 {
		v.next = oldest + 1 // the frame before the oldest, unjudged, is gone
	}
	from := sort.Search(len(wn.frames), func(i int) bool { return wn.frames[i].ID >= v.next })
	// Up to the newest settled frame but the window's newest, whose
	// interval no next frame closes yet.
	end := sort.Search(len(wn.frames), func(i int) bool { return wn.frames[i].ID > wn.settled })
	end = min(end, len(wn.frames)-1)
	if from >= end {
		return
	}
	// The frame before the first, and its spans, go with them: what it
	// submitted may run in theirs.
	r := limits.Of(w.traceOf(max(from-1, 0), end+1))
	for i := range r.Frames {
		if id := r.Frames[i].ID; id >= v.next && id < wn.frames[end].ID {
			v.by[id] = &r.Frames[i]
		}
	}
	v.next = wn.frames[end].ID
}

// traceOf is a trace of the window's frames [lo, hi) for limits.Of: their
// spans (those that end after the first begins), the flows between them,
// and the window's names and tracks, which it only reads. Caller holds mu.
func (w *watcher) traceOf(lo, hi int) *timeline.Trace {
	wn := &w.win
	t := &timeline.Trace{Names: wn.names, Tracks: wn.tracks, Frames: wn.frames[lo:hi]}
	var seqs []uint64
	for i := range wn.spans {
		if wn.spans[i].End > wn.frames[lo].Start {
			t.Spans = append(t.Spans, wn.spans[i])
			seqs = append(seqs, wn.seqs[i])
		}
	}
	t.Flows, _ = flowsOf(seqs, wn.flows)
	return t
}

// limitOf fills fv's verdict and busy shares: pending until the frame
// is judged; none where it was judged to have none.
func (v *verdicts) limitOf(fv *frameView) {
	fv.GPUBusy, fv.CPUBusy = -1, -1
	f := v.by[fv.ID]
	switch {
	case f != nil:
		fv.Limit = f.Limit.String()
		fv.GPUBusy = share(f.GPUBusy, f.Dur())
		if f.Thread != 0 {
			fv.CPUBusy = share(f.CPUBusy, f.Dur())
		}
	case fv.ID >= v.next:
		fv.Limit = pending
	}
}

// share is part/whole to four places.
func share(part, whole int64) float64 {
	return math.Round(float64(part)/float64(whole)*1e4) / 1e4
}

// limitedBy is each verdict's share of the frames that have one; nil
// where none has.
func limitedBy(frames []frameView) map[string]float64 {
	n := map[string]int{}
	total := 0
	for _, f := range frames {
		if f.Limit != "" && f.Limit != pending {
			n[f.Limit]++
			total++
		}
	}
	if total == 0 {
		return nil
	}
	out := make(map[string]float64, len(n))
	for k, c := range n {
		out[k] = share(int64(c), int64(total))
	}
	return out
}

// gapsOf lists frame's GPU idle gaps from its start, with the interval
// they lie in; none where the frame has no verdict.
func (v *verdicts) gapsOf(frame uint64) (gaps []gapView, intervalMs float64) {
	f := v.by[frame]
	if f == nil {
		return nil, 0
	}
	for _, g := range f.Gaps {
		gaps = append(gaps, gapView{StartMs: float64(g.Start-f.Start) / ms, DurMs: float64(g.End-g.Start) / ms, Cause: g.Cause.String()})
	}
	return gaps, float64(f.Dur()) / ms
}
