package loopcheck

import (
	"slices"
	"strconv"

	"github.com/framescope/framescope/internal/querypool"
)

// The application's command buffers in a bare loop, and what a profiler
// outside it makes of each: a recording (timed at every execution), its
// zones named as they nest.

func (g *bareGen) newPool(q int) int {
	g.ids.pool++
	g.op("pool %d %d", g.ids.pool, q)
	return g.ids.pool
}

// destroyPool destroys pool p, which frees its command buffers: their
// recordings never executed are counted then.
func (g *bareGen) destroyPool(p int) {
	g.op("dpool %d", p)
	for _, c := range g.pool[p] {
		g.retire(c)
		if c.active && !c.refused {
			g.begun[g.ctxOf(c)]--
		}
		delete(g.cbs, c.id)
	}
	delete(g.pool, p)
}

// resetPool resets pool p: its command buffers' recordings are no longer
// active, and past the layer's bound another's may take one over
// (GPU.Reset), so they no longer count against it.
func (g *bareGen) resetPool(p int) {
	g.op("rpool %d", p)
	for _, c := range g.pool[p] {
		if c.active && !c.refused {
			g.begun[g.ctxOf(c)]--
		}
		c.active = false
	}
}

func (g *bareGen) alloc(p, q int, secondary bool) *bareCB {
	g.ids.cmd++
	c := &bareCB{id: g.ids.cmd, q: q, secondary: secondary}
	g.op("alloc %d %d %d", c.id, p, b2i(secondary))
	g.cbs[c.id] = c
	if g.pool == nil {
		g.pool = map[int][]*bareCB{}
	}
	g.pool[p] = append(g.pool[p], c)
	return c
}

func (g *bareGen) ctxOf(c *bareCB) bareCtx {
	if c.q < 0 {
		return bareCtx{twin: true, family: int(g.queues[0].family)}
	}
	return bareCtx{epoch: g.epoch, family: int(g.queues[c.q].family)}
}

// retire counts what c's recording loses as it ends (recorded again or
// freed): its zones, once, if it never ran.
func (g *bareGen) retire(c *bareCB) {
	if c.recorded && !c.ran && !c.refused && !c.untimed {
		g.want.unsubmitted += uint64(len(c.names) + len(c.carries))
	}
	c.recorded = false
}

// begin begins recording c (reusable: without the one-time flag).
func (g *bareGen) begin(c *bareCB, reusable bool) {
	g.op("begin %d %d %d", c.id, b2i(c.secondary), b2i(reusable))
	g.started(c, reusable, false)
}

// beginContinuing begins recording secondary c to continue a rendering
// instance, executable twice at once: the profiler can time none of its
// zones (no query may be reset inside the instance), and counts them.
func (g *bareGen) beginContinuing(c *bareCB) {
	g.op("begin %d 1 1 1", c.id)
	g.started(c, true, true)
}

// started notes a recording of c begun: the profiler makes it a
// recording, with a zone of its own, or, for a command buffer that may
// run more than once (reusable) on a transfer-only queue (which cannot
// copy a recording's results, nor reset its queries between two runs),
// refuses it and counts its zones. A one-time-submit command buffer is a
// recording there too, reset on the host: the devices here have host
// query reset, which the layer enables.
func (g *bareGen) started(c *bareCB, reusable, untimed bool) {
	g.retire(c)
	c.recorded, c.ran, c.untimed, c.runs = true, false, untimed, 0
	c.names, c.open, c.labels, c.secs, c.zones, c.render = c.names[:0], nil, nil, c.secs[:0], 1, false
	c.carries, c.marks = c.carries[:0], 0
	c.refused = reusable && c.q >= 0 && g.queues[c.q].flags&(queueGraphics|queueCompute) == 0
	if untimed { // no recording: the one it had, if any, is dropped
		if c.active {
			c.active = false
			g.begun[g.ctxOf(c)]--
		}
		return
	}
	if !c.active && !c.refused {
		c.active = true
		if k := g.ctxOf(c); g.begun[k]+1 > querypool.MaxRecordings {
			g.want.exact, g.want.refused = false, true // which recordings are refused depends on the threads
		} else {
			g.begun[k]++
		}
	}
}

func (g *bareGen) end(c *bareCB) {
	g.op("end %d", c.id)
	g.ended(c)
}

// ended notes c's recording ended: its own zone ends; its labels still
// open are carried, a primary's, or counted (never ended); a refused
// one's zones all are.
func (g *bareGen) ended(c *bareCB) {
	name := zoneCommandBuffer
	if c.secondary {
		name = zoneSecondary
	}
	c.names = append(c.names, name)
	g.nameLabels(c)
	switch {
	case c.refused, c.untimed:
		g.want.noFrame += uint64(c.zones)
	case !c.secondary:
		for _, l := range c.open {
			g.names[l.id] = labelName(l.frame, labelCarried, 0)
			c.carries = append(c.carries, g.names[l.id])
		}
	default:
		g.want.unended += uint64(len(c.open))
	}
	if c.zones > recordingZones {
		g.want.exact = false
	}
}

// recordingZones is about the zones a layer's recording times (2,048
// queries): past them, which zones it refuses is its choice.
const recordingZones = 1000

// label begins a label in c. Its name says the frame it was recorded in
// and the depth its zone must lie at: under its command buffer's zone,
// its rendering instance and the labels around it that end in the
// command buffer (one left open is no zone). Which do is known at the
// recording's end (ended), which names it.
func (g *bareGen) label(c *bareCB, frame int) {
	kind := byte(labelPrimary)
	switch {
	case c.q < 0:
		kind = labelTwin
	case c.secondary:
		kind = labelSecondary
	}
	l := &bareLabel{id: len(g.names), kind: kind, frame: frame, render: c.render, around: slices.Clone(c.open)}
	g.names = append(g.names, "")
	g.op("label %d \"@%d", c.id, l.id)
	c.open = append(c.open, l)
	c.labels = append(c.labels, l)
	c.zones++
}

// bareLabel is a label begun in a recording.
type bareLabel struct {
	id     int // its name's place in bareGen.names
	kind   byte
	frame  int
	render bool
	around []*bareLabel // the labels open around it
	ended  bool         // in the recording
}

// nameLabels names the labels of c's recording, as it ends.
func (g *bareGen) nameLabels(c *bareCB) {
	for _, l := range c.labels {
		depth := 1 + b2i(l.render)
		for _, a := range l.around {
			depth += b2i(a.ended)
		}
		g.names[l.id] = labelName(l.frame, l.kind, depth)
		if l.ended {
			c.names = append(c.names, g.names[l.id])
		}
	}
}

// unlabel ends the innermost label open in c. With none (a label begun in
// an earlier command buffer) it ends the innermost carried on the queue
// when c runs.
func (g *bareGen) unlabel(c *bareCB) {
	g.op("unlabel %d", c.id)
	if n := len(c.open); n > 0 {
		c.open[n-1].ended = true
		c.open = c.open[:n-1]
	} else if !c.secondary {
		c.marks++
	}
}

func (g *bareGen) renderBegin(c *bareCB) {
	g.op("rbegin %d", c.id)
	c.render = true
	c.zones++
}

// renderBeginSecondaries begins a rendering instance whose contents are
// secondaries.
func (g *bareGen) renderBeginSecondaries(c *bareCB) {
	g.op("rbegin %d 1", c.id)
	c.render = true
	c.zones++
}

func (g *bareGen) renderEnd(c *bareCB) {
	g.op("rend %d", c.id)
	c.render = false
	c.names = append(c.names, zoneRendering)
}

// execute records the execution of secs in c.
func (g *bareGen) execute(c *bareCB, secs []*bareCB) {
	if len(secs) == 0 {
		return
	}
	line := []byte("exec " + strconv.Itoa(c.id))
	for _, s := range secs {
		line = append(line, ' ')
		line = append(line, strconv.Itoa(s.id)...)
	}
	g.op("%s", line)
	c.secs = append(c.secs, secs...)
}

// ran notes an execution of c in submission sub on queue q (-1: the
// second device's): each zone of its recording once more, and those of
// the secondaries it executes.
func (g *bareGen) ran(c *bareCB, sub, q int) {
	c.ran = true
	if c.untimed {
		if c.runs > 0 {
			g.want.noFrame += uint64(c.zones)
		}
		c.runs++
	}
	if !c.refused && !c.untimed {
		for _, n := range c.names {
			g.want.zones[n]++
			if s := g.want.subs[n]; len(s) == 0 || s[len(s)-1] != sub {
				g.want.subs[n] = append(s, sub)
			}
		}
		g.carry(c, sub, q)
	}
	for _, s := range c.secs {
		g.ran(s, sub, q)
	}
}

// carry pairs an execution of c, in submission sub on queue q, with the
// labels carried on that queue: its marks end the innermost, then its
// own carried labels go on.
func (g *bareGen) carry(c *bareCB, sub, q int) {
	if c.marks == 0 && len(c.carries) == 0 {
		return
	}
	if g.carried == nil {
		g.carried = map[carryQueue][]carriedWant{}
	}
	k := carryQueue{g.ctxOf(c), q}
	st := g.carried[k]
	for range c.marks {
		if len(st) == 0 {
			continue
		}
		e := st[len(st)-1]
		st = st[:len(st)-1]
		g.want.zones[e.name]++
		g.want.across[e.name] = append(g.want.across[e.name], [2]int{e.sub, sub})
	}
	for _, n := range c.carries {
		if len(st) == maxCarried {
			st = st[1:]
			g.want.unended++
		}
		st = append(st, carriedWant{name: n, sub: sub})
	}
	g.carried[k] = st
}
