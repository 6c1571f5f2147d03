package live

import (
	"math"

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

// frameLimits is what limits the window's frames, by frame ID: the
// frames limits.Of judges, and whose figures are final.
type frameLimits map[uint64]*limits.Frame

// windowLimits reads what limits each frame of the window. The trace it
// hands limits.Of shares the window's slices, which the analysis only
// reads. Caller holds mu.
func (w *watcher) windowLimits() frameLimits {
	wn := &w.win
	if len(wn.frames) == 0 {
		return nil
	}
	flows, _ := flowsOf(wn.seqs, wn.flows)
	t := &timeline.Trace{Names: wn.names, Tracks: wn.tracks, Spans: wn.spans, Frames: wn.frames, Flows: flows}
	r := limits.Of(t)
	out := make(frameLimits, len(r.Frames))
	for i := range r.Frames {
		f := &r.Frames[i]
		if w.judged(f.ID) {
			out[f.ID] = f
		}
	}
	return out
}

// judged says whether the window holds all that frame id's verdict
// stands on: the GPU work of it and the frames before it that may run in
// its interval. The oldest frame of a window that began later than the
// recorder's first frame lacks its predecessor's work. Caller holds mu.
func (w *watcher) judged(id uint64) bool {
	wn := &w.win
	if id > wn.settled {
		return false
	}
	return id != wn.frames[0].ID || id == 1
}

// limitOf fills fv's verdict and busy shares from fl; last says fv is
// the window's newest frame, which limits.Of leaves out.
func (fl frameLimits) limitOf(fv *frameView, last, settled bool) {
	fv.GPUBusy, fv.CPUBusy = -1, -1
	f := fl[fv.ID]
	switch {
	case f != nil:
		fv.Limit = f.Limit.String()
		fv.GPUBusy = share(f.GPUBusy, f.Dur())
		if f.Thread != 0 {
			fv.CPUBusy = share(f.CPUBusy, f.Dur())
		}
	case last || !settled:
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
// limits.Of read it over; none where the frame has no verdict.
func (fl frameLimits) gapsOf(frame uint64) (gaps []gapView, intervalMs float64) {
	f := fl[frame]
	if f == nil {
		return nil, 0
	}
	for _, g := range f.Gaps {
		gaps = append(gaps, gapView{StartMs: float64(g.Start-f.Start) / ms, DurMs: float64(g.End-g.Start) / ms, Cause: g.Cause.String()})
	}
	return gaps, float64(f.Dur()) / ms
}
