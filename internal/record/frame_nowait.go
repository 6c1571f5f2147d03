package record

import "github.com/framescope/framescope/timeline"

// With Options.FramesNoWait, BeginFrame and EndFrame take the frame's ID
// and time at the call and leave the boundary in the inbox, as a source
// leaves its spans: they take inMu alone, never mu, so that a program
// whose frames end inside its own calls (a Vulkan layer, in the
// program's vkQueueSubmit or vkQueuePresentKHR) never waits for a Flush
// building its batch or the merge placing spans. The boundary is applied
// in the inbox's order, after what sources handed in before it and
// before what they handed in after, so the timeline is the one the
// waiting calls would have made; a span begun after the call carries the
// new frame at once (frame and last are set at the call). The work that
// must run outside mu (OnBudget, FlushEvery) is left for the merge's
// goroutine (marksDue).

// frameMark is a frame boundary left in the inbox: a begin (its frame ID)
// or an end (begin 0), at its time.
type frameMark struct {
	begin uint64
	at    int64
}

// marksDue is the work applied marks left for the merge's goroutine.
type marksDue struct {
	overs []OverBudget
	flush bool
}

func (d *marksDue) any() bool { return len(d.overs) > 0 || d.flush }

// markBegin is BeginFrame with FramesNoWait.
func (r *Recorder) markBegin() uint64 {
	now := timeline.Now()
	r.inMu.Lock()
	id := r.last.Load() + 1 // last changes only here, under inMu
	r.frameStart.Store(now)
	r.frame.Store(id)
	r.last.Store(id)
	wake := r.leaveLocked(inboxEntry{isMark: true, mark: frameMark{begin: id, at: now}}, now)
	r.inMu.Unlock()
	if wake {
		r.wakeMerge()
	}
	return id
}

// markEnd is EndFrame with FramesNoWait. With no frame open it returns 0,
// and the mark counts the misuse when applied.
func (r *Recorder) markEnd() int64 {
	now := timeline.Now()
	r.inMu.Lock()
	open := r.frame.Swap(0)
	wake := r.leaveLocked(inboxEntry{isMark: true, mark: frameMark{at: now}}, now)
	r.inMu.Unlock()
	if wake {
		r.wakeMerge()
	}
	if open == 0 {
		return 0
	}
	return now - r.frameStart.Load()
}

// applyMark applies a frame boundary left in the inbox, as BeginFrame or
// EndFrame would have at its time. The caller holds mu.
func (r *Recorder) applyMark(m frameMark) {
	switch {
	case m.begin == 0 && r.open.ID == 0:
		r.misuse++ // an end with no frame open
	case m.begin == 0:
		r.endMarked(m.at)
	default:
		if r.open.ID != 0 {
			r.misuse++ // a begin with a frame open ends it
			r.endMarked(m.at)
		}
		r.lastID = m.begin
		r.open = timeline.Frame{ID: m.begin, Start: m.at}
	}
}

// endMarked ends the open frame at a mark's time and leaves what must run
// outside mu for the merge's goroutine. The caller holds mu.
func (r *Recorder) endMarked(at int64) {
	r.endFrameLocked(at)
	overs := r.dumpForBudgets(at)
	flush := r.opt.Sink != nil && r.opt.FlushEvery > 0 && r.ended%uint64(r.opt.FlushEvery) == 0
	if len(overs) == 0 && !flush {
		return
	}
	r.inMu.Lock()
	r.marksDue.overs = append(r.marksDue.overs, overs...)
	r.marksDue.flush = r.marksDue.flush || flush
	r.inMu.Unlock()
}

// runMarksDue does, on the merge's goroutine and outside mu, the work the
// marks applied since it last ran left: OnBudget calls, then a flush.
func (r *Recorder) runMarksDue() {
	r.inMu.Lock()
	d := r.marksDue
	r.marksDue = marksDue{}
	r.inMu.Unlock()
	if !d.any() {
		return
	}
	if d.flush {
		r.flushKeep() // an error waits for Flush or Close
	}
	r.callBudgets(d.overs)
}
