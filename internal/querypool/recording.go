package querypool

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Recordings: a command buffer recorded once and submitted many times
// (one per swapchain image, a static one beside per-frame ones) writes
// the same queries at every execution. Its zones therefore take their
// pairs from a slot of its own, not from a frame's: BeginRecording
// records the reset of that slot's queries at the start of the command
// buffer, EndRecording the copy of its results into the slot's host
// memory at the end, so that every execution resets, writes and copies
// its own timestamps. An execution is what Submit is told of, in the
// application's frame of its submission; its results are read from host
// memory, with no driver call, once the application has waited for that
// frame, or at the latest when the recording is submitted again (Vulkan
// lets a command buffer without the simultaneous-use flag be submitted
// again only once its last execution has completed) or recorded again.
// Read, its availability words are cleared, so that the next execution's
// copy is told from this one's.
//
// The books: a recording's pairs are counted (Stats.Pairs) at each
// execution, not when they are handed out; those never ended by
// EndRecording are counted once, as Unended. An execution whose results
// never come is counted Unsubmitted, and one that ran while the one
// before it had not finished (a simultaneous-use command buffer pending
// twice, which Vulkan's query rules forbid to timestamps), with that one,
// as Overlapped: neither's values can be told apart.

// MaxRecordings bounds the recordings a pool keeps at once.
const MaxRecordings = 256

// Errors from BeginRecording.
var (
	ErrRecordingNoCopy = errors.New("querypool: a recording needs vkCmdCopyQueryPoolResults, which this queue may not record (transfer-only), unless its command buffer runs once (BeginRecordingOnce) on a device with host query reset")
	ErrRecordingCount  = fmt.Errorf("querypool: more than %d recordings at once", MaxRecordings)
)

// recording is one command buffer recorded to run many times.
type recording struct {
	cmd  uint64
	s    *Slot
	open bool // between BeginRecording and EndRecording
	// idle: its command buffer was reset since it ended (Reset), so none
	// of its executions is pending and none can come until it is
	// recorded again: past MaxRecordings, another's takes its slot.
	idle bool
	// pairs are the pairs EndRecording found ended, in Begin order: each
	// execution's zones.
	pairs []recPair
	run   *execution // the latest execution, not read yet: &runv or nil
	runv  execution  // its storage: a recording's executions allocate nothing
	// early counts executions named before EndRecording: their pairs
	// are counted when it knows them.
	early uint64
	ran   bool // executed since recorded
	// wrote is the most queries a recording of the slot used, and
	// everRan whether one has been executed: the first reset its every
	// query, so that past wrote they are all reset, and a recording
	// again resets, and clears the host copy of, the first wrote only.
	wrote   uint32
	everRan bool
	used    uint32 // the queries its last recording handed out (sealLocked)
	segs    uint32 // likewise, the most statistics segments (Config.Stats)
	// Carried zones (carried.go): the pairs left open at an
	// EndRecordingCarry, outermost first, and the marks (EndCarried)
	// recorded, in order; runOpens and runCloses are the latest
	// execution's carried zones, one for each (nil: none).
	carries             []recPair
	marks               []uint32
	runOpens, runCloses []*carried
}

// recPair is a pair of a recording: its index in the slot, and its name.
type recPair struct{ j, name uint32 }

// execution is one submission of a recording.
type execution struct {
	frame, key uint64
	queue      uint32 // SubmitOn's
	begun      uint64 // the frame it was submitted in, on the clock of Pool.frames (Advance)
	host       int64  // Config.Now then
	overlapped bool   // submitted while the one before had not finished
}

func cmdKey(cmd vkg.CommandBuffer) uint64 { return uint64(uintptr(unsafe.Pointer(cmd))) }

// BeginRecording makes cmd, in the recording state and outside a render
// pass, a recording: the zones begun in it until EndRecording take pairs
// of its own, and its queries' reset is recorded into it now. A command
// buffer recorded again (BeginRecording again) first has its last
// execution read: Vulkan lets it be recorded again only once that has
// completed. On an error, Begin refuses the zones of cmd until
// EndRecording, counting them as NoFrame.
func (p *Pool) BeginRecording(cmd vkg.CommandBuffer) error {
	return p.beginRecording(cmd, false)
}

// BeginRecordingOnce is BeginRecording for a command buffer that runs
// once each time it is recorded (begun with
// VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT). On a queue that may not
// record vkCmdCopyQueryPoolResults (Config.NoCopy), where the device has
// host query reset, it is then a recording all the same: its queries are
// reset on the host here, once its last execution has been read through
// the driver, and read through the driver when its execution is. Run
// twice without being recorded again, its second execution's timestamps
// would land in queries not reset: the command buffer must run once.
// Elsewhere it is BeginRecording.
func (p *Pool) BeginRecordingOnce(cmd vkg.CommandBuffer) error {
	return p.beginRecording(cmd, true)
}

func (p *Pool) beginRecording(cmd vkg.CommandBuffer, once bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.beginRecordingLocked(cmd, once)
	if err != nil {
		p.setOpen(cmdKey(cmd), nil) // refuse its zones, rather than put them in a frame's slot
		err = p.overLocked(cmdKey(cmd), err)
	} else {
		p.forgetOverLocked(cmdKey(cmd))
	}
	return err
}

func (p *Pool) beginRecordingLocked(cmd vkg.CommandBuffer, once bool) error {
	switch {
	case p.closed.Load():
		return ErrClosed
	}
	k := cmdKey(cmd)
	r := p.recs[k]
	if p.cfg.NoCopy && !(once && p.dev.HostQueryReset) {
		if r != nil {
			// A recording once, begun now to run more than once: no
			// longer a recording, its last execution read.
			p.retireLocked(r)
			p.forgetLocked(r)
		}
		return ErrRecordingNoCopy
	}
	if a, ok := p.again[k]; ok {
		p.forgetAgainLocked(k, a) // submitted again before: a recording now
	}
	switch {
	case r == nil && len(p.recs) >= MaxRecordings:
		if r = p.takeIdleLocked(k); r == nil {
			return ErrRecordingCount
		}
	case r == nil:
		s, err := p.newSlot(-1, p.cfg.Queries)
		if err != nil {
			return err
		}
		s.limit = s.cap // no extra blocks: they would need resets of their own
		// Room for a few of its executions' results, made with it (a
		// moment that creates a query pool anyway): results are added
		// on this thread when it is recorded again, and room grown then
		// took up to a millisecond.
		p.roomLocked(recordingRoom * int(s.cap/2))
		r = &recording{cmd: k, s: s}
		if p.recs == nil {
			p.recs = map[uint64]*recording{}
		}
		p.recs[k] = r
		p.nrecs.Store(int32(len(p.recs)))
	default:
		p.retireLocked(r)
	}
	r.idle = false
	s := r.s
	s.renew(0) // no End to wait for: each landed when the last recording closed
	s.next.Store(0)
	s.unused = 0
	clear(s.cursors)
	s.spares = s.spares[:0]
	s.frozen.Store(0)
	s.refused.Store(0)
	s.elsewhere.Store(false)
	reset := s.cap
	if r.everRan {
		reset = max(r.wrote, 2)
	}
	clear(s.block.buf.Uint64s()[:2*r.wrote])
	if p.cfg.NoCopy { // reset on the host, read through the driver: no copy to read
		// Its last execution has completed (Vulkan records a command
		// buffer again only then) and was read (retireLocked).
		if err := p.dev.ResetQueryPool(s.pool, 0, reset); err != nil {
			return err
		}
	} else {
		p.dev.CmdResetQueryPool(cmd, s.pool, 0, reset)
	}
	if w := s.work; w != nil && !p.cfg.NoCopy { // a transfer-only queue counts no statistics
		clear(w.buf.Uint64s()[:w.used()*(w.n+1)])
		w.next.Store(0)
		segs := w.cap // as the queries: all at first, then those a recording used
		if r.everRan {
			segs = max(r.segs, 1)
		}
		p.dev.CmdResetQueryPool(cmd, w.pool, 0, segs)
	}
	s.state.Store(slotRecording)
	r.open, r.pairs, r.run, r.early, r.ran = true, r.pairs[:0], nil, 0, false
	r.carries, r.marks = r.carries[:0], r.marks[:0]
	p.setOpen(k, s)
	return nil
}

// EndRecording ends the recording of cmd, in the recording state and
// outside a render pass: its zones still open will never end (Unended,
// once), and the copy of its results into host memory is recorded into
// cmd. It does nothing to a command buffer BeginRecording did not make a
// recording, but end the refusal of its zones.
func (p *Pool) EndRecording(cmd vkg.CommandBuffer) { p.endRecording(cmd, false) }

func (p *Pool) endRecording(cmd vkg.CommandBuffer, carry bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := cmdKey(cmd)
	r := p.recs[k]
	if r == nil || !r.open {
		p.dropOpen(k)
		return
	}
	if r.s.work != nil {
		p.endCounts(cmd) // no statistics query may be active at the command buffer's end
	}
	p.closeLocked(r, true, carry)
	if n := r.s.usedNow(); n > 0 && !p.closed.Load() && !p.cfg.NoCopy {
		w := r.s.work
		segs := uint32(0)
		if w != nil {
			segs = w.used()
		}
		p.dev.CmdCopyQueries(cmd, r.s.pool, 0, n, r.s.block.buf.Buffer, true, segs == 0)
		if segs > 0 {
			p.dev.CmdCopyStats(cmd, w.pool, 0, segs, w.n, w.buf.Buffer, false, true)
		}
	}
}

// closeLocked ends r's recording: no more pairs, the open ones void, the
// ended ones its executions' zones. Executions named before the end are
// counted now that their pairs are known: with EndRecording (copied), the
// last of them may run and is read as any; those before it were named
// while the command buffer could not run (Unsubmitted). Without it (the
// pool's end, or Record again), none has a copy to read: each is lost
// with its recording's end never recorded (Unended). With carry, the
// pairs still open are carried (carried.go), but for executions named
// before the end, which cannot be paired: Unended. Marks are no zones.
// The caller holds p.mu.
func (p *Pool) closeLocked(r *recording, copied, carry bool) {
	s := r.s
	used, g := p.sealLocked(r)
	var void uint64
	if !p.allEndedLocked(r, used, g) {
		s.abandon(used)
		for j := range used / 2 {
			switch st := s.block.landedState(j, g); {
			case r.isMark(j):
			case st == pairEnded:
				r.pairs = append(r.pairs, recPair{j: j, name: s.block.meta[j].name})
			case (st == pairVoid || st == pairOpen) && carry:
				r.carries = append(r.carries, recPair{j: j, name: s.block.meta[j].name})
			case st == pairVoid || st == pairOpen:
				void++
			}
		}
	}
	n, nc := uint64(len(r.pairs)), uint64(len(r.carries))
	p.pairs.Add(void + (n+nc)*r.early)
	p.unended.Add(void + nc*r.early)
	switch {
	case r.early == 0:
	case copied:
		p.unsubmitted.Add(n * (r.early - 1))
	default:
		p.unended.Add(n * r.early)
		r.run = nil
	}
	r.early = 0
}

// allEndedLocked takes r's pairs, just sealed, into r.pairs in one pass
// where every pair handed out has ended and r has no mark: the usual
// recording, whose zones all ended. It reports false, and takes none,
// where a pair is open, given up or still ending, or r has marks (open
// for good): the caller then gives up the open ones (Slot.abandon) and
// reads each pair once it has landed. (Three passes over the pairs,
// each a load a pair, took 3.5 us of an H200's vkEndCommandBuffer under
// the layer, of 256 zones.) The caller holds p.mu.
func (p *Pool) allEndedLocked(r *recording, used, g uint32) bool {
	if len(r.marks) > 0 {
		return false
	}
	meta := r.s.block.meta[:used/2]
	ended, unused := pairWord(g, pairEnded), pairWord(g, pairUnused)
	n0 := len(r.pairs)
	r.pairs = slices.Grow(r.pairs, len(meta))
	for j := range meta {
		switch meta[j].state.Load() {
		case ended:
			r.pairs = append(r.pairs, recPair{j: uint32(j), name: meta[j].name})
		case unused: // a cursor's, never handed out
		default:
			r.pairs = r.pairs[:n0]
			return false
		}
	}
	return true
}

// sealLocked ends r's recording: no pair is begun in it from now; the
// open ones are the caller's to give up (Slot.abandon). It returns the
// queries used and the slot's generation. An End may still be recording
// a pair's timestamp: the caller reads each pair's state once it has
// landed (landedState), in the pass that counts them (a pass of its own,
// waitEnding, took a fifth of an H200's vkEndCommandBuffer under the
// layer). The caller holds p.mu.
func (p *Pool) sealLocked(r *recording) (used, g uint32) {
	s := r.s
	r.open = false
	p.dropOpen(r.cmd)
	s.state.Store(slotClosed)
	s.waitBegins()
	s.sealCursors()
	used = s.usedNow()
	g = s.gen.Load()
	r.used = used
	r.wrote = max(r.wrote, used)
	if s.work != nil {
		r.segs = max(r.segs, s.work.used())
	}
	return used, g
}

// abandonLocked ends r's recording, whose command buffer the application
// freed or reset before the recording ended (Freed): none of its zones,
// open or ended, can ever run (Abandoned). (A recording begun again
// without End is the application's misuse, not a reset: its command
// buffer may have run; it is settled as before.) The caller holds p.mu.
func (p *Pool) abandonLocked(r *recording) {
	s := r.s
	used, g := p.sealLocked(r)
	s.abandon(used)
	var n uint64
	for j := range used / 2 {
		switch s.block.landedState(j, g) {
		case pairEnded, pairVoid, pairOpen:
			if !r.isMark(j) { // a mark is no zone
				n++
			}
		}
	}
	n *= max(r.early, 1)
	p.pairs.Add(n)
	p.abandoned.Add(n)
	r.pairs, r.run, r.early, r.ran = r.pairs[:0], nil, 0, true
}

// openSlot is a command buffer's entry in Pool.open: the slot of its
// recording while it is recorded, nil while its zones are refused,
// notOpen otherwise.
type openSlot = atomic.Pointer[Slot]

// notOpen marks an entry of Pool.open whose command buffer is not being
// recorded as a recording.
var notOpen = new(Slot)

// openOf returns the slot of k's recording being recorded now: (nil,
// true) when its zones are refused, false when k is not being recorded
// as a recording. Lock-free, for Begin.
func (p *Pool) openOf(k uint64) (*Slot, bool) {
	m := p.open.Load()
	if m == nil {
		return nil, false
	}
	e, ok := (*m)[k]
	if !ok {
		return nil, false
	}
	s := e.Load()
	return s, s != notOpen
}

// setOpen publishes k's recording as open, with its slot (nil: its zones
// are refused). Begin reads the map without a lock, so it is copied,
// never changed, when a command buffer first becomes a recording; a
// command buffer recorded again every frame changes its entry alone, and
// allocates nothing. The caller holds p.mu.
func (p *Pool) setOpen(k uint64, s *Slot) {
	if old := p.open.Load(); old != nil {
		if e, ok := (*old)[k]; ok {
			e.Store(s)
			return
		}
	}
	e := new(openSlot)
	e.Store(s)
	p.copyOpen(k, e)
}

// dropOpen marks k's recording as no longer being recorded. The caller
// holds p.mu.
func (p *Pool) dropOpen(k uint64) {
	if old := p.open.Load(); old != nil {
		if e, ok := (*old)[k]; ok {
			e.Store(notOpen)
		}
	}
}

// forgetOpen drops k's entry, for a recording forgotten. The caller holds
// p.mu.
func (p *Pool) forgetOpen(k uint64) {
	if old := p.open.Load(); old != nil {
		if _, ok := (*old)[k]; ok {
			p.copyOpen(k, nil)
		}
	}
}

// copyOpen publishes a copy of the open map with k's entry e (nil: none).
// The caller holds p.mu.
func (p *Pool) copyOpen(k uint64, e *openSlot) {
	old := p.open.Load()
	m := map[uint64]*openSlot{}
	if old != nil {
		for x, y := range *old {
			if x != k {
				m[x] = y
			}
		}
	}
	if e != nil {
		m[k] = e
	}
	if len(m) == 0 {
		p.open.Store(nil)
		return
	}
	p.open.Store(&m)
}

// executedLocked notes that cmds, submitted under key in the
// application's frame, carry the recordings among them: each is one
// execution (Submit). Cheap when the pool has no recording. The caller
// holds p.mu.
func (p *Pool) executedLocked(frame, key uint64, queue uint32, cmds []vkg.CommandBuffer) {
	if p.closed.Load() || (p.nrecs.Load() == 0 && p.nover.Load() == 0) {
		return
	}
	for _, c := range cmds {
		k := cmdKey(c)
		r := p.recs[k]
		switch {
		case r == nil:
			p.executedOverLocked(k)
		case p.oneShot(k):
			// Recorded again without BeginRecording: a command buffer of
			// the frame now, whose zones are the frame's.
			p.retireLocked(r)
			p.forgetLocked(r)
		default:
			p.executeLocked(r, frame, key, queue)
		}
	}
}

// oneShot reports whether command buffer k has zones in the frame
// recording now: it was recorded again, without BeginRecording. The
// caller holds p.mu.
func (p *Pool) oneShot(k uint64) bool {
	s := p.cur.Load()
	if s == nil {
		return false
	}
	for i := range s.cursors {
		if s.cursors[i].cmd.Load() == k {
			return true
		}
	}
	return false
}

// forgetLocked drops a retired recording and destroys its slot, once no
// End may still be in it. The caller holds p.mu.
func (p *Pool) forgetLocked(r *recording) {
	p.forgetOpen(r.cmd)
	delete(p.recs, r.cmd)
	p.nrecs.Store(int32(len(p.recs)))
	r.s.quiesce()
	r.s.destroy(p.dev)
}

// executeLocked notes an execution of r. Its last one has completed, if
// the application keeps Vulkan's rules: it is read now. The caller holds
// p.mu.
func (p *Pool) executeLocked(r *recording, frame, key uint64, queue uint32) {
	// The last one may still run (readRunLocked's word): its copy may land
	// after the values are read and cleared, so this one's cannot be told
	// from it. An execution counted so leaves the next counted too, until
	// the application has waited for a frame with no older one in flight.
	overlapped := r.run != nil && !r.open && !p.readRunLocked(r, runAgain)
	var host int64
	if p.cfg.Now != nil {
		host = p.cfg.Now()
	}
	r.runv = execution{frame: frame, key: key, queue: queue, begun: max(p.frames, frame), host: host, overlapped: overlapped}
	r.run = &r.runv
	r.ran, r.everRan = true, true
	if r.open {
		r.early++
	} else {
		p.pairs.Add(uint64(len(r.pairs) + len(r.carries)))
		if len(r.carries)+len(r.marks) > 0 {
			p.carryRunLocked(r, r.run)
		}
	}
	if !slices.Contains(p.running, r) {
		p.running = append(p.running, r)
	}
}

// Why a recording's execution is read.
type readWhy int

const (
	runPoll   readWhy = iota // its frame was waited for: read if all in
	runAgain                 // the recording runs again: the last one has finished, or runs beside
	runRecord                // the recording is recorded again: the last one has finished, or never ran
	runFinal                 // the pool's end, the device idle: what is not in is Pending
)

// pairIn reports whether a pair's four words, as a copy or a driver read
// lays them out (begin, its availability, end, its availability), hold
// both its timestamps.
func pairIn(v []uint64) bool { return v[1] != 0 && v[3] != 0 }

// allIn reports whether vals holds every pair of r's execution.
func allIn(r *recording, vals []uint64) bool {
	for _, pr := range r.pairs {
		if !pairIn(vals[4*pr.j : 4*pr.j+4]) {
			return false
		}
	}
	for _, pr := range r.carries {
		if vals[4*pr.j+1] == 0 {
			return false
		}
	}
	for _, j := range r.marks {
		if vals[4*j+1] == 0 {
			return false
		}
	}
	return true
}

// resultsLocked appends the results of r's execution, whose values are
// vals, to p.ready, and reports true; with check, only where every pair
// is in (allIn), else it appends none and reports false. Each result is
// set field by field where it lies, not built and copied (this runs on
// the application's thread under a layer). The caller holds p.mu.
func (p *Pool) resultsLocked(r *recording, vals []uint64, check bool) bool {
	x := r.run
	n0 := len(p.ready)
	p.ready = slices.Grow(p.ready, len(r.pairs))[:n0+len(r.pairs)]
	for i, pr := range r.pairs {
		v := vals[4*pr.j : 4*pr.j+4 : 4*pr.j+4]
		if check && !pairIn(v) {
			p.ready = p.ready[:n0]
			return false
		}
		z := &p.ready[n0+i]
		z.Frame, z.Host, z.Name, z.Seq, z.Cmd = x.frame, x.host, pr.name, uint32(i), r.cmd
		z.Begin, z.End, z.Key, z.Submitted, z.Work, z.Carried, z.Queue = v[0]&p.mask, v[2]&p.mask, x.key, true, nil, false, x.queue
	}
	return true
}

// readRunDriverLocked reads r's queries through the driver into vals, in
// the layout of the copy (value and availability, a query), and reports
// whether every pair is in. The caller holds p.mu.
func (p *Pool) readRunDriverLocked(r *recording, vals []uint64) bool {
	used := r.used // pairs, carried begins and marks alike
	if used == 0 || p.released {
		return false
	}
	p.dev.QueryResults(r.s.pool, 0, used, uint64(used)*16, unsafe.Pointer(&vals[0]), 16, resultFlags)
	return allIn(r, vals)
}

// readRunLocked reads r's latest execution from host memory into
// p.ready, or counts why it cannot, once it is settled: its results are
// all in, or a later execution (runAgain), its recording again, its
// command buffer freed or the pool's end say that no more will come. It reports false for an execution
// not finished when a later one comes: that one runs beside it. The
// caller holds p.mu.
func (p *Pool) readRunLocked(r *recording, why readWhy) bool {
	x := r.run
	vals := r.s.block.buf.Uint64s()
	var all, made bool
	switch {
	case p.cfg.NoCopy:
		all = p.readRunDriverLocked(r, vals) // no copy: the queries themselves
	case !x.overlapped && r.s.work == nil && len(r.carries)+len(r.marks) == 0:
		// The usual execution: where its command buffer is recorded
		// again, its zones are handed to Collect (deferred.go); else its
		// results are made in the pass that finds them in.
		if why == runRecord && p.handOverLocked(r, vals) {
			p.collected.Add(uint64(len(r.pairs)))
			r.run = nil
			return true
		}
		all = p.resultsLocked(r, vals, true)
		made = all
	default:
		all = allIn(r, vals)
	}
	if !all && !p.cfg.NoCopy && (why == runRecord || why == runFinal) {
		// Finished (Vulkan records a command buffer again only then; the
		// device is idle at the end), and its copy not seen in host
		// memory: the queries themselves say whether it ran. (Under load
		// on lavapipe, 3 executions in 48,000 fence-waited ones lacked
		// the copy's values, and were counted as never submitted.)
		all = p.readRunDriverLocked(r, vals)
	}
	n := uint64(len(r.pairs))
	// Not known to have finished: its values are not all in, or those in
	// may be another execution's, and the application has not waited for
	// its frame.
	running := (!all || x.overlapped) && why == runAgain && p.framesSince(x.begun) < uint64(p.cfg.FramesInFlight)
	switch {
	case !all && why == runPoll:
		// Still to come, however many frames on: a recording's slot is its
		// own, and the execution is settled when the command buffer is
		// recorded again, freed, run again or the pool ends. (Given up
		// after StaleFrames, an execution a loaded machine ran late was
		// counted as never submitted: under the layer, whose frames may
		// be a submission each, 64 frames went by in a few program frames.)
		return true
	case x.overlapped || running:
		// It ran beside the execution before it, or runs beside the one
		// to come: one's values are not told from the other's.
		p.overlapped.Add(n)
		p.carryLostLocked(r, &p.overlapped)
	case all:
		n0 := len(p.ready)
		if !made {
			p.resultsLocked(r, vals, false)
		}
		if r.s.work != nil {
			r.s.fromCopy = !p.cfg.NoCopy
			p.harvestWorkOf(r.s, p.ready[n0:], r.pairs)
		}
		p.collected.Add(n)
		p.carryReadLocked(r, vals)
	case why == runFinal:
		p.pending.Add(n)
		p.carryLostLocked(r, &p.pending)
	default:
		p.unsubmitted.Add(n) // named, and never ran
		p.carryLostLocked(r, &p.unsubmitted)
	}
	r.run = nil
	if why != runRecord { // else BeginRecording clears them, or the slot goes
		clear(vals[:2*r.wrote]) // a copy writes no further
		if w := r.s.work; w != nil {
			clear(w.buf.Uint64s()[:w.used()*(w.n+1)])
		}
	}
	return !running
}

// framesSince is how many frames the pool has begun since frame begun of
// an execution: 0 where it has not reached it (the submission's frame,
// which the application named, may be ahead of the frames Advance has
// told: a layer's frame boundaries reach the pool from a goroutine).
// Before, the difference wrapped, and an execution named again while the
// one before still ran was counted never submitted. The caller holds p.mu.
func (p *Pool) framesSince(begun uint64) uint64 {
	if p.frames < begun {
		return 0
	}
	return p.frames - begun
}

// readRunsLocked reads the executions the application has waited for,
// and gives up those that never ran. The caller holds p.mu.
func (p *Pool) readRunsLocked() {
	f := uint64(p.cfg.FramesInFlight)
	keep := p.running[:0]
	for _, r := range p.running {
		if r.run != nil && !r.open && p.framesSince(r.run.begun) >= f {
			p.readRunLocked(r, runPoll)
		}
		if r.run != nil {
			keep = append(keep, r)
		}
	}
	clear(p.running[len(keep):])
	p.running = keep
}

// retireLocked reads r's last execution, for BeginRecording again or
// the pool's end; what cannot be read is counted: an execution not in
// (final: Pending, else never ran: Unsubmitted), a recording never
// executed (Unsubmitted, its pairs counted once). The caller holds p.mu.
func (p *Pool) retireLocked(r *recording) {
	p.settleLocked(r, runRecord)
	r.pairs = r.pairs[:0]
	if i := slices.Index(p.running, r); i >= 0 {
		p.running = slices.Delete(p.running, i, i+1)
	}
}

// Reset tells the pool that the application reset cmds
// (vkResetCommandPool, or vkResetCommandBuffer) after their recordings
// ended: in the initial state, with no execution pending, each runs again
// only once recorded again. Its recording keeps its slot for that; but
// where MaxRecordings are kept, a command buffer that begins a recording
// takes the slot of one so reset (its last execution read first) rather
// than be refused. A recording still open is not one: Freed abandons it.
func (p *Pool) Reset(cmds ...vkg.CommandBuffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cmds {
		if r := p.recs[cmdKey(c)]; r != nil && !r.open {
			r.idle = true
		}
	}
}

// takeIdleLocked gives command buffer k a recording on the slot of one
// whose command buffer was reset (Reset), which it forgets (its last
// execution read, as when recorded again): nil where none was. The slot
// is reset whole at k's begin and its host copy cleared as far as it was
// written, as a new slot's would be. Past MaxRecordings alone, so the
// look through the recordings is bounded by them. The caller holds p.mu.
func (p *Pool) takeIdleLocked(k uint64) *recording {
	for old, v := range p.recs {
		if !v.idle {
			continue
		}
		p.retireLocked(v)
		p.forgetOpen(old)
		delete(p.recs, old)
		r := &recording{cmd: k, s: v.s, wrote: v.wrote}
		p.recs[k] = r
		p.takenIdle++
		return r
	}
	return nil
}

// runsInFlight returns the pairs of executions not read yet, and the
// oldest frame among them (^0: none). The caller holds p.mu.
func (p *Pool) runsInFlight() (pairs, oldest uint64) {
	oldest = ^uint64(0)
	for _, r := range p.running {
		if r.run != nil && !r.open {
			pairs += uint64(len(r.pairs))
			oldest = min(oldest, r.run.frame)
		}
	}
	return pairs, oldest
}

// finishRecordings reads every recording's last execution at the pool's
// end, after the device went idle: what is not in is Pending. The
// caller holds p.mu.
func (p *Pool) finishRecordings() {
	for _, r := range p.recs {
		p.settleLocked(r, runFinal)
	}
	p.running = p.running[:0]
}

// settleLocked ends r's recording if open, reads its last execution (why
// says what is counted if it is not in), and counts the pairs of a
// recording that never ran once, as never submitted. The caller holds
// p.mu.
func (p *Pool) settleLocked(r *recording, why readWhy) {
	if r.open {
		p.closeLocked(r, false, false)
	}
	if r.run != nil {
		p.readRunLocked(r, why)
	}
	if !r.ran {
		n := uint64(len(r.pairs) + len(r.carries))
		p.pairs.Add(n)
		p.unsubmitted.Add(n)
	}
	r.ran = true
}

// releaseRecordings destroys the recordings' slots. The caller holds
// p.mu, and the pool is stopped.
func (p *Pool) releaseRecordings() {
	for _, r := range p.recs {
		p.forgetLocked(r)
	}
	p.open.Store(nil)
}
