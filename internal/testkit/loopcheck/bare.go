package loopcheck

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Bare is a loop of the checker for its application run bare: as a
// program of its own (bare/bare.c, built from this package's C), with no
// profiler in it, its zones made debug-utils labels, for a profiler that
// sees the program from outside, such as Framescope's Vulkan layer. The
// loop is Gen's for the seed, with what only the library's API can do
// left out (its options, its misuse, GPU.Submit, Collect); what the
// application does to Vulkan stays: frames in flight, queues, recording
// threads, secondaries, command buffers recorded once and submitted every
// frame, cached secondaries, zones across command buffers, labels left
// open, command buffers never submitted, a Vulkan 1.0 instance, the
// device made again, a second device, timeline semaphores, submissions
// through synchronization2, dynamic rendering, compute dispatches, frames
// far over a recording's queries.
//
// Script is what `bare run` runs; Check holds a trace of the run to what
// the script did, with the journal `bare run` wrote.
type Bare struct {
	Loop Loop
	// Shape is what the program does besides the loop (drawn from the
	// seed too): threads, children, a signal, and more.
	Shape  Shape
	Script []byte
	want   bareWant
	// Reached names what the loop did that a profiler outside it must
	// handle, for a run's summary of what its seeds reached.
	Reached []string
}

// BareDevice is what `bare probe` said of the device: its name, what it
// offers, the queues the application makes (two a family at most).
type BareDevice struct {
	Name                                                string
	hostReset, calibrated, stats, timeline, sync2, rend bool
	queues                                              []appQueue
}

// ParseBareProbe reads `bare probe`'s output.
func ParseBareProbe(out []byte) (BareDevice, error) {
	var d BareDevice
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "name "):
			d.Name = strings.TrimPrefix(line, "name ")
		case strings.HasPrefix(line, "features "):
			var f [6]int
			if _, err := fmt.Sscan(strings.TrimPrefix(line, "features "), &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]); err != nil {
				return d, fmt.Errorf("bare probe: %q: %w", line, err)
			}
			d.hostReset, d.calibrated, d.stats, d.timeline, d.sync2, d.rend = f[0] == 1, f[1] == 1, f[2] == 1, f[3] == 1, f[4] == 1, f[5] == 1
		case strings.HasPrefix(line, "queue "):
			var q appQueue
			if _, err := fmt.Sscan(strings.TrimPrefix(line, "queue "), &q.family, &q.index, &q.flags); err != nil {
				return d, fmt.Errorf("bare probe: %q: %w", line, err)
			}
			d.queues = append(d.queues, q)
		}
	}
	if d.Name == "" || len(d.queues) == 0 {
		return d, fmt.Errorf("bare probe said no device or no queue:\n%s", out)
	}
	return d, nil
}

// orderQueues is the order the application profiles its queues in (see
// app.load): one of each family first; without host query reset, no
// transfer-only queue. It returns indices into qs.
func orderQueues(qs []appQueue, hostReset bool) []int {
	var idx []int
	for i, q := range qs {
		if hostReset || q.flags&(queueGraphics|queueCompute) != 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(qs[a].index, qs[b].index) })
	return idx
}

// NewBare draws the loop of seed for d. spans says whether a label may
// end in a later primary than the one it began in (Vulkan allows it;
// lavapipe, Mesa 22.3, crashes on it): without, such a label is left
// open, as a label never ended.
func NewBare(seed uint64, d BareDevice, spans bool) Bare {
	l := Gen(seed, device{queues: len(d.queues), hostReset: d.hostReset, calibrate: d.calibrated, pipelineStats: d.stats,
		timeline: d.timeline, sync2: d.sync2, rendering: d.rend})
	g := newBareGen(l, d, spans)
	// One seed in three that renders records its rendering instances
	// inside a stack of labels about the layer's stack of open zones. (The
	// stream is one whose seeds 1 to 9, make test's, draw each shape.)
	rng := rand.New(rand.NewPCG(seed, 0xdeeb))
	g.deep = g.rendering && rng.IntN(3) == 0
	// One in three executes a continuing secondary twice in its
	// rendering instances instead.
	g.continuing = g.rendering && !g.deep && rng.IntN(2) == 0
	g.want.anyRenderDepth = g.deep
	g.shape = drawShape(seed, l.Frames)
	g.run()
	for _, st := range g.carried {
		g.want.unended += uint64(len(st)) // never ended
	}
	for _, n := range g.names {
		if n != "" {
			g.labels[n] = true
		}
	}
	g.want.labels = len(g.labels)
	return Bare{Loop: g.l, Shape: g.shape, Script: g.named(), want: g.want, Reached: append(g.reached(), g.shape.reached()...)}
}

// named is the script written, each label's name in place.
func (g *bareGen) named() []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(g.w.Bytes(), []byte("\n")) {
		if at := bytes.Index(line, []byte(" \"@")); at >= 0 && bytes.HasPrefix(line, []byte("label ")) {
			id, err := strconv.Atoi(string(bytes.TrimSpace(line[at+3:])))
			if err != nil || id >= len(g.names) {
				panic(fmt.Sprintf("loopcheck: a label line %q", line))
			}
			fmt.Fprintf(&out, "%s \"%s\n", line[:at], g.names[id])
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}

// newBareGen sets up the application the loop asks for.
func newBareGen(l Loop, d BareDevice, spans bool) *bareGen {
	g := &bareGen{l: l, d: d, spans: spans, cbs: map[int]*bareCB{}, begun: map[bareCtx]int{}, twinSub: -1, labels: map[string]bool{}}
	g.want = bareWant{zones: map[string]int{}, subs: map[string][]int{}, across: map[string][][2]int{}, slack: map[string]int{}, exact: true}
	hostReset := d.hostReset && l.HostReset
	for _, i := range orderQueues(d.queues, hostReset) {
		g.queues = append(g.queues, d.queues[i])
		g.queueAt = append(g.queueAt, i)
	}
	g.l.Queues = min(l.Queues, len(g.queues))
	// What the application enables: each only where the device offers it.
	g.api10 = l.API10
	g.timeline = l.Timeline && d.timeline && !l.API10
	g.sync2 = l.Submit2 && d.sync2 && !l.API10
	g.rendering = l.Rendering && d.rend && !l.API10
	g.dispatch = l.Stats && d.stats
	return g
}

// bareGen writes a loop's script, doing to Vulkan what run does, and
// reckons what a profiler outside the program must find: each zone's
// executions by name and the submissions that ran them, and what it
// cannot time (labels left open, command buffers never run, recordings it
// must refuse).
type bareGen struct {
	l                                           Loop
	d                                           BareDevice
	spans                                       bool
	queues                                      []appQueue // the application's queues, in the order it profiles them
	queueAt                                     []int      // their places in the probe's list (the executor's)
	api10, timeline, sync2, rendering, dispatch bool
	// deep: a primary's rendering instance lies in 59 to 66 labels, about
	// the layer's stack of 64 open zones (with the command buffer's own),
	// the innermost ended inside the instance (deepStack).
	deep bool
	// continuing: a primary's rendering instance holds a secondary that
	// continues it, executed twice (continuing).
	continuing bool

	w    bytes.Buffer
	ids  struct{ pool, cmd, fence, sem, sub int }
	cbs  map[int]*bareCB
	pool map[int][]*bareCB // by pool: its command buffers

	slots     []bareSlot
	timelines []int
	tnext     []uint64
	twin      *bareCB         // the second device's command buffer
	twinSub   int             // its submission not waited for yet; -1: none
	epoch     int             // the device's generation: made again, it has new contexts
	begun     map[bareCtx]int // each context's active command buffers (bareCB.active)
	want      bareWant
	crossed   bool // a label was ended in a later primary
	carried   map[carryQueue][]carriedWant
	names     []string // the labels' names, by bareLabel.id: written into the script at its end
	shape     Shape
	labels    map[string]bool // the distinct label names the program begins
}

// bareCtx is a profiler context as a layer makes them: one a device and
// queue family.
type bareCtx struct {
	epoch, family int
	twin          bool
}

// bareCB is one command buffer, and what its latest recording holds.
type bareCB struct {
	id, q     int // q: the queue it is for; -1: the second device's
	secondary bool
	active    bool // recorded since its pool was last reset: a recording the context keeps, not to be taken over
	recorded  bool
	ran       bool // executed since recorded
	refused   bool // its context cannot time a recording (a transfer-only queue)
	// untimed: a secondary that continues a rendering instance, none of
	// whose zones can be timed: counted no_frame once recorded, and again
	// at each execution after the first (runs: its executions since).
	untimed bool
	runs    int
	zones   int // zones begun in the recording, its own included
	names   []string
	open    []*bareLabel // labels open, innermost last (Vulkan's label stack)
	labels  []*bareLabel // every label begun in the recording
	secs    []*bareCB    // the secondaries it executes
	render  bool         // inside a dynamic rendering instance
	// carries are the names of the labels the recording leaves open, a
	// primary's, outermost first; marks, how many labels it ends that it
	// did not begin: each execution ends that many carried on its queue's
	// context, then carries its own (the layer's rule).
	carries []string
	marks   int
}

// carryQueue is a queue of a context (a device's family): the labels
// carried on it pair on it alone.
type carryQueue struct {
	ctx bareCtx
	q   int
}

// carriedWant is a label carried on a queue, and the submission that
// began it.
type carriedWant struct {
	name string
	sub  int
}

// maxCarried is the most labels a context carries at once (the
// library's bound): past it, the oldest is counted unended.
const maxCarried = 64

// bareSlot is one frame in flight, as slot.
type bareSlot struct {
	pools     [][]int // [goroutine][queue]
	prim, sec [][][]*bareCB
	fences    []int
	sems      []int
	inFlight  []bool
	tvals     []uint64
	subs      []int
	recs      []*bareRec // by queue; nil where none
	secRecs   []*bareRec
	stale     *bareRec
}

// bareRec is a command buffer recorded once and submitted many times,
// from a pool of its own: the slot's recording, cached secondary or
// stale command buffer.
type bareRec struct {
	pool  int
	cb    *bareCB
	stale bool // to be recorded (again) before it runs
}

// bareWant is what the checks hold a trace to.
type bareWant struct {
	zones map[string]int   // executions of each zone, by name
	subs  map[string][]int // the submissions that ran a zone of each name
	// across holds, for each carried label's name, the submissions that
	// began and ended each of its zones.
	across map[string][][2]int
	// Counted, not timed: labels open at their command buffer's end;
	// recordings never executed; zones of recordings refused.
	unended, unsubmitted, noFrame uint64
	// anyRenderDepth: rendering instances lie at depths the loop draws
	// (bareGen.deep), and interleave with a label: their depth is not
	// checked.
	anyRenderDepth bool
	// exact: the counts above are exact; else the profiler had to refuse
	// recordings past its bound, or zones past a recording's queries,
	// where which ones depends on the threads' order: each name's count
	// is then at most what the script ran.
	exact bool
	// refused: past the layer's bound on recordings alive at once, it may
	// have refused some (which, the threads' order says): a refused
	// primary's zones are counted no_frame, while a secondary it executed,
	// a recording made before, is timed all the same, and lies in no
	// primary's command buffer zone.
	refused bool
	// slack: by how many a name's count may fall short, for executions
	// of recordings the profiler may refuse (Shape.Burst), whose zones it
	// then counts no_frame.
	slack map[string]int
	// labels: the distinct label names the program begins; past the
	// layer's 4,096, its later names are all otherLabels.
	labels int
}

func (g *bareGen) op(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if n := len(strings.Fields(line)) - 1 - strings.Count(line, "\""); n > bareArgs {
		panic(fmt.Sprintf("loopcheck: a line of bare's script holds at most %d numbers, and %q has %d", bareArgs, line, n))
	}
	g.w.WriteString(line)
	g.w.WriteByte('\n')
}

// Kinds of label names: a primary's, a secondary's, the second device's.
const (
	labelPrimary   = 'd'
	labelSecondary = 'S'
	labelTwin      = 't'
	// labelCarried: left open at its primary's end, for a later one to
	// end; its zone lies on a lane of the queue, at no depth checked.
	labelCarried = 'c'
	// labelInterleaved: ended inside a rendering instance begun after it
	// (bareGen.deepStack); its zone and the instance's do not nest, and
	// one of them lies on a lane: no depth checked.
	labelInterleaved = 'i'
)

// Names of the zones a layer makes of what is no label.
const (
	zoneCommandBuffer = "command buffer"
	zoneSecondary     = "secondary command buffer"
	zoneRendering     = "rendering"
)

// labelName names a label by the frame it was recorded in (mod 100, so
// that a long loop stays within a layer's names) and the depth its zone
// must lie at.
func labelName(frame int, kind byte, depth int) string {
	return fmt.Sprintf("f%d.%c%d", frame%100, kind, depth)
}

// reached lists what the loop did to Vulkan that matters to a profiler
// outside it.
func (g *bareGen) reached() []string {
	l, w := g.l, g.want
	var out []string
	add := func(on bool, s string) {
		if on {
			out = append(out, s)
		}
	}
	add(l.Ring > 1, "frames in flight")
	add(g.deep, "labels about the layer's stack, around a rendering instance")
	add(g.continuing, "secondaries continuing a rendering instance")
	add(l.Goroutines > 1, "recording threads")
	add(g.l.Queues > 1, "queues")
	add(g.transferQueue(), "a transfer-only queue")
	add(l.Recordings, "command buffers recorded once")
	add(l.Recordings && l.CachedSecondaries, "cached secondaries")
	add(l.Resubmit, "command buffers submitted again")
	add(g.crossed, "labels ended in a later primary")
	add(w.unended > 0, "labels left open")
	add(w.unsubmitted > 0, "command buffers never run")
	add(l.BigFrame > 0, "a frame over a recording's queries")
	add(g.epoch > 0, "the device made again")
	add(l.Twin, "a second device")
	add(l.API10, "a Vulkan 1.0 instance")
	add(g.timeline, "timeline semaphores")
	add(g.timeline && l.WaitBeforeSignal, "wait before signal")
	add(g.sync2, "vkQueueSubmit2")
	add(g.rendering, "dynamic rendering")
	add(g.dispatch, "dispatches")
	add(!w.exact, "past the profiler's bounds")
	return out
}

func (g *bareGen) transferQueue() bool {
	for _, q := range g.queues[:g.l.Queues] {
		if q.flags&(queueGraphics|queueCompute) == 0 {
			return true
		}
	}
	return false
}

// CountSPIRV is the count shader's SPIR-V, which `bare` reads from a
// file.
func CountSPIRV() []byte { return slices.Clone(countSPIRV) }
