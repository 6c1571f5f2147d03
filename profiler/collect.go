package profiler

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// ZoneResult is a finished GPU zone.
type ZoneResult struct {
	Name   Name
	Frame  uint64 // the frame whose command buffers recorded it
	Family uint32 // the queue's family and index
	Index  uint32
	// Begin and End are raw device ticks, masked to timestampValidBits.
	Begin, End uint64
	// Start and Stop are host CLOCK_MONOTONIC ns, within ErrNs; set when
	// Converted (a calibration existed when the zone was read back).
	Start, Stop int64
	ErrNs       int64
	Converted   bool
	Key         uint64 // the submission that carried it (GPU.Submit); 0 if unknown
	Depth       uint16 // nesting depth within its command buffer
	// Carried says the zone began in one command buffer and ended in a
	// later one (Recording.EndKeepingOpen): Depth is its depth among
	// those carried.
	Carried bool
	// Work is the work the zone did, with GPUOptions.PipelineStatistics:
	// its counts, or why it has none (Work.Missing); nil without. The
	// timeline's span of the zone shares it: do not change it.
	Work *timeline.Work
}

// Dur returns the zone's duration in host ns (0 when not converted).
func (z ZoneResult) Dur() int64 { return z.Stop - z.Start }

// Collect appends the zones read back since the last collection to dst and
// adds them to the timeline. It never waits for the GPU: zones of frames
// the GPU has not finished come on a later call. It allocates only while
// its buffers grow to the largest frame seen. It returns no error: what it
// cannot deliver is counted ([Stats].Drops), and a lasting fault is kept
// for [GPU.Err].
//
// [Profiler.BeginFrame] collects every context into the timeline, so an
// application needs Collect only for the results themselves (a benchmark's
// zone times): once it calls Collect (or Drain) on a context,
// Profiler.BeginFrame leaves that context to it.
func (g *GPU) Collect(dst []ZoneResult) []ZoneResult {
	g.manual.Store(true)
	dst, _ = g.collect(dst, true, g.p.rec.LastFrame(), g.pool.Collect, true)
	return dst
}

// Err returns the first lasting fault the context met, or nil: zones read
// back before any calibration (wrapping [ErrNoCalibration]: call
// [GPU.Calibrate], or give GPUOptions.FallbackQueue), a
// BeginFrame without the command buffer its queue needs, a readback the
// driver failed, or the device closed under the context
// ([ErrDeviceClosed]). Refusals and losses are counted in [Stats], not
// reported here; closing the context is not a fault.
func (g *GPU) Err() error {
	if e := g.err.Load(); e != nil {
		return *e
	}
	if g.state.Load() == stateDeviceClosed {
		return ErrDeviceClosed
	}
	return nil
}

// keep records err as the context's lasting fault, if it is the first and
// not the context's closing.
func (g *GPU) keep(err error) {
	if err != nil && !errors.Is(err, ErrClosed) && g.err.Load() == nil {
		e := err // escapes here only, not on every call
		g.err.CompareAndSwap(nil, &e)
	}
}

// Drain waits for the readback of everything the GPU has finished and
// collects it: for shutdown, after vkDeviceWaitIdle. It may wait inside the
// driver; keep it off the render path. On a context whose first
// calibration is still to come from FallbackQueue it waits for that too,
// up to a moment: do not call it holding FallbackLock. Without host query reset it leaves
// the frames the application has not waited for (FramesInFlight) to a
// later Collect, Drain or Close: their queries are reset by their first
// command buffer, and read before it ran they hold an older frame's values.
func (g *GPU) Drain(dst []ZoneResult) ([]ZoneResult, error) {
	g.manual.Store(true)
	g.cal.awaitFirst()
	return g.collect(dst, true, g.p.rec.LastFrame(), g.pool.Drain, false)
}

// collect reads pairs with read (the pool's Collect or Drain), converts
// them, and adds them to the timeline, and, if keep, appends them to dst;
// a fault is kept for Err too. begun is the newest frame the application
// has begun, which it has waited for FramesInFlight frames before. A
// collection in the loop (inLoop) converts nothing while the first
// calibration is still to come from the background: it holds what it
// reads (holdLocked), which converts after it.
func (g *GPU) collect(dst []ZoneResult, keep bool, begun uint64, read func([]querypool.Result) ([]querypool.Result, error), inLoop bool) ([]ZoneResult, error) {
	if g.state.Load() != stateOpen {
		return dst, g.refusal()
	}
	g.handMu.Lock()
	g.mu.Lock()
	// The application has waited for frame begun-FramesInFlight, whether
	// or not this context recorded in the frames since.
	g.pool.Advance(begun)
	if inLoop && g.cal.first.Load() {
		err := g.holdLocked()
		g.mu.Unlock()
		g.pool.KeepRoom()
		g.handMu.Unlock()
		g.keep(err)
		return dst, err
	}
	raw, acct, err := g.readRawLocked(read)
	// The zones are converted and handed to the recorder outside mu, under
	// handMu alone, which no call on the application's threads takes: a
	// conversion of thousands of zones, or a recorder waiting for a batch
	// being built, holds up no Submit and no BeginFrame. The room for the
	// results to come is made here too (Pool.KeepRoom).
	g.mu.Unlock()
	g.pool.KeepRoom()
	dst, h, err := g.convertHand(raw, acct, dst, keep, err)
	if derr := g.handOver(h); derr != nil && err == nil {
		err = derr
	}
	g.handMu.Unlock()
	g.keep(err)
	return dst, err
}

// maxHeld bounds the zones read back before the first calibration and
// kept to convert after it: past it they wait in their query slots, and
// once every slot is taken new frames are refused (Drops.NoFrame).
const maxHeld = 1 << 16

// holdLocked reads back what the GPU finished while the first calibration
// is still to come, so that the query slots come free for the frames that
// follow; the zones are converted by the first collection after it. The
// caller holds g.mu.
func (g *GPU) holdLocked() error {
	if len(g.held) >= maxHeld {
		return nil
	}
	held, err := g.pool.Collect(g.held)
	g.held = held
	return g.poolErr(err)
}

// collectLocked is collect for a caller holding handMu and g.mu, open or
// closing.
func (g *GPU) collectLocked(dst []ZoneResult, keep bool, read func([]querypool.Result) ([]querypool.Result, error)) ([]ZoneResult, error) {
	dst, h, err := g.readLocked(dst, keep, read)
	if derr := g.handOver(h); derr != nil && err == nil {
		err = derr
	}
	return dst, err
}

// readLocked reads pairs with read and converts them, and returns what
// to hand the recorder: the spans, with the books taken with them. The
// caller holds handMu and g.mu.
func (g *GPU) readLocked(dst []ZoneResult, keep bool, read func([]querypool.Result) ([]querypool.Result, error)) ([]ZoneResult, handoff, error) {
	raw, acct, err := g.readRawLocked(read)
	return g.convertHand(raw, acct, dst, keep, err)
}

// readRawLocked reads pairs with read, zones held from before the first
// calibration first, with the pool's books and how far the frames have
// settled as the read left them: the pairs read are then neither in the
// pool nor delivered, until convertHand counts them. The caller holds
// handMu and g.mu; the pairs are g.raw's, which convertHand, under
// handMu, uses before the next read.
func (g *GPU) readRawLocked(read func([]querypool.Result) ([]querypool.Result, error)) ([]querypool.Result, querypool.Books, error) {
	// How far the frames have settled is taken with the read, and no
	// further than the frames closed before it: an execution Submit
	// names (under the pool's lock alone) after the read belongs to a
	// frame still open then, which is not counted settled.
	closed := g.p.lastClosed()
	raw, err := read(g.raw[:0])
	g.raw = raw
	if len(g.held) > 0 {
		raw = append(g.held, raw...)
		g.held = nil // once in a context's life: its room goes
	}
	b := g.pool.Took()
	b.Settled = min(b.Settled, closed)
	return raw, b, err
}

// testHookConverting, when set, is called as a conversion begins: tests
// hold it there.
var testHookConverting func()

// convertHand converts pairs read with readRawLocked and returns what to
// hand the recorder: the spans, with the books as they were at the read
// and the conversion's own counts. The caller holds handMu.
func (g *GPU) convertHand(raw []querypool.Result, a querypool.Books, dst []ZoneResult, keep bool, err error) ([]ZoneResult, handoff, error) {
	if testHookConverting != nil {
		testHookConverting()
	}
	if err = g.poolErr(err); err == ErrClosed || err == ErrDeviceClosed {
		return dst, handoff{}, err
	}
	n := g.unconv.Load()
	dst, spans := g.convert(raw, dst, keep)
	h := g.handoffRead(spans, a)
	if u := g.unconv.Load() - n; u > 0 && err == nil && g.clock.Quality().Samples == 0 {
		err = fmt.Errorf("%w: %d zones read back before any calibration have no host time (counted in Drops.Uncalibrated): call GPU.Calibrate, or give GPUOptions.FallbackQueue", ErrNoCalibration, u)
	}
	h.settle, h.settleTo = true, a.Settled
	return dst, h, err
}

// convert turns raw pairs into timeline spans and, if keep, results
// appended to dst. The caller holds handMu. Results and spans are set field
// by field in place, not built and then copied: on x86 a whole-struct copy
// of a value just written waits for its stores to drain.
func (g *GPU) convert(raw []querypool.Result, dst []ZoneResult, keep bool) ([]ZoneResult, []record.GPUSpan) {
	// Room for every zone first: each result and span is then written
	// once, every field set, rather than zeroed by append and set again.
	spans := slices.Grow(g.spans[:0], len(raw))
	if keep {
		dst = slices.Grow(dst, len(raw))
	}
	nest := &g.nest
	var frame uint64
	for i := range raw {
		r := &raw[i]
		if i == 0 || r.Frame != frame {
			frame = r.Frame
			nest.reset()
		}
		var z *ZoneResult
		if keep {
			dst = dst[:len(dst)+1]
			z = &dst[len(dst)-1]
			z.Name, z.Frame, z.Family, z.Index = Name(r.Name), r.Frame, g.queue.Family, g.queue.Index
			if r.Queue != 0 {
				_, z.Index = g.trackOf(r.Queue)
			}
			z.Begin, z.End, z.Key, z.Work, z.Carried = r.Begin, r.End, r.Key, r.Work, r.Carried
		}
		hint := r.Host
		if hint == 0 {
			hint = g.cal.o.Clock.now()
		}
		s, e, errNs, ok := g.snaps.of(r.Key, g.clock).ConvertSpan(r.Begin, r.End, hint)
		if !ok || e < s {
			if keep {
				z.Start, z.Stop, z.Converted, z.ErrNs, z.Depth = 0, 0, false, 0, 0
			}
			g.unconv.Add(1)
			continue
		}
		depth := nest.depth(r.Cmd, s, e)
		if keep {
			z.Start, z.Stop, z.Converted, z.ErrNs, z.Depth = s, e, true, errNs, depth
		}
		spans = spans[:len(spans)+1]
		sp := &spans[len(spans)-1]
		sp.Name, sp.Start, sp.End, sp.Frame = timeline.NameID(r.Name), s, e, r.Frame
		sp.ErrNs, sp.Depth, sp.Key, sp.Work, sp.Across = uint32(min(errNs, math.MaxUint32)), depth, r.Key, r.Work, r.Carried
		sp.Track = 0
		if r.Queue != 0 {
			sp.Track, _ = g.trackOf(r.Queue)
		}
		if r.Key == 0 && r.Submitted && !g.ownClock {
			g.unlinked.Add(1) // on the timeline, without its arrow
		}
	}
	g.spans = spans[:0] // until handoffLocked gives spans to the recorder
	g.delivered.Add(uint64(len(spans)))
	return dst, spans
}

// nesting finds each zone's depth within its command buffer, whose zones
// come in recording order: a stack of the open zones' ends for each
// command buffer of the frame being converted.
type nesting struct {
	stacks []cmdStack // small: one per command buffer of a frame
	last   int        // the stack found last: zones come in runs of one command buffer
}

type cmdStack struct {
	cmd  uint64
	ends []int64
}

// reset empties the stacks for the next frame, keeping their room.
func (n *nesting) reset() {
	for k := range n.stacks {
		n.stacks[k].ends = n.stacks[k].ends[:0]
	}
	n.stacks, n.last = n.stacks[:0], 0
}

// depth returns the depth of the zone [s, e] of command buffer cmd and
// records it on that command buffer's stack of open ends.
func (n *nesting) depth(cmd uint64, s, e int64) uint16 {
	if n.last >= len(n.stacks) || n.stacks[n.last].cmd != cmd {
		n.find(cmd)
	}
	st := &n.stacks[n.last]
	ends := st.ends
	for len(ends) > 0 && ends[len(ends)-1] < s {
		ends = ends[:len(ends)-1]
	}
	d := uint16(min(len(ends), math.MaxUint16))
	st.ends = append(ends, e)
	return d
}

// find makes n.last the stack of cmd, adding it if the frame has none.
func (n *nesting) find(cmd uint64) {
	for k := range n.stacks {
		if n.stacks[k].cmd == cmd {
			n.last = k
			return
		}
	}
	k := len(n.stacks)
	if k < cap(n.stacks) {
		n.stacks = n.stacks[:k+1]
		n.stacks[k].cmd = cmd
		n.stacks[k].ends = n.stacks[k].ends[:0]
	} else {
		n.stacks = append(n.stacks, cmdStack{cmd: cmd})
	}
	n.last = k
}

// handoff is what one delivery hands the recorder, taken under g.mu so
// that the books match the spans: the zones converted since the last,
// the context's books, the clock's calibration when it changed, and how
// far the frames have settled.
type handoff struct {
	spans    []record.GPUSpan
	rep      record.SourceReport
	toSource bool // else the context has no source: nothing is handed
	cal      timeline.Calibration
	calNew   bool // cal changed since the last delivery
	settle   bool
	settleTo uint64
}

// handoffRead takes a delivery of spans, with the books of read a. A
// context on another clock than the timeline's hands the recorder nothing:
// its zones and counts are in Collect and Stats alone. The caller holds
// handMu.
func (g *GPU) handoffRead(spans []record.GPUSpan, a querypool.Books) handoff {
	var h handoff
	if g.ownClock || g.src == nil {
		// No source to make the resets the Collect left: here, or on the
		// pool's goroutine.
		g.pool.ResetDue(false)
	} else {
		b := g.bookOf(a.Stats, a.InFlight, a.Ready)
		h.spans, h.toSource = spans, true
		h.rep = record.SourceReport{Issued: b.Issued, Open: b.Open, Lost: b.Lost, Unlinked: g.unlinked.Load()}
	}
	if q := g.clock.Quality(); q.LastHost != 0 && q.LastHost != g.lastCal {
		g.lastCal = q.LastHost
		h.cal, h.calNew = g.clock.Calibration(g.track), true
	}
	return h
}

// handOver hands the recorder a delivery, in the order deliveries were
// taken (the caller holds handMu, taken before g.mu), and keeps the
// buffer it gives back for the next conversion (g.spans is under handMu:
// convert and handOver run under it). The recorder takes spans over:
// they are written once, by convert.
func (g *GPU) handOver(h handoff) error {
	var err error
	if h.toSource {
		var next []record.GPUSpan
		next, err = g.src.Hand(h.spans, h.rep)
		if cap(h.spans) > 0 {
			g.spans = next
		}
	}
	if h.calNew {
		g.p.rec.AddCalibration(h.cal)
	}
	if h.settle {
		g.src.Settle(h.settleTo)
	}
	return err
}

// deliverLocked hands the recorder the context's books, with no spans.
// The caller holds handMu and g.mu.
func (g *GPU) deliverLocked() error { return g.handOver(g.handoffLocked(nil)) }

// handoffLocked is handoffRead with the pool's books as they are now. The
// caller holds handMu and g.mu.
func (g *GPU) handoffLocked(spans []record.GPUSpan) handoff {
	var a querypool.Books
	a.Stats, a.InFlight, a.Ready = g.pool.Account()
	return g.handoffRead(spans, a)
}

// zoneBook is a context's account of its zones.
type zoneBook struct {
	Issued, Delivered, Open uint64
	Lost                    timeline.Drops // by cause, and the misuse
}

// book counts the context's zones: the pool's counts and its pairs in
// flight, taken at one moment, and the context's own. Open counts the
// pairs in flight and those read back that no Collect has taken yet, from
// the pool's slots, not from the other counts: so the book balances only
// if every zone was counted once where it ended. The caller holds handMu
// and g.mu, so that no zone is between the pool and the context: read
// and not yet converted (collect converts outside g.mu).
func (g *GPU) book() zoneBook {
	st, inFlight, ready := g.pool.Account()
	return g.bookOf(st, inFlight, ready)
}

// bookOf is book with the pool's counts taken before. The caller holds
// handMu, so that the conversion's counts match them.
func (g *GPU) bookOf(st querypool.Stats, inFlight, ready uint64) zoneBook {
	unconv, delivered := g.unconv.Load(), g.delivered.Load()
	return zoneBook{
		Issued:    st.Pairs + st.QueryLimit + st.NoFrame + st.Closed,
		Delivered: delivered,
		Open:      inFlight + ready + uint64(len(g.held)),
		Lost: timeline.Drops{
			QueryLimit: st.QueryLimit, NoFrame: st.NoFrame, Closed: st.Closed, Unended: st.Unended,
			Unsubmitted: st.Unsubmitted, Pending: st.Pending, Overlapped: st.Overlapped, RunAgain: st.ResubmittedPairs, Abandoned: st.Abandoned, Uncalibrated: unconv,
			Misuse: st.LateEnds + st.Misuse,
		},
	}
}
