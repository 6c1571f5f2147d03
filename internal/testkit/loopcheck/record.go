package loopcheck

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// frameCB is one primary command buffer of a frame, as recorded.
type frameCB struct {
	buf     cmdBuf
	plan    cbPlan
	rec     *cbRec
	index   int
	begun   bool
	secs    []cmdBuf // its secondaries, made by its goroutine
	secRecs []*cbRec
	cached  *recorded // the slot's cached secondary it executes (Loop.CachedSecondaries)
}

// openZone is a zone begun and not yet ended.
type openZone struct {
	z   profiler.Zone
	rec *zoneRec
}

// regionBytes is the part of the work buffer each command buffer fills.
const regionBytes = 4096

// frame runs frame f: waits for the frame that used its slot last,
// records its command buffers on the recording goroutines, submits them
// under CPU spans marked for the arrows, and collects.
func (r *run) frame(f int) error {
	s := f % r.l.Ring
	if err := r.wait(s); err != nil {
		return err
	}
	sl := &r.slots[s]
	for g := range sl.pools {
		for q := range sl.pools[g] {
			if err := r.a.resetPool(sl.pools[g][q]); err != nil {
				return err
			}
		}
	}
	pl := r.l.frame(f)
	id := r.p.BeginFrame()
	fs := r.main.Span(r.name(spanFrame))
	cbs, err := r.take(f, sl, pl)
	if err != nil {
		return err
	}
	if err := r.rerecord(id, f, s, sl); err != nil {
		return err
	}
	var staleCB *cbRec
	switch {
	case pl.queues[0] != nil && pl.submitted:
		if staleCB, err = r.recordStale(id, s, sl); err != nil {
			return err
		}
	case sl.stale != nil:
		// A frame of its slot that does not submit it: it is recorded
		// again before it runs again. The library keeps the queries of
		// a command buffer submitted again from other frames' zones only
		// if it learns of it before the slot goes to another frame: when
		// it comes back in each frame of its slot (docs/design.md).
		sl.stale.recorded = false
	}
	r.submitting = pl.submitted
	js := make([]journal, r.l.Goroutines)
	errs := make([]error, r.l.Goroutines)
	var wg sync.WaitGroup
	for g := range r.l.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = r.record(id, s, sl, g, cbs, &js[g])
		}()
	}
	wg.Wait()
	for g := range js {
		r.j.zones = append(r.j.zones, js[g].zones...)
		r.j.calls += js[g].calls
		r.j.cpuSpans += js[g].cpuSpans
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := r.endAndSubmit(f, id, sl, pl, cbs, staleCB); err != nil {
		return err
	}
	if r.twin != nil {
		if err := r.twinFrame(id, f); err != nil {
			return err
		}
	}
	r.endSpan(fs)
	if !r.l.Boundary { // else the next BeginFrame ends the frame and collects
		r.p.EndFrame()
		switch pl.collect {
		case 0:
			r.collect(false)
		case 1:
			r.collect(true)
		}
	}
	if !r.l.Calibrated && r.l.Calibrate > 0 && f%r.l.Calibrate == 0 {
		for _, g := range r.gpus {
			// With frames in flight on the queue, the submit-and-wait may
			// take over FallbackTimeout: an answer, not a loss.
			if err := g.Calibrate(); err != nil {
				r.calErrs++
			}
		}
	}
	return nil
}

// take hands each planned command buffer of the frame one from its
// goroutine's pool, and begins the frame on each queue in the first
// command buffer the queue runs.
func (r *run) take(f int, sl *slot, pl plan) ([][]*frameCB, error) {
	cbs := make([][]*frameCB, r.l.Queues)
	for q, plans := range pl.queues {
		if plans == nil {
			continue
		}
		used := make([]int, r.l.Goroutines)
		for i, c := range plans {
			g := c.goroutine
			for len(sl.prim[g][q]) <= used[g] {
				b, err := r.a.alloc(sl.pools[g][q], false)
				if err != nil {
					return nil, err
				}
				sl.prim[g][q] = append(sl.prim[g][q], b)
			}
			cbs[q] = append(cbs[q], &frameCB{buf: sl.prim[g][q][used[g]], plan: c, rec: &cbRec{queue: q}, index: i})
			used[g]++
		}
		first := cbs[q][0]
		if err := first.buf.begin(false); err != nil {
			return nil, err
		}
		first.begun = true
		cmd := first.buf.handle()
		if r.l.HostReset && f%2 == 1 {
			cmd = nil // with host query reset it is not needed
		}
		r.gpus[q].BeginFrame(cmd) // when it cannot, the frame's zones are refused and counted
	}
	return cbs, nil
}

// record records, on goroutine g, the command buffers of the frame that
// are g's: in order, queue by queue, under a CPU span each.
func (r *run) record(frame uint64, s int, sl *slot, g int, cbs [][]*frameCB, j *journal) error {
	track := r.recs[g]
	carry := map[*frameCB]openZone{} // zones across command buffers, by the one that ends them
	secTaken := make([]int, r.l.Queues)
	for q := range cbs {
		for _, fc := range cbs[q] {
			if fc.plan.goroutine != g {
				continue
			}
			span := track.Span(r.name(spanRecord))
			if !fc.begun {
				if err := fc.buf.begin(false); err != nil {
					return err
				}
			}
			if oz, ok := carry[fc]; ok {
				oz.z.EndIn(fc.buf.handle())
				oz.rec.ended++
				oz.rec.end = fc.rec
			}
			rec := recorder{r: r, frame: frame, q: q, j: j}
			execute := func() error {
				return r.secondaries(&rec, s, sl, g, fc, &secTaken[q])
			}
			render := r.l.Rendering && r.a.rendering && r.a.queues[q].flags&queueGraphics != 0 && (int(frame)+fc.index)%2 == 0
			open, err := rec.run(fc.buf, fc.rec, fc.plan.script, fmt.Sprintf("q%d c%d", q, fc.index), r.region(s, q, fc.index, 0), execute, render)
			if err != nil {
				return err
			}
			if fc.plan.crossTo >= 0 && len(open) > 0 {
				carry[cbs[q][fc.plan.crossTo]] = open[len(open)-1]
			}
			if rc := sl.secondaryRecording(q); rc != nil && fc.index == 0 && !fc.plan.unsubmitted && r.submitting {
				// The slot's cached secondary, in the queue's first
				// primary: an execution Submit names.
				fc.buf.execute([]cmdBuf{rc.buf})
				fc.cached = rc
			}
			span.End()
			j.cpuSpans++
		}
	}
	return nil
}

// recorder runs scripts into command buffers of one queue, for one
// goroutine, noting each zone in its journal.
type recorder struct {
	r     *run
	frame uint64
	q     int
	j     *journal
}

// run runs script into buf (whose record is rec), naming its zones
// "prefix zN" and filling its region of the work buffer; execute runs at
// opExecute. With render, the zones' ops go inside dynamic rendering
// instances, ended for the ops that may not run in one (transfers,
// dispatches, secondaries executed). It returns the zones it leaves open,
// innermost last.
func (x *recorder) run(buf cmdBuf, rec *cbRec, script []op, prefix string, region int, execute func() error, render bool) ([]openZone, error) {
	r, j := x.r, x.j
	var stack []openZone
	nz, nf, nd := 0, 0, 0
	inside := false
	rendering := func(on bool) {
		switch {
		case on && !inside:
			r.a.beginRendering(buf)
		case !on && inside:
			r.a.endRendering(buf)
		}
		inside = on
	}
	defer rendering(false)
	for _, o := range script {
		if render {
			rendering(o != opFill && o != opExecute && o != opDispatch)
		}
		switch o {
		case opBegin:
			name := fmt.Sprintf("%s z%d", prefix, nz)
			nz++
			z := r.gpus[x.q].Zone(buf.handle(), r.name(name))
			j.calls++
			zr := &zoneRec{frame: x.frame, queue: x.q, name: name, valid: z.Valid(), begin: rec}
			if len(stack) > 0 {
				zr.parent = stack[len(stack)-1].rec
			}
			j.zones = append(j.zones, zr)
			stack = append(stack, openZone{z, zr})
		case opEnd, opEndTwice, opLeaveOpen:
			if len(stack) == 0 {
				continue
			}
			oz := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch o {
			case opEnd:
				oz.z.End()
				oz.rec.ended++
			case opEndTwice:
				oz.z.End()
				oz.z.End() // misuse: counted, loses nothing
				oz.rec.ended += 2
			}
			if o != opLeaveOpen {
				oz.rec.end = rec
			}
		case opZeroEnd:
			var z profiler.Zone
			z.End() // does nothing
		case opFill:
			off := uint64(region)*regionBytes + uint64(nf*4%regionBytes)
			r.a.fill(buf, off, uint32(nf), nf > 0 && nf*4%regionBytes == 0)
			nf++
		case opExecute:
			if err := execute(); err != nil {
				return nil, err
			}
		case opDispatch:
			if !r.dispatches(x.q) {
				continue
			}
			groups := uint32(1 + nd%5)
			nd++
			r.a.dispatch(buf, groups)
			for _, oz := range stack {
				oz.rec.compute += countGroup * uint64(groups)
			}
		}
	}
	return stack, nil
}

// secondaries records a primary's secondaries, from its goroutine's pool
// (*taken of them already used this frame), and executes them in it.
func (r *run) secondaries(x *recorder, s int, sl *slot, g int, fc *frameCB, taken *int) error {
	q := x.q
	for si, script := range fc.plan.secondaries {
		for len(sl.sec[g][q]) <= *taken {
			b, err := r.a.alloc(sl.pools[g][q], true)
			if err != nil {
				return err
			}
			sl.sec[g][q] = append(sl.sec[g][q], b)
		}
		buf := sl.sec[g][q][*taken]
		*taken++
		if err := buf.begin(true); err != nil {
			return err
		}
		rec := &cbRec{queue: q, primary: fc.rec}
		open, err := x.run(buf, rec, script, fmt.Sprintf("q%d c%d s%d", q, fc.index, si), r.region(s, q, fc.index, si+1), nil, false)
		if err != nil {
			return err
		}
		_ = open // never ended: counted by the library, the zones of a misuse
		if err := buf.end(); err != nil {
			return err
		}
		fc.secs = append(fc.secs, buf)
		fc.secRecs = append(fc.secRecs, rec)
	}
	fc.buf.execute(fc.secs)
	return nil
}

// region is the part of the work buffer a command buffer fills: one of
// its own for each frame in flight, queue, command buffer and secondary,
// so that nothing two command buffers run needs a barrier between them.
func (r *run) region(s, q, cb, sec int) int {
	n := int(workSize() / regionBytes)
	return (((s*4+q)*8+cb)*4 + sec) % n
}

// endAndSubmit ends the frame on each queue, in the last command buffer
// it runs, ends the command buffers and submits them: queues chained by
// semaphores, each submission under a CPU span marked with its key.
func (r *run) endAndSubmit(f int, frame uint64, sl *slot, pl plan, cbs [][]*frameCB, staleCB *cbRec) error {
	var used []int
	for q := r.l.Queues - 1; q >= 0; q-- {
		if cbs[q] != nil {
			used = append(used, q)
		}
	}
	for _, q := range used {
		groups := pl.submits[q]
		var last *frameCB
		for _, gr := range groups {
			for _, i := range gr {
				if !cbs[q][i].plan.unsubmitted {
					last = cbs[q][i]
				}
			}
		}
		var end vkg.CommandBuffer
		if !pl.endNil[q] {
			end = last.buf.handle()
		}
		r.gpus[q].EndFrame(end)
		if r.l.MisuseEvery > 0 && f%r.l.MisuseEvery == 0 {
			// A zone after EndFrame: refused, counted.
			z := r.gpus[q].Zone(last.buf.handle(), r.name("late"))
			r.j.calls++
			zr := &zoneRec{frame: frame, queue: q, name: "late", valid: z.Valid(), begin: last.rec}
			if z.Valid() {
				z.End()
				zr.ended, zr.end = 1, last.rec
			}
			r.j.zones = append(r.j.zones, zr)
		}
		for _, fc := range cbs[q] {
			if err := fc.buf.end(); err != nil {
				return err
			}
		}
	}
	order := make([]int, len(used)) // of used: the order the CPU submits the queues in
	for k := range used {
		order[k] = k
		if r.l.Timeline {
			r.tnext[used[k]]++
			sl.tvals[used[k]] = r.tnext[used[k]]
		}
	}
	if r.l.WaitBeforeSignal {
		// Each queue's first batch waits for a value the queue submitted
		// after it signals: the application submits the frame under its
		// queue lock, so the profiler's own submissions wait behind it.
		slices.Reverse(order)
		r.queue.Lock()
		defer r.queue.Unlock()
	}
	for _, k := range order {
		q := used[k]
		groups := pl.submits[q]
		for gi, gr := range groups {
			var bs batchSync
			if gi == 0 && k > 0 {
				bs.wait, bs.waitAt = r.chain(sl, used[k-1])
			}
			if gi == len(groups)-1 {
				bs.signal, bs.signalAt, bs.fence = r.signal(sl, q, k == len(used)-1)
			}
			if err := r.submit(frame, sl, pl, q, gi, cbs[q], gr, bs, staleCB); err != nil {
				return err
			}
		}
		sl.inFlight[q] = true
	}
	return nil
}

// chain is what the first batch of a queue waits for: the last batch of
// the queue before it in the frame, by its binary semaphore or its
// timeline's value.
func (r *run) chain(sl *slot, prev int) (semaphore, uint64) {
	if r.l.Timeline {
		return r.timelines[prev], sl.tvals[prev]
	}
	return sl.sems[prev], 0
}

// signal is what the last batch of queue q signals: the frame's value on
// its timeline, which the application waits for; or its fence, and its
// binary semaphore unless it is the frame's last queue.
func (r *run) signal(sl *slot, q int, lastQueue bool) (semaphore, uint64, fence) {
	if r.l.Timeline {
		return r.timelines[q], sl.tvals[q], fence{}
	}
	if lastQueue {
		return semaphore{}, 0, sl.fences[q]
	}
	return sl.sems[q], 0, sl.fences[q]
}

// submit submits one group of command buffers under a CPU span, marked
// with the key GPU.Submit gives them and their secondaries.
func (r *run) submit(frame uint64, sl *slot, pl plan, q, gi int, cbs []*frameCB, group []int, bs batchSync, staleCB *cbRec) error {
	name := fmt.Sprintf("submit q%d s%d", q, gi)
	span := r.main.Span(r.name(name))
	sub := &submitRec{frame: frame, queue: q, index: gi, span: name, linked: pl.submitted}
	var bufs []cmdBuf
	var named []vkg.CommandBuffer
	for _, i := range group {
		fc := cbs[i]
		if fc.plan.unsubmitted {
			continue
		}
		bufs = append(bufs, fc.buf)
		fc.rec.submit = sub
		fc.rec.named = pl.submitted
		named = append(named, fc.buf.handle())
		for k, s := range fc.secs {
			fc.secRecs[k].named = pl.submitted && fc.plan.nameSecs
			if fc.plan.nameSecs {
				named = append(named, s.handle())
			}
		}
		if rc := fc.cached; rc != nil {
			named = append(named, rc.buf.handle())
			r.executeRecording(frame, q, rc, sub)
		}
	}
	if rc := sl.recording(q); gi == 0 && rc != nil && pl.submitted && len(bufs) < 8 {
		// The slot's recording runs in the queue's first submission.
		bufs = append(bufs, rc.buf)
		named = append(named, rc.buf.handle())
		r.executeRecording(frame, q, rc, sub)
	}
	if st := sl.stale; gi == 0 && q == 0 && st != nil && st.recorded && pl.submitted {
		// The slot's stale command buffer, submitted again (or, in the
		// frame that recorded it, once); with no room in the batch, it
		// is recorded again before it runs again (see frame).
		if len(bufs) < 8 {
			bufs = append(bufs, st.buf)
			named = append(named, st.buf.handle())
			if staleCB != nil {
				staleCB.submit, staleCB.named = sub, true
			} else {
				r.executeStaleAgain(st)
			}
		} else {
			st.recorded = false
		}
	}
	if pl.submitted {
		r.gpus[q].Submit(span, named...)
	}
	if !r.l.WaitBeforeSignal { // else endAndSubmit holds it
		r.queue.Lock()
	}
	sub.t0 = timeline.Now()
	err := r.a.submit(r.a.queues[q], bufs, bs)
	if !r.l.WaitBeforeSignal {
		r.queue.Unlock()
	}
	r.endSpan(span)
	sl.submits = append(sl.submits, sub)
	r.j.submits = append(r.j.submits, sub)
	return err
}
