package loopcheck

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
)

// Shape is what a bare loop's program does besides its loop, drawn from
// the seed along with it: the shapes a program has that a profiler
// outside it must live with. Each seed draws one shape in turn (so that
// any run of ShapeKinds seeds in a row draws every kind) and others now
// and then.
type Shape struct {
	// FrameEvery is the layer's -frame-every; 0: none, so that the
	// program, which never presents, has a frame per 100 ms of
	// submissions.
	FrameEvery int
	// Lock puts a layer that holds a lock while it calls down "above"
	// or "below" Framescope's; "": none.
	Lock string
	// Threads make and destroy instances and devices, each with a
	// labelled submission, while the loop records.
	Threads []ShapeThread
	// Children are processes the program makes at drawn frames, and
	// waits for.
	Children []ShapeChild
	// Signal, where not nil, is a signal at a drawn frame.
	Signal *ShapeSignal
	// Burst command buffers (past the layer's 256 recordings at once)
	// are recorded, all alive, and submitted at frame BurstAt; 0: none.
	Burst, BurstAt int
	// Names distinct label names ("n0", "n1", ...) are labelled at
	// frame NamesAt, past the layer's 4,096 with the loop's; 0: none.
	Names, NamesAt int
	// Work runs the layer with -work: each zone counts its work, or is
	// counted without (Drops.Work, whose number the script does not
	// reckon); the validation layer stays silent all the same.
	Work bool
}

// ShapeThread is a thread that, from frame From to frame To (Frames: the
// loop's end), makes an instance and a device Times times, records and
// submits one labelled command buffer on it, waits, and destroys both.
type ShapeThread struct{ From, To, Times int }

// How a child is made.
const (
	ChildFork     = iota // fork, and _exit in the child
	ChildForkExec        // fork, and exec the program's child mode
	ChildSystem          // system()
	ChildSpawn           // posix_spawn
)

var childHows = []string{"fork", "fork+exec", "system", "posix_spawn"}

// ShapeChild is a child made at frame At: with Vulkan (Subs labelled
// submissions, "c" each; 0: no Vulkan), ending with Status.
type ShapeChild struct{ At, How, Subs, Status int }

// Traces says whether the child writes a trace of its own.
func (c ShapeChild) Traces() bool { return c.Subs > 0 && c.How != ChildFork }

// ShapeSignal is a signal at frame At: sent by the program to itself, or
// from outside (the program says "ready" and waits for it), handled by
// the program (which goes on, and says at its end how many it caught) or
// not (it ends the program).
type ShapeSignal struct {
	Sig              syscall.Signal
	At               int
	Outside, Handled bool
}

// Kills says whether the signal ends the program.
func (s *ShapeSignal) Kills() bool { return s != nil && !s.Handled }

// ShapeKinds is how many kinds of shape the seeds take in turn.
const ShapeKinds = 8

// Label names of the shapes' own command buffers.
const (
	labelThread = "h"
	labelChild  = "c"
	labelBurst  = "burst"
	otherLabels = "(other labels)" // the layer's name past its 4,096
	layerNames  = 4096
	layerRecs   = 256
)

// drawShape draws seed's shape for a loop of frames frames.
func drawShape(seed uint64, frames int) Shape {
	rng := rand.New(rand.NewPCG(seed, 0x5ba9e5))
	lead := int(seed % ShapeKinds)
	on := func(kind int, p float64) bool {
		x := rng.Float64() < p
		return kind == lead || x
	}
	var s Shape
	if !on(0, 0.3) {
		s.FrameEvery = 1 + rng.IntN(8)
	}
	if on(1, 0.2) {
		s.Lock = []string{"above", "below"}[rng.IntN(2)]
	}
	if on(2, 0.25) {
		for range 1 + rng.IntN(2) {
			from := rng.IntN(frames)
			s.Threads = append(s.Threads, ShapeThread{From: from, To: from + 1 + rng.IntN(frames-from), Times: 1 + rng.IntN(3)})
		}
	}
	if on(3, 0.25) {
		for range 1 + rng.IntN(3) {
			c := ShapeChild{At: rng.IntN(frames), How: rng.IntN(len(childHows)), Status: []int{0, 0, 1, 3}[rng.IntN(4)]}
			if c.How != ChildFork && rng.IntN(3) > 0 {
				c.Subs = 1 + rng.IntN(4)
			}
			s.Children = append(s.Children, c)
		}
		slices.SortStableFunc(s.Children, func(a, b ShapeChild) int { return a.At - b.At })
	}
	if on(4, 0.15) {
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL, syscall.SIGQUIT}[rng.IntN(4)]
		s.Signal = &ShapeSignal{Sig: sig, At: rng.IntN(frames)}
		if sig != syscall.SIGKILL {
			s.Signal.Outside, s.Signal.Handled = rng.IntN(2) == 0, rng.IntN(3) == 0
		}
	}
	if on(5, 0.1) {
		s.Burst, s.BurstAt = layerRecs+1+rng.IntN(64), rng.IntN(frames)
	}
	if on(6, 0.1) {
		s.Names, s.NamesAt = layerNames+1+rng.IntN(400), rng.IntN(frames)
	}
	s.Work = on(7, 0.15)
	return s
}

func (s Shape) String() string {
	var parts []string
	if s.FrameEvery > 0 {
		parts = append(parts, fmt.Sprintf("-frame-every %d", s.FrameEvery))
	} else {
		parts = append(parts, "frames by time")
	}
	if s.Lock != "" {
		parts = append(parts, "lock layer "+s.Lock)
	}
	for _, t := range s.Threads {
		parts = append(parts, fmt.Sprintf("thread making %d devices in frames %d-%d", t.Times, t.From, t.To))
	}
	for _, c := range s.Children {
		parts = append(parts, fmt.Sprintf("%s child at frame %d (%d submissions, status %d)", childHows[c.How], c.At, c.Subs, c.Status))
	}
	if g := s.Signal; g != nil {
		from := "from itself"
		if g.Outside {
			from = "from outside"
		}
		parts = append(parts, fmt.Sprintf("%v at frame %d %s, handled %t", g.Sig, g.At, from, g.Handled))
	}
	if s.Burst > 0 {
		parts = append(parts, fmt.Sprintf("%d command buffers at once at frame %d", s.Burst, s.BurstAt))
	}
	if s.Names > 0 {
		parts = append(parts, fmt.Sprintf("%d label names at frame %d", s.Names, s.NamesAt))
	}
	if s.Work {
		parts = append(parts, "-work")
	}
	return strings.Join(parts, "; ")
}

// reached names the shapes drawn, for a run's summary.
func (s Shape) reached() []string {
	var out []string
	if s.FrameEvery == 0 {
		out = append(out, "shape: frames by time")
	}
	if s.Lock != "" {
		out = append(out, "shape: lock layer "+s.Lock)
	}
	if len(s.Threads) > 0 {
		out = append(out, "shape: threads making devices")
	}
	for _, c := range s.Children {
		k := "shape: child by " + childHows[c.How]
		if c.Subs > 0 {
			k += " with Vulkan"
		}
		out = append(out, k)
	}
	if g := s.Signal; g != nil {
		k := "shape: signal " + sigName(g.Sig)
		switch {
		case g.Outside:
			k += " from outside"
		default:
			k += " from itself"
		}
		if g.Handled {
			k += ", handled"
		}
		out = append(out, k)
	}
	if s.Burst > 0 {
		out = append(out, "shape: recordings past 256")
	}
	if s.Names > 0 {
		out = append(out, "shape: names past 4,096")
	}
	if s.Work {
		out = append(out, "shape: -work")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ShapeReach lists the beginnings of the reach keys of each kind of
// shape, which a set of ShapeKinds seeds in a row reaches (every seed
// takes one in turn).
func ShapeReach() []string {
	return []string{"shape: frames by time", "shape: lock layer", "shape: threads making devices", "shape: child",
		"shape: signal", "shape: recordings past 256", "shape: names past 4,096", "shape: -work"}
}

func sigName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL", syscall.SIGQUIT: "SIGQUIT"}[s]
}

// ---- The script ----

// shapeStart writes what the shape does before the loop: the signal's
// handler.
func (g *bareGen) shapeStart() {
	if s := g.shape.Signal; s != nil && s.Handled {
		g.op("handle %d", int(s.Sig))
	}
}

// shapeAt writes what the shape does before frame f (f = Frames: after
// the last): threads joined and started, children, the burst, the names,
// the signal.
func (g *bareGen) shapeAt(f int) {
	s := g.shape
	for i, t := range s.Threads {
		if t.To == f {
			g.op("djoin %d", i)
		}
	}
	if f == g.l.Frames {
		return
	}
	for i, t := range s.Threads {
		if t.From == f {
			g.thread(i, t.Times)
		}
	}
	for _, c := range s.Children {
		if c.At == f {
			g.op("child %d %d %d", c.How, c.Subs, c.Status)
		}
	}
	if s.Burst > 0 && s.BurstAt == f {
		g.burst(s.Burst)
	}
	if s.Names > 0 && s.NamesAt == f {
		g.labelNames(s.Names)
	}
	if sg := s.Signal; sg != nil && sg.At == f {
		g.op("signal %d %d", int(sg.Sig), b2i(sg.Outside))
	}
}

// thread starts thread i, which makes and destroys a device times times,
// each with one submission of a command buffer labelled labelThread.
func (g *bareGen) thread(i, times int) {
	g.op("dthread %d %d %d", i, times, g.ids.sub+1)
	for range times {
		g.ids.sub++
		for _, n := range []string{zoneCommandBuffer, labelThread} {
			g.want.zones[n]++
			g.want.subs[n] = append(g.want.subs[n], g.ids.sub)
		}
		g.labels[labelThread] = true
	}
}

// burst records n command buffers on queue 0, all alive at once, more
// than the layer keeps recordings of: those past its bound are refused,
// their zones counted no_frame at each execution. Which are refused
// depends on the recordings the loop holds, so a name's count may be less
// by the burst's executions of it (want.slack), and what is missing is
// counted no_frame.
func (g *bareGen) burst(n int) {
	exact, begun := g.want.exact, maps.Clone(g.begun)
	p := g.newPool(0)
	cbs := make([]*bareCB, n)
	for i := range cbs {
		c := g.alloc(p, 0, false)
		g.begin(c, false)
		g.op("label %d \"%s", c.id, labelBurst)
		g.op("unlabel %d", c.id)
		c.zones++
		g.end(c)
		c.names = append(c.names, labelBurst)
		cbs[i] = c
	}
	g.labels[labelBurst] = true
	for i := 0; i < n; i += 6 { // six a submission: the script's most
		g.submitWait(cbs[i:min(n, i+6)])
	}
	for _, c := range cbs {
		if !c.refused {
			for _, name := range c.names {
				g.want.slack[name]++
			}
		}
	}
	g.destroyPool(p)
	g.want.exact, g.begun = exact, begun
}

// labelNames labels n distinct names ("n0", ...) in command buffers of
// up to 900 labels each on queue 0, and submits and waits for them.
func (g *bareGen) labelNames(n int) {
	p := g.newPool(0)
	var cbs []*bareCB
	for at := 0; at < n; at += 900 {
		c := g.alloc(p, 0, false)
		g.begin(c, false)
		var names []string
		for k := at; k < min(n, at+900); k++ {
			name := fmt.Sprintf("n%d", k)
			g.op("label %d \"%s", c.id, name)
			g.op("unlabel %d", c.id)
			c.zones++
			g.labels[name] = true
			names = append(names, name)
		}
		g.end(c)
		c.names = append(c.names, names...)
		cbs = append(cbs, c)
	}
	g.submitWait(cbs)
	g.destroyPool(p)
}

// submitWait submits cbs on queue 0 with a fence of its own, and waits.
func (g *bareGen) submitWait(cbs []*bareCB) {
	g.ids.fence++
	fence := g.ids.fence
	g.op("fence %d", fence)
	sub := g.submit(0, cbs, -1, 0, -1, 0, fence)
	g.op("waitf %d", fence)
	g.op("done %d", sub)
	g.op("dfence %d", fence)
}
