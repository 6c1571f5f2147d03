package loopcheck

import (
	"slices"
	"strconv"
	"strings"
)

// The bare loop's frames: what run does to Vulkan, frame by frame, with
// the same plans, written as a script.

// run writes the whole script: the application, its frames in flight,
// every frame, the checksum of what the GPU wrote, and the end.
func (g *bareGen) run() {
	l := g.l
	g.op("app 1 %d %d 2 %d 1 %d", b2i(l.HostReset), b2i(l.Calibrated), b2i(l.API10), b2i(l.Stats))
	queues := make([]string, len(g.queueAt))
	for i, k := range g.queueAt {
		queues[i] = strconv.Itoa(k)
	}
	g.op("queues %s", strings.Join(queues, " "))
	g.op("sync2 %d", b2i(g.sync2))
	g.shapeStart()
	if l.Twin {
		g.op("twin")
		g.twin = &bareCB{id: -1, q: -1}
	}
	g.makeSlots()
	for f := range l.Frames {
		g.shapeAt(f)
		switch l.Recreate[f] {
		case RecreateContexts, RecreateWrapper:
			// What the application does to Vulkan when it makes its
			// profiler's objects again: waits, and records its
			// recordings again.
			g.waitAll()
			g.forgetRecordings()
		case RecreateDevice:
			g.waitAll()
			g.destroySlots()
			g.op("remake")
			g.epoch++
			g.makeSlots()
		}
		g.frame(f)
	}
	g.shapeAt(l.Frames)
	g.waitAll()
	g.op("idle")
	g.transfers("copyout")
	g.op("checksum")
	g.destroySlots()
	if g.twin != nil {
		g.op("twinend")
	}
}

// bareRegion is the part of the work buffer a command buffer fills, as
// region, but with room for five queues, so that no two queues write
// the same bytes and what the GPU wrote does not depend on their order.
func bareRegion(s, q, cb, sec int) int { return ((s*5+q)*8+cb)*4 + sec }

// transfers zeroes (op "zero") or copies out ("copyout") each queue's
// part of the work buffer, on that queue, and waits for it.
func (g *bareGen) transfers(op string) {
	span := bareRegion(0, 1, 0, 0) - bareRegion(0, 0, 0, 0)
	for q := range g.l.Queues {
		p := g.newPool(q)
		c := g.alloc(p, q, false)
		g.begin(c, false)
		for s := range g.l.Ring {
			g.op("%s %d %d %d", op, c.id, bareRegion(s, q, 0, 0)*regionBytes, span*regionBytes)
		}
		g.end(c)
		g.ids.fence++
		f := g.ids.fence
		g.op("fence %d", f)
		sub := g.submit(q, []*bareCB{c}, -1, 0, -1, 0, f)
		g.op("waitf %d", f)
		g.op("done %d", sub)
		g.op("dfence %d", f)
		g.destroyPool(p)
	}
}

// makeSlots makes every frame in flight's objects, as run.makeSlots, and
// zeroes the work buffer's parts.
func (g *bareGen) makeSlots() {
	l := g.l
	g.slots = make([]bareSlot, l.Ring)
	if g.timeline {
		g.timelines, g.tnext = make([]int, l.Queues), make([]uint64, l.Queues)
		for q := range g.timelines {
			g.timelines[q] = g.newSem(true)
		}
	}
	for s := range g.slots {
		sl := &g.slots[s]
		sl.pools = make([][]int, l.Goroutines)
		sl.prim = make([][][]*bareCB, l.Goroutines)
		sl.sec = make([][][]*bareCB, l.Goroutines)
		for gr := range sl.pools {
			sl.prim[gr] = make([][]*bareCB, l.Queues)
			sl.sec[gr] = make([][]*bareCB, l.Queues)
			for q := range l.Queues {
				sl.pools[gr] = append(sl.pools[gr], g.newPool(q))
			}
		}
		for range l.Queues {
			g.ids.fence++
			g.op("fence %d", g.ids.fence)
			sl.fences = append(sl.fences, g.ids.fence)
			sl.sems = append(sl.sems, g.newSem(false))
			sl.inFlight = append(sl.inFlight, false)
			sl.tvals = append(sl.tvals, 0)
		}
		g.makeRecordings(sl)
	}
	g.transfers("zero")
}

func (g *bareGen) newSem(timeline bool) int {
	g.ids.sem++
	g.op("sem %d %d", g.ids.sem, b2i(timeline))
	return g.ids.sem
}

// makeRecordings gives the slot its recordings, as run.makeRecordings
// (none on queues whose zones count statistics), and its stale command
// buffer (Loop.Resubmit).
func (g *bareGen) makeRecordings(sl *bareSlot) {
	l := g.l
	if l.Recordings {
		sl.recs, sl.secRecs = make([]*bareRec, l.Queues), make([]*bareRec, l.Queues)
		for q := range l.Queues {
			if g.queues[q].flags&(queueGraphics|queueCompute) == 0 || g.dispatch {
				continue
			}
			sl.recs[q] = g.newRec(q, false)
			if l.CachedSecondaries {
				sl.secRecs[q] = g.newRec(q, true)
			}
		}
	}
	if l.Resubmit {
		sl.stale = g.newRec(0, false)
	}
}

func (g *bareGen) newRec(q int, secondary bool) *bareRec {
	p := g.newPool(q)
	return &bareRec{pool: p, cb: g.alloc(p, q, secondary), stale: true}
}

// destroySlots destroys every frame in flight's objects (the frames were
// waited for).
func (g *bareGen) destroySlots() {
	for _, sl := range g.slots {
		for _, ps := range sl.pools {
			for _, p := range ps {
				g.destroyPool(p)
			}
		}
		for q := range sl.fences {
			g.op("dfence %d", sl.fences[q])
			g.op("dsem %d", sl.sems[q])
		}
		for _, rc := range append(slices.Clip(sl.recs), sl.secRecs...) {
			if rc != nil {
				g.destroyPool(rc.pool)
			}
		}
		if sl.stale != nil {
			g.destroyPool(sl.stale.pool)
		}
	}
	for _, t := range g.timelines {
		g.op("dsem %d", t)
	}
	g.slots, g.timelines, g.tnext = nil, nil, nil
}

// forgetRecordings marks every recording to be recorded again.
func (g *bareGen) forgetRecordings() {
	for _, sl := range g.slots {
		for _, rc := range append(slices.Clip(sl.recs), sl.secRecs...) {
			if rc != nil {
				rc.stale = true
			}
		}
		if sl.stale != nil {
			sl.stale.stale = true
		}
	}
}

// wait waits for slot s's submissions and notes when the wait returned.
func (g *bareGen) wait(s int) {
	sl := &g.slots[s]
	for q, on := range sl.inFlight {
		if !on {
			continue
		}
		if g.timeline {
			g.op("waitt %d %d", g.timelines[q], sl.tvals[q])
		} else {
			g.op("waitf %d", sl.fences[q])
		}
		sl.inFlight[q] = false
	}
	g.done(sl.subs)
	sl.subs = sl.subs[:0]
}

// bareArgs is the most numbers a line of bare's script holds (bare.c's
// MAXARG).
const bareArgs = 14

// done says subs completed, on as many lines as bare's line limit needs
// (a slot on 5 queues may have more submissions than a line holds: H200
// seed 125).
func (g *bareGen) done(subs []int) {
	for len(subs) > 0 {
		n := min(len(subs), bareArgs)
		s := make([]string, n)
		for i, sub := range subs[:n] {
			s[i] = strconv.Itoa(sub)
		}
		g.op("done %s", strings.Join(s, " "))
		subs = subs[n:]
	}
}

func (g *bareGen) waitAll() {
	g.twinWait()
	for s := range g.slots {
		g.wait(s)
	}
}

// submit submits cbs on queue q in one batch (semaphores and fence -1:
// none) and returns the submission's number.
func (g *bareGen) submit(q int, cbs []*bareCB, wait int, waitAt uint64, signal int, signalAt uint64, fence int) int {
	g.ids.sub++
	line := []string{"submit", strconv.Itoa(g.ids.sub), strconv.Itoa(q), strconv.Itoa(wait), strconv.FormatUint(waitAt, 10),
		strconv.Itoa(signal), strconv.FormatUint(signalAt, 10), strconv.Itoa(fence), strconv.Itoa(len(cbs))}
	for _, c := range cbs {
		line = append(line, strconv.Itoa(c.id))
		g.ran(c, g.ids.sub, q)
	}
	g.op("%s", strings.Join(line, " "))
	return g.ids.sub
}
