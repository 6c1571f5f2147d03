package querypool

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

const resultFlags = vkg.QueryResultFlags(vkg.QueryResult64Bit | vkg.QueryResultWithAvailabilityBit)

// Readback. A frame whose results were copied into host memory (EndFrame
// with a command buffer) is read by Collect itself, from that memory, with
// no driver call, once the application has waited for the frame. A frame
// without a copy is read through vkGetQueryPoolResults on a goroutine of
// the Pool's own, never the caller's: that call is meant not to wait, but
// lavapipe makes it wait for the whole device to go idle.

type readMode int

const (
	readCopies readMode = iota // Collect: host memory only, no driver call
	readDriver                 // the reader goroutine: slots without a copy
	readAll                    // Drain: everything, through the driver
)

// Collect appends to dst the pairs read back since the last call, oldest
// frame first. It never waits for the GPU or the driver. A slot whose
// queries are not all written yet is looked at again later, until it is
// StaleFrames frames old, when it is given up and what it lacked is
// counted. Collect allocates only when dst must grow; call KeepRoom after
// it. The error is the first readback failure since the last call
// (VK_ERROR_DEVICE_LOST, say). Collect makes no host reset of the slots
// it spent: call ResetDue after it.
func (p *Pool) Collect(dst []Result) ([]Result, error) {
	if p.closed.Load() {
		return dst, ErrClosed
	}
	if p.readMu.TryLock() { // the reader may be inside the driver: then next time
		p.readPass(readCopies)
		p.readMu.Unlock()
	}
	p.mu.Lock()
	p.readRunsLocked()
	p.observeWatchesLocked(false)
	p.readyHigh = min(max(p.readyHigh, len(p.ready)+p.deferredN), maxReadyRoom/2)
	dst, t, err := p.takeLocked(dst)
	wake := p.uncopied || p.resetWanted
	p.mu.Unlock()
	dst = p.makeDeferred(dst, t)
	if wake {
		p.wakeReader()
	}
	return dst, err
}

// maxReadyRoom bounds the room KeepRoom keeps: 65,536 results, 4.5 MiB.
const maxReadyRoom = 1 << 16

// KeepRoom gives the results to come room for twice the most a Collect
// took (at most maxReadyRoom), made and written here: call it after
// Collect, holding no lock that the application's threads take. Results
// are added on the application's thread too (BeginRecording reads a
// recording's last execution), and under mu, which Submit waits for: room
// grown there copied and faulted in hundreds of KiB, and made 1 frame in
// 100 under the layer several times slower on an H200. (Drain, at the
// end, takes what it reads without counting it: room for a whole run's
// results would be made for nothing.)
func (p *Pool) KeepRoom() {
	p.mu.Lock()
	want := 2 * p.readyHigh
	short := cap(p.ready) < want
	p.mu.Unlock()
	if !short {
		return
	}
	room := newRoom(want)
	p.mu.Lock()
	if cap(p.ready) < want {
		p.ready = append(room[:0], p.ready...)
	}
	p.mu.Unlock()
}

// recordingRoom is how many executions of a new recording ready has room
// for (roomLocked).
const recordingRoom = 4

// roomLocked gives ready room for n results (at most maxReadyRoom), and
// keeps it (KeepRoom). The caller holds p.mu.
func (p *Pool) roomLocked(n int) {
	n = min(n, maxReadyRoom)
	p.readyHigh = max(p.readyHigh, n/2)
	if cap(p.ready) < n {
		p.ready = append(newRoom(n)[:0], p.ready...)
	}
}

// newRoom returns n results' room, its pages touched here, not where it
// is filled.
func newRoom(n int) []Result {
	room := make([]Result, n)
	clear(room)
	return room
}

// Drain reads every closed slot through the driver on the calling
// goroutine, then collects. It may wait inside the driver: call it off the
// render path, at shutdown after vkDeviceWaitIdle say, to take every result
// still pending. A slot reset in a command buffer (no host query reset) is
// read only once the application has waited for its frame
// (FramesInFlight): before, its queries may still hold an older frame's
// values. Finish, at Close, reads those.
func (p *Pool) Drain(dst []Result) ([]Result, error) {
	if p.closed.Load() {
		return dst, ErrClosed
	}
	p.readMu.Lock()
	p.readPass(readAll)
	p.readMu.Unlock()
	p.mu.Lock()
	p.readRunsLocked()
	p.observeWatchesLocked(false)
	dst, t, err := p.takeLocked(dst)
	p.mu.Unlock()
	return p.makeDeferred(dst, t), err
}

// takeLocked appends the pairs read back to dst and returns the first
// readback error since the last call, and keeps the books as they are
// then (Took), with the executions handed over to make results of
// (makeDeferred, once the caller lets go of p.mu: the books count them
// taken). The caller holds p.mu.
func (p *Pool) takeLocked(dst []Result) ([]Result, deferredTake, error) {
	if len(dst) == 0 {
		// The usual call: the pairs change hands without a copy, and dst's
		// room becomes the next harvest's (the two buffers take turns,
		// and each grows to the largest readback: KeepRoom).
		dst, p.ready = p.ready, dst[:0]
	} else {
		dst = append(dst, p.ready...)
		p.ready = p.ready[:0]
	}
	err := p.readErr
	p.readErr = nil
	t := p.takeDeferredLocked()
	p.tookLocked()
	return dst, t, err
}

// reader is the pool's goroutine: when Collect wakes it, it reads the
// slots without a copy through the driver, and resets the spent ones on
// the host, until the pool is closed; Stop wakes it to see that. A reset
// alone takes no readMu, so that Collect's next pass never waits for it.
func (p *Pool) reader() {
	defer close(p.done)
	for range p.wake {
		if p.closed.Load() {
			return
		}
		p.mu.Lock()
		driver := p.uncopied
		p.mu.Unlock()
		if !driver {
			p.resetDue()
			continue
		}
		p.readMu.Lock()
		p.readPass(readDriver) // resets too
		p.readMu.Unlock()
	}
}

// wakeReader wakes the pool's goroutine, unless a wake is pending.
func (p *Pool) wakeReader() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// readPass reads the closed slots whose frame the application has waited
// for (FramesInFlight old, counted from the frame that recorded their copy
// if they have one), harvests what is complete, and resets spent slots on
// the host. Driver calls run without p.mu, so BeginFrame and Collect never
// wait on them.
func (p *Pool) readPass(mode readMode) {
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		return
	}
	f := uint64(p.cfg.FramesInFlight)
	p.uncopied = false
	p.lastRead = p.frames
	// Eligible closed slots, oldest frame first (the ring is small: insertion sort).
	p.order = p.order[:0]
	for _, s := range p.ring {
		if s.state.Load() != slotClosed {
			continue
		}
		stale := p.frames-s.closed >= p.cfg.StaleFrames
		settled := s.settledAt != 0 // then no pair is open or ending, nor can be again
		if !settled && p.frames-s.closed >= f && s.writers.Load() == 0 {
			// The application has waited for the frame: a zone still open
			// was never ended in it. It alone is given up (Unended), so
			// that it holds no slot from later frames.
			s.abandon(s.usedNow())
		}
		if !settled && s.writers.Load() == 0 && s.settled() {
			settled, s.settledAt = true, p.frames
		}
		if !stale && !settled {
			continue
		}
		copied := s.copyAt != 0 && !s.needCopy
		if !copied {
			p.uncopied = true
		}
		switch mode {
		case readCopies:
			if !copied || (!stale && p.frames-s.copyAt < f) {
				continue
			}
		case readDriver:
			if copied || (!stale && p.frames-s.begun < f) {
				continue
			}
		case readAll:
			// A slot reset on the GPU (no host query reset) is reset by
			// the first command buffer of its frame: until the
			// application has waited for that frame, its queries may
			// still hold the values of the slot's last frame, marked
			// available, which the driver would hand over as this
			// frame's (NVIDIA's does; lavapipe waits for the device).
			// Its own copy, recorded in its frame after the reset, is
			// safe to read: what it holds is this frame's.
			if s.dirtyReset && !stale && p.frames-s.begun < f {
				if !copied || s.copyAt != s.begun {
					continue
				}
				s.early = true
			}
		}
		s.stale = stale
		s.fromCopy = mode == readCopies || s.early
		s.state.Store(slotReading)
		i := len(p.order)
		p.order = append(p.order, s)
		for ; i > 0 && p.order[i-1].closed > s.closed; i-- {
			p.order[i] = p.order[i-1]
		}
		p.order[i] = s
	}
	order := p.order
	p.mu.Unlock()

	for _, s := range order {
		s.used = s.usedNow()
		s.rc = vkg.Success
		if !s.fromCopy {
			s.rc = p.readDriver(s)
		}
	}

	p.mu.Lock()
	for _, s := range order {
		if s.rc != vkg.Success && s.rc != vkg.NotReady {
			if p.readErr == nil {
				p.readErr = fmt.Errorf("querypool: vkGetQueryPoolResults: %w", vkg.Error(s.rc))
			}
			s.state.Store(slotClosed)
			continue
		}
		if s.early && !s.complete() {
			// The copy has not run, or not all of it: nothing is known
			// yet, so nothing changes.
			s.early = false
			s.state.Store(slotClosed)
			continue
		}
		s.early = false
		// Take the slot: Begin refuses it from here on, and a stale one's
		// open pairs are voided so that End refuses them too.
		s.state.Store(slotRecycling)
		if s.writers.Load() != 0 {
			s.state.Store(slotClosed) // a Begin is in flight; next pass
			continue
		}
		if s.stale {
			s.abandon(s.used)
		}
		// One pass reads the pairs and finds whether any lacks a value.
		mark := len(p.ready)
		h := p.harvest(s)
		if h.unsubmitted > 0 && !s.stale && !p.unwritable(s) {
			p.ready = p.ready[:mark]
			s.seen = s.seen[:0] // the next pass notes them again
			// A copy with something in it ran before the last ends were
			// written: copy again. One with nothing in it has not run yet
			// (the application is further behind than FramesInFlight):
			// read it again later, and record no second copy, so that the
			// slot is reused only once the last copy of it has been seen
			// to run.
			switch {
			case s.fromCopy && s.anyAvailable() && s.settledAt != 0 && s.settledAt <= s.copyAt:
				// Every End was recorded before the copy, and it still
				// lacks some: either their command buffer was never
				// submitted, or it is another than the copy's and its
				// bottom-of-pipe timestamps landed after the copy ran
				// (lavapipe). The driver tells which, now that the
				// application has waited for the frame: the pool's
				// goroutine reads it.
				s.copyAt = 0
				p.uncopied = true
			case s.fromCopy && s.anyAvailable():
				s.needCopy = true
			}
			s.state.Store(slotClosed)
			continue
		}
		p.count(h)
		p.harvestWork(s, p.ready[mark:])
		s.each(func(b *block) {
			clear(b.buf.Uint64s()[:2*b.used(s.used)]) // a copy that never runs must not look complete next time
		})
		if w := s.work; w != nil {
			w.written = max(w.written, w.used())
			clear(w.buf.Uint64s()[:w.used()*(w.n+1)])
		}
		s.renew(s.used)
		s.each(func(b *block) { b.written = b.used(s.used) })
		s.next.Store(0)
		s.dirty = true
		s.state.Store(slotSpent)
		if s.pin.Load() {
			p.pinOutLocked(s) // a command buffer of its frame runs again
		}
	}
	p.mu.Unlock()
	if mode != readCopies {
		p.resetDue() // Collect's caller calls ResetDue, where it likes
	}
}

// dueQueries counts the queries of s a host reset resets: those its last
// frame wrote, timestamps and statistics.
func (s *Slot) dueQueries() uint64 {
	var n uint64
	s.each(func(b *block) { n += uint64(b.written) })
	if s.work != nil {
		n += uint64(s.work.written)
	}
	return n
}

// resetsDue counts the queries of the spent slots whose frame the
// application has waited for: what resetDue would reset on the host. The
// caller holds p.mu.
func (p *Pool) resetsDue() uint64 {
	var n uint64
	for _, s := range p.ring {
		if s.state.Load() == slotSpent && p.frames-s.begun >= uint64(p.cfg.FramesInFlight) {
			n += s.dueQueries()
		}
	}
	return n
}

// ResetDue makes the resets Collect leaves: in place when here is true,
// or when they cost less than waking the pool's goroutine (offload.Ns, at
// the cost measured so far: lavapipe's vkResetQueryPool takes about 100
// ns a query, more than the rest of the readback); else on that
// goroutine. A caller that has another goroutine at hand, one it wakes
// anyway, calls it there with here set. It is safe on any goroutine at
// any time: after Stop it does nothing.
func (p *Pool) ResetDue(here bool) {
	if p.closed.Load() {
		return
	}
	if !here && p.dev.HostQueryReset {
		p.mu.Lock()
		wake := p.resetCost.Worth(p.resetsDue())
		p.resetWanted = p.resetWanted || wake
		p.mu.Unlock()
		if wake {
			p.wakeReader()
			return
		}
	}
	p.resetDue()
}

// resetDue resets on the host the spent slots whose frame the application
// has waited for, and frees them; without host query reset it frees them
// at once, for BeginFrame to record their reset in its command buffer.
// Each slot is free as soon as it is reset: a BeginFrame that found no
// other waits for it (see BeginFrame). The state's store publishes dirty
// to the BeginFrame that loads it. It takes p.mu for a moment, never
// across a driver call.
func (p *Pool) resetDue() {
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	if p.closed.Load() {
		return // the slots may be destroyed under resetMu (Close)
	}
	p.mu.Lock()
	p.resetWanted = false
	p.resets = p.resetsLocked(p.resets[:0])
	p.mu.Unlock()
	if len(p.resets) == 0 {
		return
	}
	t0 := time.Now()
	var queries uint64
	for _, s := range p.resets {
		queries += s.dueQueries()
		if p.resetHost(s) == nil {
			s.dirty = false
		}
		s.state.Store(slotFree)
	}
	p.resetCost.Add(uint64(time.Since(t0)), queries)
	clear(p.resets)
}

// ResetCost returns the time resetDue spent in vkResetQueryPool and the
// queries it reset, on the pool's goroutine or in place: the work Collect
// hands to that goroutine when it costs more than a wake.
func (p *Pool) ResetCost() (ns, queries uint64) {
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	return p.resetCost.Totals()
}

// resetsLocked appends to dst the spent slots whose frame the application
// has waited for, marked resetting, for the caller to reset on the host.
// Without host query reset it frees them instead: BeginFrame records
// their reset in its command buffer. The caller holds p.mu.
func (p *Pool) resetsLocked(dst []*Slot) []*Slot {
	f := uint64(p.cfg.FramesInFlight)
	for _, s := range p.ring {
		if s.state.Load() != slotSpent || p.frames-s.begun < f {
			continue
		}
		switch {
		case !p.dev.HostQueryReset:
			s.state.Store(slotFree) // dirty: BeginFrame records the reset
		default:
			s.state.Store(slotResetting)
			dst = append(dst, s)
		}
	}
	return dst
}

// unwritable reports whether what an incomplete readback of s lacks can
// no longer be written: every End was recorded before the copy this pass
// read (which ran last in its frame, FramesInFlight frames ago), or, read
// through the driver, FramesInFlight frames before this pass. The command
// buffers that held the missing timestamps were never submitted. The
// caller holds p.mu.
func (p *Pool) unwritable(s *Slot) bool {
	if s.settledAt == 0 {
		return false
	}
	if s.fromCopy {
		// A copy with nothing available may not have run yet (the
		// application is further behind than FramesInFlight); one
		// recorded in a later frame's command buffer may have run before
		// the ends landed (see Slot.ownCopy): both are copied again.
		return s.settledAt <= s.copyAt && s.ownCopy && s.anyAvailable()
	}
	return p.frames-s.settledAt >= uint64(p.cfg.FramesInFlight)
}

// harvestFinal harvests a slot at the pool's end: what was ended and not
// read back is Pending rather than Unwritten. The caller holds p.mu.
func (p *Pool) harvestFinal(s *Slot) {
	mark := len(p.ready)
	h := p.harvest(s)
	p.harvestWork(s, p.ready[mark:])
	h.pending, h.unsubmitted = h.unsubmitted, 0
	p.count(h)
}

// harvested counts the pairs of one harvest by where they ended.
type harvested struct {
	collected, unsubmitted, unended, pending uint64
}

// count adds a harvest's pairs to the pool's counts. The caller holds
// p.mu, so that the counts change at once for Account.
func (p *Pool) count(h harvested) {
	p.collected.Add(h.collected)
	p.unsubmitted.Add(h.unsubmitted)
	p.unended.Add(h.unended)
	p.pending.Add(h.pending)
}

// harvest appends a taken slot's complete pairs to p.ready and sorts the
// others by cause, for count: every pair handed out ends in one place. A
// caller that keeps the slot instead (a pair lacks a value that may still
// come) truncates p.ready and counts nothing. The caller holds p.mu.
func (p *Pool) harvest(s *Slot) harvested {
	var h harvested
	// Room for every pair first: each Result is then written once, every
	// field set, rather than zeroed by append and set again.
	p.ready = slices.Grow(p.ready, int(s.used/2))
	g := s.gen.Load()
	p.ready = p.harvestBlock(s, &s.block, g, p.ready, &h)
	for k := range s.ext {
		b := s.ext[k].Load()
		if b == nil {
			break
		}
		p.ready = p.harvestBlock(s, b, g, p.ready, &h)
	}
	return h
}

// harvestBlock appends the complete pairs of one of s's blocks to ready
// and counts the rest in h, a run of pairs begun in one command buffer at
// a time: the run's key is looked up once, and the loop over a run makes
// no call, so that what it carries stays in registers.
func (p *Pool) harvestBlock(s *Slot, b *block, g uint32, ready []Result, h *harvested) []Result {
	vals := b.values(s.fromCopy)
	n := b.used(s.used) / 2
	meta, vals := b.meta[:n], vals[:4*n]
	start := len(ready)
	for j := 0; j < len(meta); {
		cmd, from, start := meta[j].cmd, len(ready), j
		j, ready = p.harvestRun(s, meta, vals, j, b.base/2, cmd, s.keyOf(cmd), g, ready, h)
		// Once a run: the first time of the command buffer, what a watch
		// of it starts from (watch.go), or that none was written.
		if len(ready) > from {
			r := &ready[from]
			s.noteSeen(cmd, r.Begin, b.pool, 2*(r.Seq-b.base/2))
		} else if q, ok := firstEnded(meta[start:j], g); ok {
			s.noteSeen(cmd, 0, b.pool, 2*uint32(start)+q)
		}
	}
	h.collected += uint64(len(ready) - start)
	return ready
}

// harvestRun harvests the pairs of meta from j on while they began in
// command buffer cmd, whose key is key, and returns the first pair of
// the next run. It counts in h the pairs it does not append.
func (p *Pool) harvestRun(s *Slot, meta []pairMeta, vals []uint64, j int, seq uint32, cmd, key uint64, g uint32, ready []Result, h *harvested) (int, []Result) {
	ended, ending := pairWord(g, pairEnded), pairWord(g, pairEnding)
	for ; j < len(meta) && meta[j].cmd == cmd; j++ {
		m := &meta[j]
		if w := m.state.Load(); w != ended && w != ending {
			switch stateIn(w, g) {
			case pairUnused: // never handed out
				continue
			case pairEnded, pairEnding:
			default:
				// Given up (void), or, should a slot ever be taken with
				// a pair still open, never ended: either way counted.
				h.unended++
				continue
			}
		}
		r := vals[4*j : 4*j+4 : 4*j+4]
		if !pairIn(r) {
			h.unsubmitted++
			continue
		}
		// Set field by field: a whole-struct copy of a value just built
		// stalls the store buffer on x86.
		ready = ready[:len(ready)+1]
		x := &ready[len(ready)-1]
		x.Frame, x.Host, x.Name, x.Seq, x.Cmd = s.frame, s.host, m.name, seq+uint32(j), cmd
		x.Begin, x.End = r[0]&p.mask, r[2]&p.mask
		x.Key, x.Submitted, x.Carried, x.Queue = key, s.submitted, false, 0
	}
	return j, ready
}

// readDriver reads the first s.used queries of s through
// vkGetQueryPoolResults, block by block, and returns the first error, else
// VK_NOT_READY if a block said so, else VK_SUCCESS.
func (p *Pool) readDriver(s *Slot) vkg.Result {
	rc := vkg.Success
	s.each(func(b *block) {
		n := b.used(s.used)
		if n == 0 {
			return
		}
		r := p.dev.QueryResults(b.pool, 0, n, uint64(n)*16,
			unsafe.Pointer(&b.results[0]), 16, resultFlags)
		if r != vkg.Success && (rc == vkg.Success || rc == vkg.NotReady) {
			rc = r
		}
	})
	if r := p.readWorkDriver(s); r != vkg.Success && (rc == vkg.Success || rc == vkg.NotReady) {
		rc = r
	}
	return rc
}

// anyAvailable reports whether any query of the pass has its value.
func (s *Slot) anyAvailable() bool {
	any := false
	s.each(func(b *block) {
		r := b.values(s.fromCopy)
		for q := uint32(0); q < b.used(s.used) && !any; q++ {
			any = r[2*q+1] != 0
		}
	})
	return any
}

// complete reports whether every ended pair has both values available.
func (s *Slot) complete() bool {
	ok, g := true, s.gen.Load()
	s.each(func(b *block) {
		r := b.values(s.fromCopy)
		for j, n := uint32(0), b.used(s.used)/2; j < n && ok; j++ {
			if st := b.pairState(j, g); st != pairEnded && st != pairEnding {
				continue
			}
			ok = r[4*j+1] != 0 && r[4*j+3] != 0
		}
	})
	return ok
}

// settledLocked returns the newest frame up to which every frame begun
// on the pool has been read back and collected, or counted as lost: no
// result of a frame up to it will come any more (Books.Settled).
// ^uint64(0) when nothing is pending (no frame recording, none waiting for
// results, nothing uncollected): then no frame begun so far has more to
// come. The caller holds p.mu.
func (p *Pool) settledLocked() uint64 {
	if p.closed.Load() && p.finished {
		return ^uint64(0)
	}
	oldest := ^uint64(0) // the oldest frame still to come
	if s := p.cur.Load(); s != nil {
		oldest = s.frame
	}
	for _, s := range p.ring {
		switch s.state.Load() {
		case slotClosed, slotReading, slotRecycling:
			oldest = min(oldest, s.frame)
		}
	}
	for i := range p.ready {
		oldest = min(oldest, p.ready[i].Frame)
	}
	_, runs := p.runsInFlight()
	oldest = min(oldest, runs, p.carriedFrom(), p.deferredOldest())
	if oldest == ^uint64(0) || oldest == 0 {
		return oldest // nothing pending; or frame 0 pending, before every frame
	}
	return oldest - 1
}

// Copied returns the host copy of frame's results that Collect will read
// (value and availability of each query of the frame's first block, in
// query order), or nil when frame has no closed slot with a copy. It is
// for the floor the Collect benchmarks are measured against: reading the
// same memory and converting the same ticks, and nothing else.
func (p *Pool) Copied(frame uint64) []uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.ring {
		if s.frame == frame && s.state.Load() == slotClosed && s.copyAt != 0 {
			return s.block.buf.Uint64s()[:2*s.block.used(s.usedNow())]
		}
	}
	return nil
}
