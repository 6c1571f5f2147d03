package loopcheck

// One frame of a bare loop, as run.frame: the same plan, recorded on
// threads, submitted the same way, with labels for zones.

// bareFrameCB is one primary of the frame, as frameCB.
type bareFrameCB struct {
	cb     *bareCB
	plan   cbPlan
	index  int
	begun  bool
	cached *bareRec
}

func (g *bareGen) frame(f int) {
	s := f % g.l.Ring
	g.wait(s)
	sl := &g.slots[s]
	for _, ps := range sl.pools {
		for _, p := range ps {
			g.resetPool(p)
		}
	}
	pl := g.l.frame(f)
	cbs := g.take(sl, pl)
	g.rerecord(f, sl)
	switch {
	case pl.queues[0] != nil && pl.submitted:
		g.recordStale(f, sl)
	case sl.stale != nil:
		sl.stale.stale = true
	}
	g.op("fork")
	for gr := range g.l.Goroutines {
		g.op("thread")
		g.record(f, s, sl, pl, gr, cbs)
	}
	g.op("join")
	g.endAndSubmit(sl, pl, cbs)
	if g.twin != nil {
		g.twinFrame(f)
	}
}

// take gives each planned primary a command buffer of its goroutine's
// pool, and begins the first of each queue on the loop's thread.
func (g *bareGen) take(sl *bareSlot, pl plan) [][]*bareFrameCB {
	cbs := make([][]*bareFrameCB, g.l.Queues)
	for q, plans := range pl.queues {
		if plans == nil {
			continue
		}
		used := make([]int, g.l.Goroutines)
		for i, c := range plans {
			gr := c.goroutine
			for len(sl.prim[gr][q]) <= used[gr] {
				sl.prim[gr][q] = append(sl.prim[gr][q], g.alloc(sl.pools[gr][q], q, false))
			}
			cbs[q] = append(cbs[q], &bareFrameCB{cb: sl.prim[gr][q][used[gr]], plan: c, index: i})
			used[gr]++
		}
		g.begin(cbs[q][0].cb, false)
		cbs[q][0].begun = true
	}
	return cbs
}

// record records goroutine gr's primaries of the frame, queue by queue,
// on a thread of their own.
func (g *bareGen) record(f, s int, sl *bareSlot, pl plan, gr int, cbs [][]*bareFrameCB) {
	carry := map[*bareFrameCB]bool{} // primaries that end a label an earlier one began
	secTaken := make([]int, g.l.Queues)
	for q := range cbs {
		for _, fc := range cbs[q] {
			if fc.plan.goroutine != gr {
				continue
			}
			if !fc.begun {
				g.begin(fc.cb, false)
			}
			if carry[fc] && g.spans {
				g.unlabel(fc.cb)
				g.crossed = true
			}
			execute := func() { g.secondaries(f, s, sl, gr, q, fc, &secTaken[q]) }
			render := g.rendering && g.queues[q].flags&queueGraphics != 0 && (f+fc.index)%2 == 0
			if render && g.continuing && fc.plan.crossTo < 0 {
				// The instance's contents: a secondary that continues it,
				// in place of the script's labels.
				g.continuingIn(fc.cb, f, q, fc.plan.script, bareRegion(s, q, fc.index, 0), execute, func() *bareCB {
					return g.takeSecondary(sl, gr, q, &secTaken[q])
				})
			} else {
				g.script(fc.cb, f, q, fc.plan.script, bareRegion(s, q, fc.index, 0), execute, render, fc.plan.crossTo >= 0)
			}
			if fc.plan.crossTo >= 0 {
				carry[cbs[q][fc.plan.crossTo]] = true
			}
			if rc := sl.secondaryRec(q); rc != nil && fc.index == 0 && !fc.plan.unsubmitted && pl.submitted {
				g.execute(fc.cb, []*bareCB{rc.cb})
				fc.cached = rc
			}
		}
	}
}

func (sl *bareSlot) secondaryRec(q int) *bareRec {
	if sl.secRecs == nil {
		return nil
	}
	return sl.secRecs[q]
}

func (sl *bareSlot) recording(q int) *bareRec {
	if sl.recs == nil {
		return nil
	}
	return sl.recs[q]
}

// script records a command buffer's script, its zones as labels. A label
// is never ended where the script leaves its zone open (but in a
// secondary, which Vulkan does not let end with a label open, and in a
// rendering instance, which a label must not outlast). With render, the
// script's labels go inside one dynamic rendering instance, after its
// transfers, dispatches and secondaries, which may not run in one. With
// cross, the script's last op begins the label an earlier command buffer
// ends, after the rendering instance.
func (g *bareGen) script(c *bareCB, f, q int, script []op, region int, execute func(), render, cross bool) {
	var tail []op
	if cross && len(script) > 0 {
		script, tail = script[:len(script)-1], script[len(script)-1:]
	}
	nf, nd := 0, 0
	work := func(o op) {
		switch o {
		case opFill:
			off := region*regionBytes + nf*4%regionBytes
			g.op("fill %d %d %d %d", c.id, off, nf, b2i(nf > 0 && nf*4%regionBytes == 0))
			nf++
		case opExecute:
			if execute != nil {
				execute()
			}
		case opDispatch:
			if g.dispatch && g.queues[q].flags&queueCompute != 0 {
				g.op("dispatch %d %d", c.id, 1+nd%5)
				nd++
			}
		}
	}
	labels := func(o op) {
		switch o {
		case opBegin:
			g.label(c, f)
		case opEnd, opEndTwice:
			g.unlabel(c)
		case opLeaveOpen:
			if c.secondary || render {
				g.unlabel(c)
			}
		}
	}
	switch {
	case render && g.deep && !c.secondary && c.q >= 0:
		for _, o := range script {
			work(o)
		}
		g.deepStack(c, f)
	case render:
		for _, o := range script {
			work(o)
		}
		g.renderBegin(c)
		for _, o := range script {
			labels(o)
		}
		g.renderEnd(c)
	default:
		for _, o := range script {
			work(o)
			labels(o)
		}
	}
	for _, o := range tail {
		labels(o)
	}
}

// deepStack records, in place of a rendering instance's labels, a stack
// of labels about the layer's stack of 64 open zones, the rendering
// instance begun inside it and the innermost label ended inside the
// instance (Vulkan lets a primary's label and rendering instance
// interleave), then the others. (The layer took such a label's end, past
// its stack, for the render pass's: seen with a render pass at 63 labels.)
func (g *bareGen) deepStack(c *bareCB, f int) {
	n := 59 + (f+c.id)%8 - len(c.open)
	for range n {
		g.label(c, f)
	}
	c.labels[len(c.labels)-1].kind = labelInterleaved
	g.renderBegin(c)
	g.unlabel(c)
	g.renderEnd(c)
	for range n - 1 {
		g.unlabel(c)
	}
}

// continuingIn records c's script's work, then a rendering instance whose
// contents are a secondary that continues it, with a label, executed
// twice (Vulkan allows it of a secondary begun for simultaneous use): a
// secondary recorded once and executed again and again is counted at
// each execution. (The layer counted such a secondary's zones once.) The
// script's labels are left out, its carried label too: a label may not
// be recorded in such an instance's primary.
func (g *bareGen) continuingIn(c *bareCB, f, q int, script []op, region int, execute func(), take func() *bareCB) {
	g.script(c, f, q, workOnly(script), region, execute, false, false)
	sec := take()
	g.beginContinuing(sec)
	g.label(sec, f)
	g.unlabel(sec)
	g.end(sec)
	g.renderBeginSecondaries(c)
	g.execute(c, []*bareCB{sec, sec})
	g.renderEnd(c)
}

// workOnly is script without its labels.
func workOnly(script []op) []op {
	var out []op
	for _, o := range script {
		switch o {
		case opBegin, opEnd, opEndTwice, opLeaveOpen:
		default:
			out = append(out, o)
		}
	}
	return out
}

// takeSecondary takes the next secondary of goroutine gr's pool for queue
// q in the slot, allocating one where none is left.
func (g *bareGen) takeSecondary(sl *bareSlot, gr, q int, taken *int) *bareCB {
	for len(sl.sec[gr][q]) <= *taken {
		sl.sec[gr][q] = append(sl.sec[gr][q], g.alloc(sl.pools[gr][q], q, true))
	}
	c := sl.sec[gr][q][*taken]
	*taken++
	return c
}

// secondaries records a primary's secondaries from its goroutine's pool
// and executes them in it.
func (g *bareGen) secondaries(f, s int, sl *bareSlot, gr, q int, fc *bareFrameCB, taken *int) {
	var secs []*bareCB
	for si, script := range fc.plan.secondaries {
		c := g.takeSecondary(sl, gr, q, taken)
		g.begin(c, false)
		g.script(c, f, q, script, bareRegion(s, q, fc.index, si+1), nil, false, false)
		g.end(c)
		secs = append(secs, c)
	}
	g.execute(fc.cb, secs)
}

// endAndSubmit ends the frame's command buffers and submits them, queues
// chained by semaphores, as run.endAndSubmit.
func (g *bareGen) endAndSubmit(sl *bareSlot, pl plan, cbs [][]*bareFrameCB) {
	var used []int
	for q := g.l.Queues - 1; q >= 0; q-- {
		if cbs[q] != nil {
			used = append(used, q)
		}
	}
	for _, q := range used {
		for _, fc := range cbs[q] {
			g.end(fc.cb)
		}
	}
	order := make([]int, len(used))
	for k := range used {
		order[k] = k
		if g.timeline {
			g.tnext[used[k]]++
			sl.tvals[used[k]] = g.tnext[used[k]]
		}
	}
	if g.l.WaitBeforeSignal && g.timeline {
		for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	for _, k := range order {
		q := used[k]
		groups := pl.submits[q]
		for gi, gr := range groups {
			wait, waitAt, signal, signalAt, fence := -1, uint64(0), -1, uint64(0), -1
			if gi == 0 && k > 0 {
				wait, waitAt = g.chain(sl, used[k-1])
			}
			if gi == len(groups)-1 {
				signal, signalAt, fence = g.signal(sl, q, k == len(used)-1)
			}
			var bufs []*bareCB
			for _, i := range gr {
				if !cbs[q][i].plan.unsubmitted {
					bufs = append(bufs, cbs[q][i].cb)
				}
			}
			if rc := sl.recording(q); gi == 0 && rc != nil && pl.submitted && len(bufs) < 8 {
				bufs = append(bufs, rc.cb)
			}
			if st := sl.stale; gi == 0 && q == 0 && st != nil && !st.stale && pl.submitted {
				if len(bufs) < 8 {
					bufs = append(bufs, st.cb)
				} else {
					st.stale = true
				}
			}
			sl.subs = append(sl.subs, g.submit(q, bufs, wait, waitAt, signal, signalAt, fence))
		}
		sl.inFlight[q] = true
	}
}

func (g *bareGen) chain(sl *bareSlot, prev int) (int, uint64) {
	if g.timeline {
		return g.timelines[prev], sl.tvals[prev]
	}
	return sl.sems[prev], 0
}

func (g *bareGen) signal(sl *bareSlot, q int, lastQueue bool) (int, uint64, int) {
	if g.timeline {
		return g.timelines[q], sl.tvals[q], -1
	}
	if lastQueue {
		return -1, 0, sl.fences[q]
	}
	return sl.sems[q], 0, sl.fences[q]
}

// rerecord records the slot's recordings that are stale, and every
// RecordEvery frames all of them: an outer label around two.
func (g *bareGen) rerecord(f int, sl *bareSlot) {
	for _, rc := range append(slicesClipRec(sl.recs), sl.secRecs...) {
		if rc == nil || !rc.stale && (g.l.RecordEvery == 0 || f%g.l.RecordEvery != 0) {
			continue
		}
		g.resetPool(rc.pool)
		g.begin(rc.cb, true)
		g.label(rc.cb, f)
		for range 2 {
			g.label(rc.cb, f)
			g.unlabel(rc.cb)
		}
		g.unlabel(rc.cb)
		g.end(rc.cb)
		rc.stale = false
	}
}

func slicesClipRec(r []*bareRec) []*bareRec { return r[:len(r):len(r)] }

// recordStale records the slot's stale command buffer where it must be:
// a label around another.
func (g *bareGen) recordStale(f int, sl *bareSlot) {
	st := sl.stale
	if st == nil || !st.stale {
		return
	}
	g.resetPool(st.pool)
	g.begin(st.cb, true)
	g.label(st.cb, f)
	g.label(st.cb, f)
	g.unlabel(st.cb)
	g.unlabel(st.cb)
	g.end(st.cb)
	st.stale = false
}

// twinFrame records and submits the second device's command buffer:
// 1 to 3 nested labels.
func (g *bareGen) twinFrame(f int) {
	g.twinWait()
	g.op("twinbegin")
	c := g.twin
	g.started(c, false, false)
	for range 1 + f%3 {
		g.label(c, f)
	}
	for range 1 + f%3 {
		g.unlabel(c)
	}
	g.ended(c)
	g.ids.sub++
	g.twinSub = g.ids.sub
	g.op("twinsubmit %d", g.twinSub)
	g.ran(c, g.twinSub, -1)
}

func (g *bareGen) twinWait() {
	if g.twinSub < 0 {
		return
	}
	g.op("twinwait")
	g.done([]int{g.twinSub})
	g.twinSub = -1
}
