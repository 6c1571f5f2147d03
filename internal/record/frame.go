package record

import (
	"slices"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// frameState is the recorder's frame bookkeeping.
type frameState struct {
	open        timeline.Frame // the frame in progress; ID 0 when none
	lastID      uint64         // the last frame ID given out
	lastEnded   uint64         // the last frame ended
	lastEndTime int64
	ended       uint64 // frames ended so far

	gpuFrames     map[uint64]*gpuFrame // GPU busy intervals of unsettled frames
	gpuSettled    uint64               // frames up to this one have had their GPU time sampled
	settleScratch []uint64
	gpuFree       []*gpuFrame // settled frames kept for reuse
	// gpuLast is gpuFrames[gpuLastID], the frame the last outermost span
	// went to, so that a frame's spans look it up in the map once.
	gpuLastID uint64
	gpuLast   *gpuFrame

	framesTrack  timeline.TrackID
	frameName    timeline.NameID
	cpuTimeTrack timeline.TrackID
	gpuTimeTrack timeline.TrackID
	droppedTrack timeline.TrackID
	lastGPUDrops uint64
}

// gpuFrame gathers the outermost GPU spans of one frame, to sample its
// GPU busy time once it has settled.
type gpuFrame struct {
	ivs [][2]int64
}

// BeginFrame begins the next frame and returns its ID (1, 2, 3...). CPU
// spans begun from now on carry it. A frame still open is ended first,
// which counts as misuse.
func (r *Recorder) BeginFrame() uint64 {
	if r.opt.FramesNoWait {
		return r.markBegin()
	}
	r.lock()
	var overs []OverBudget
	if r.open.ID != 0 {
		r.misuse++
		now := timeline.Now()
		r.endFrameLocked(now)
		overs = r.dumpForBudgets(now)
	}
	r.lastID++
	r.open = timeline.Frame{ID: r.lastID, Start: timeline.Now()}
	r.frame.Store(r.lastID)
	r.last.Store(r.lastID)
	id := r.lastID
	r.mu.Unlock()
	r.callBudgets(overs)
	return id
}

// EndFrame ends the frame in progress and returns its CPU duration in ns
// (0, counted as misuse, when no frame is open). It collects the CPU
// tracks, samples the per-frame counters, settles the GPU time of older
// frames, checks the budgets (Options.CPUBudget and GPUBudget, calling
// OnBudget), expires old submission keys, evicts what left the window,
// and flushes to the sink every Options.FlushEvery frames.
func (r *Recorder) EndFrame() int64 {
	if r.opt.FramesNoWait {
		return r.markEnd()
	}
	r.lock()
	if r.open.ID == 0 {
		r.misuse++
		r.mu.Unlock()
		return 0
	}
	now := timeline.Now()
	d := r.endFrameLocked(now)
	overs := r.dumpForBudgets(now)
	flush := r.opt.Sink != nil && r.opt.FlushEvery > 0 && r.ended%uint64(r.opt.FlushEvery) == 0
	r.mu.Unlock()
	if flush {
		r.flushKeep() // an error waits for Flush or Close
	}
	r.callBudgets(overs)
	return d
}

// endFrameLocked ends the open frame at now. The caller holds mu.
func (r *Recorder) endFrameLocked(now int64) int64 {
	f := r.open
	f.End = now
	r.open = timeline.Frame{}
	if !r.opt.FramesNoWait { // there the call set it (markEnd)
		r.frame.Store(0)
	}
	r.appendFrame(f)
	r.lastEnded = f.ID
	r.lastEndTime = now
	r.ended++

	r.builtin(&r.framesTrack, "Frames", timeline.TrackFrames, timeline.UnitNone)
	if r.frameName == 0 {
		r.frameName = r.nameLocked("frame")
	}
	r.appendSpan(timeline.Span{Track: r.framesTrack, Name: r.frameName, Start: f.Start, End: f.End, Frame: f.ID})
	r.builtin(&r.cpuTimeTrack, "CPU time per frame", timeline.TrackCounter, timeline.UnitNs)
	r.appendSample(timeline.Sample{Track: r.cpuTimeTrack, Time: now, Value: float64(f.End - f.Start)})

	r.collectCPU()
	r.checkBudget(BudgetCPU, f.ID, f.End-f.Start)
	r.settleGPUFrames(false)
	// GPU zones that never reached the timeline: the profiler's counts
	// and the recorder's own.
	if g := books.GPUZones(r.drops); g != r.lastGPUDrops {
		r.lastGPUDrops = g
		r.builtin(&r.droppedTrack, "GPU zones dropped", timeline.TrackCounter, timeline.UnitCount)
		r.appendSample(timeline.Sample{Track: r.droppedTrack, Time: now, Value: float64(g)})
	}
	r.expireKeys(false)
	r.evict(now)
	return f.End - f.Start
}

// builtin defines one of the recorder's own tracks on first use. The
// caller holds mu.
func (r *Recorder) builtin(id *timeline.TrackID, name string, kind timeline.TrackKind, unit timeline.Unit) {
	if *id == 0 {
		*id = r.addTrack(timeline.Track{Kind: kind, Name: name, Unit: unit, Order: -1})
	}
}

// maxFrameIntervals caps the outermost GPU spans one frame's GPU time is
// computed from; more are counted in Drops.Untimed.
const maxFrameIntervals = 1 << 16

// maxFreeFrames and maxReuseIntervals bound the settled frames kept for
// reuse: a few frames in flight, of up to 4096 outermost zones each.
const (
	maxFreeFrames     = 8
	maxReuseIntervals = 4096
)

// noteGPUFrame adds an outermost GPU span of frame f to its frame's busy
// time, or counts it in Drops.Untimed when that frame's time was already
// sampled, the frame was not begun, or the frame has too many. The caller
// holds mu.
func (r *Recorder) noteGPUFrame(frame uint64, start, end int64) {
	if frame == 0 {
		return // in no frame
	}
	if frame > r.lastID+1 || frame <= r.gpuSettled {
		r.drops.Untimed++
		return
	}
	g := r.gpuLast
	if frame != r.gpuLastID || g == nil {
		g = r.gpuFrames[frame]
	}
	if g == nil {
		if n := len(r.gpuFree); n > 0 {
			g, r.gpuFree = r.gpuFree[n-1], r.gpuFree[:n-1]
		} else {
			g = &gpuFrame{}
		}
		r.gpuFrames[frame] = g
	}
	r.gpuLastID, r.gpuLast = frame, g
	if len(g.ivs) >= maxFrameIntervals {
		r.drops.Untimed++
		return
	}
	g.ivs = append(g.ivs, [2]int64{})
	iv := &g.ivs[len(g.ivs)-1] // set one by one: see lane.fit
	iv[0], iv[1] = start, end
}

// settleGPUFrames samples, oldest first, the GPU busy time of every frame
// that has settled: ended SettleFrames frames ago, or, when all is set,
// begun. Their zones that come later are counted in Drops.Untimed. The
// caller holds mu.
func (r *Recorder) settleGPUFrames(all bool) {
	settle := uint64(r.opt.SettleFrames)
	limit := uint64(0) // frames up to it settle
	if r.lastEnded > settle {
		limit = r.lastEnded - settle
	}
	if wm, ok := r.gpuWatermark(); ok {
		limit = min(wm, r.lastEnded)
		if r.lastEnded > MaxSettleFrames {
			limit = max(limit, r.lastEnded-MaxSettleFrames)
		}
	}
	switch {
	case all:
		r.gpuSettled = r.lastID
	case limit > r.gpuSettled:
		r.gpuSettled = limit
	}
	ids := r.settleScratch[:0]
	for id := range r.gpuFrames {
		if id <= r.gpuSettled {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	r.gpuLastID, r.gpuLast = 0, nil
	for _, id := range ids {
		g := r.gpuFrames[id]
		delete(r.gpuFrames, id)
		busy, last := unionLen(g.ivs)
		r.builtin(&r.gpuTimeTrack, "GPU time per frame", timeline.TrackCounter, timeline.UnitNs)
		r.appendSample(timeline.Sample{Track: r.gpuTimeTrack, Time: last, Value: float64(busy)})
		r.checkBudget(BudgetGPU, id, busy)
		// Reused for a later frame, so that steady state allocates nothing;
		// the free list holds at most a few, each at most maxReuse long.
		if len(r.gpuFree) < maxFreeFrames && cap(g.ivs) <= maxReuseIntervals {
			g.ivs = g.ivs[:0]
			r.gpuFree = append(r.gpuFree, g)
		}
	}
	r.settleScratch = ids[:0]
}

// unionLen returns the total length covered by the intervals and the
// latest end.
func unionLen(ivs [][2]int64) (total, last int64) {
	slices.SortFunc(ivs, func(a, b [2]int64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	cs, ce := ivs[0][0], ivs[0][1]
	for _, iv := range ivs[1:] {
		if iv[0] > ce {
			total += ce - cs
			cs, ce = iv[0], iv[1]
		} else if iv[1] > ce {
			ce = iv[1]
		}
	}
	total += ce - cs
	return total, ce
}
