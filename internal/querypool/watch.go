package querypool

import (
	"slices"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Watches: a command buffer submitted again without being recorded again
// (resubmit.go) writes its queries again at each execution, and one
// recorded again with no zone at all writes none; Submit sees the two
// alike. So the library counts an execution only when it sees its
// timestamp. The first query of the command buffer's zones (its slot is
// pinned: never reset, never reused) is copied into host memory at every
// EndFrame, into an entry of that frame's, and read once the application
// has waited for the frame: a value that changed since the frame before
// says that the command buffer ran again, and the Submits of it named up
// to that frame are counted as executions (their zones as pairs, lost as
// RunAgain). Those of frames before it when the value did not change were
// of a command buffer recorded again without zones, and are not; those of
// the frame itself wait for the next frame's copy, for the command buffer
// may run after the copy. The first value is the one its frame's copy
// holds when the Submit that names it again comes (the first execution
// is over by then), else the one the readback of that frame found
// (Slot.seen). At Finish, the device idle, each watched query is read
// through the driver.
//
// Exact when the command buffer runs before the next frame's copy: one
// submitted after the EndFrame command buffer of its frame and then
// recorded again without zones at once is counted once too many, and
// one whose frames are not waited for in time (Collect not called for
// more than FramesInFlight frames) may be counted too few.

// maxWatches bounds the command buffers a pool watches at once; past it,
// a command buffer's executions are not counted.
const maxWatches = 64

// maxWatchFrames bounds the frames whose Submits a watch holds at once.
const maxWatchFrames = 64

// watch is one watched command buffer, at index i of Pool.watches, whose
// copy of frame f lands at entry i*ring + f%ring of Pool.watchBuf (16
// bytes an entry, ring Pool.watchRing()).
type watch struct {
	k     uint64 // the command buffer; 0: the index is free
	s     *Slot  // its pinned slot
	frame uint64 // the frame that recorded its zones in s
	pool  vkg.QueryPool
	query uint32 // the begin query of its first pair, in pool
	pairs uint64 // its pairs, each execution's zones
	last  uint64 // the timestamp seen last (0: none written)
	known bool   // last is known: the recording frame was read back
	// subs are the Submits not counted yet, by frame, oldest first.
	subs []frameCount
	// copies are the frames whose copies are in flight, by entry (0:
	// none).
	copies []uint64
	// freeAt: a freed index is given out again only once the frame it
	// was freed in has been waited for, when no copy to it is in flight.
	freeAt uint64
	// retiring: the command buffer was recorded again (or freed, or made
	// a recording); one more EndFrame copies its query (copied), and once
	// that copy is read the watch ends and its slot is unpinned.
	retiring, copied bool
}

// frameCount is how many Submits a frame made of a watched command buffer.
type frameCount struct{ frame, n uint64 }

// seenVal is the first timestamp of a command buffer's zones in a
// frame, as that frame's readback found it (0: none was written), and
// the query it is of.
type seenVal struct {
	cmd, begin uint64
	pool       vkg.QueryPool
	query      uint32
}

// noteSeen records cmd's first timestamp in s's frame, read from query
// of pool, the first time its readback finds one. The caller holds p.mu.
func (s *Slot) noteSeen(cmd, begin uint64, pool vkg.QueryPool, query uint32) {
	if len(s.seen) >= cursorSlots || slices.ContainsFunc(s.seen, func(v seenVal) bool { return v.cmd == cmd }) {
		return
	}
	s.seen = append(s.seen, seenVal{cmd: cmd, begin: begin, pool: pool, query: query})
}

// seenOf returns command buffer k's first timestamp in frame, if s's
// readback of that frame found one.
func (s *Slot) seenOf(k, frame uint64) (seenVal, bool) {
	vals := s.seen
	switch frame {
	case s.frame:
	case s.prevFrame:
		vals = s.prevSeen
	default:
		return seenVal{}, false
	}
	if i := slices.IndexFunc(vals, func(v seenVal) bool { return v.cmd == k }); i >= 0 {
		return vals[i], true
	}
	return seenVal{}, false
}

// watchRing is how many frames' copies a watch keeps apart: those in
// flight, and the one being recorded.
func (p *Pool) watchRing() int { return p.cfg.FramesInFlight + 1 }

// watchLocked starts watching command buffer k, whose pairs are in slot s
// (pinned) of frame, and reports whether it could: a free index, k's
// first query in s, and a buffer to copy it to. The caller holds p.mu.
func (p *Pool) watchLocked(k uint64, s *Slot, frame, pairs uint64) (int, bool) {
	if s == nil || s.frame != frame || p.cfg.NoCopy {
		return -1, false
	}
	var last uint64
	b, pool, query, ok := s.firstQuery(k)
	v, known := s.seenOf(k, frame)
	switch {
	case known: // read back before this Submit
		pool, query, last, ok = v.pool, v.query, v.begin, true
	case ok && b.buf != nil:
		// Its frame's copy, if it has landed: the first execution's,
		// for this Submit comes before the next one.
		if vals := b.buf.Uint64s()[2*query:]; vals[1] != 0 {
			last, known = vals[0]&p.mask, true
		}
	}
	if !ok {
		return -1, false
	}
	i := slices.IndexFunc(p.watches, func(w watch) bool { return w.k == 0 && p.frames >= w.freeAt })
	if i < 0 && len(p.watches) < maxWatches {
		p.watches = append(p.watches, watch{})
		i = len(p.watches) - 1
	}
	if i < 0 || !p.watchBuffer() {
		return -1, false
	}
	r := p.watchRing()
	clear(p.watchBuf.Uint64s()[2*i*r : 2*(i+1)*r])
	p.watches[i] = watch{k: k, s: s, frame: frame, pool: pool, query: query, pairs: pairs, last: last, known: known,
		copies: make([]uint64, r)}
	p.nwatch++
	return i, true
}

// watchBuffer makes the host memory the watches' copies land in, once.
func (p *Pool) watchBuffer() bool {
	if p.watchBuf != nil {
		return true
	}
	b, err := p.dev.HostBuffer(16*uint64(maxWatches*p.watchRing()), vkg.BufferUsageTransferDstBit)
	if err != nil {
		return false
	}
	clear(b.Uint64s())
	p.watchBuf = b
	return true
}

// firstQuery finds, in s's frame not read back yet, the begin query of
// command buffer k's first ended pair: the one whose time its readback
// will note first (noteSeen). The caller holds p.mu, and no Begin of s is
// in flight.
func (s *Slot) firstQuery(k uint64) (*block, vkg.QueryPool, uint32, bool) {
	used, g := s.usedNow(), s.gen.Load()
	var in *block
	var q uint32
	s.each(func(b *block) {
		meta := b.meta[:b.used(used)/2]
		for j := range meta {
			if st := b.pairState(uint32(j), g); in == nil && meta[j].cmd == k && (st == pairEnded || st == pairEnding) {
				in, q = b, 2*uint32(j)
			}
		}
	})
	if in == nil {
		return nil, nil, 0, false
	}
	return in, in.pool, q, true
}

// submittedWatched notes one more Submit of watch i, in frame.
func (p *Pool) submittedWatched(i int, frame uint64) {
	w := &p.watches[i]
	if n := len(w.subs); n > 0 && w.subs[n-1].frame == frame {
		w.subs[n-1].n++
		return
	}
	if len(w.subs) >= maxWatchFrames {
		// No copy read for that long (EndFrame(nil), or no Collect): the
		// two oldest frames' Submits are taken as the newer one's, so that
		// what a watch holds stays bounded.
		w.subs[1].n += w.subs[0].n
		w.subs = slices.Delete(w.subs, 0, 1)
	}
	w.subs = append(w.subs, frameCount{frame, 1})
}

// recordWatches records into cmd, at the EndFrame of frame, the copy of
// every watched query into that frame's entry, after all earlier work of
// the queue. The caller holds p.mu.
func (p *Pool) recordWatches(cmd vkg.CommandBuffer, frame uint64) {
	r := p.watchRing()
	left := p.nwatch
	for i := range p.watches {
		w := &p.watches[i]
		if w.k == 0 || left == 0 {
			continue
		}
		left--
		if w.retiring {
			if w.copied {
				continue
			}
			w.copied = true
		}
		e := int(frame % uint64(r))
		if w.copies[e] != 0 {
			p.takeCopyLocked(w, i, e) // not read in time: now, whatever it holds
		}
		w.copies[e] = frame
		p.dev.CmdCopyQueriesAt(cmd, w.pool, w.query, 1, p.watchBuf.Buffer, 16*uint64(i*r+e), left == p.nwatch-1, left == 0)
	}
}

// observeWatchesLocked reads the copies of the frames the application has
// waited for (all: every copy, the device idle), oldest first. The caller
// holds p.mu.
func (p *Pool) observeWatchesLocked(all bool) {
	for i := range p.watches {
		p.observeWatchLocked(&p.watches[i], i, all)
	}
}

// observeWatchLocked is observeWatchesLocked for watch i.
func (p *Pool) observeWatchLocked(w *watch, i int, all bool) {
	f := uint64(p.cfg.FramesInFlight)
	for w.k != 0 {
		e := -1
		for x, fr := range w.copies {
			if fr != 0 && (all || p.frames >= fr+f) && (e < 0 || fr < w.copies[e]) {
				e = x
			}
		}
		if e < 0 {
			break
		}
		p.takeCopyLocked(w, i, e)
	}
	if w.k != 0 && w.retiring && w.copied && !slices.ContainsFunc(w.copies, func(f uint64) bool { return f != 0 }) {
		p.endWatchLocked(w)
	}
}

// takeCopyLocked reads entry e of watch i, the copy of frame w.copies[e],
// and frees it. The caller holds p.mu.
func (p *Pool) takeCopyLocked(w *watch, i, e int) {
	frame := w.copies[e]
	w.copies[e] = 0
	vals := p.watchBuf.Uint64s()[2*(i*p.watchRing()+e):]
	v, avail := vals[0]&p.mask, vals[1] != 0
	vals[0], vals[1] = 0, 0
	if avail {
		p.sawLocked(w, v, frame)
	}
	// Unavailable: the copy never ran, or the slot was reset on the host
	// before the command buffer came back and it has not run since; the
	// next copy, or Finish, tells.
}

// sawLocked takes v, w's query as of frame's copy: a change from the last
// one seen counts the Submits up to frame; else those before frame were
// of a command buffer recorded again without zones. The caller holds
// p.mu.
func (p *Pool) sawLocked(w *watch, v, frame uint64) {
	if !w.known {
		seen, ok := w.s.seenOf(w.k, w.frame)
		switch {
		case !ok:
			return // its frame not read back yet: the next copy
		case seen.pool != w.pool || seen.query != w.query:
			// The readback's first time is of another pair than the
			// one watched: no change of this one can be told.
			p.pendingWatch(w)
			w.pairs = 0
			return
		}
		w.last, w.known = seen.begin, true
	}
	if v == w.last {
		p.unchangedLocked(w, frame)
		return
	}
	if w.last == 0 {
		// Its readback found nothing written: it first ran later, an
		// execution counted then (never submitted), not again now.
		w.last = v
		p.unchangedLocked(w, frame+1)
		return
	}
	var n uint64
	k := 0
	for ; k < len(w.subs) && w.subs[k].frame <= frame; k++ {
		n += w.subs[k].n
	}
	w.subs = slices.Delete(w.subs, 0, k)
	p.executedAgain(w.pairs * n)
	w.last = v
}

// unchangedLocked drops w's Submits of frames before frame: its value did
// not change since, so they did not run. The caller holds p.mu.
func (p *Pool) unchangedLocked(w *watch, frame uint64) {
	k := 0
	for k < len(w.subs) && w.subs[k].frame < frame {
		k++
	}
	w.subs = slices.Delete(w.subs, 0, k)
}

// retireWatchLocked ends watch i, for a command buffer recorded again
// (its executions are over): one more copy, recorded at the next EndFrame,
// shows the last of them. The caller holds p.mu.
func (p *Pool) retireWatchLocked(i int) { p.watches[i].retiring = true }

// endWatchLocked ends w, its last copy read: Submits that no change
// showed did not run. Its slot is unpinned. The caller holds p.mu.
func (p *Pool) endWatchLocked(w *watch) {
	p.unpinOneLocked(w.s)
	*w = watch{freeAt: p.frames + uint64(p.cfg.FramesInFlight) + 1}
	p.nwatch = p.countWatches()
}

// finishWatchesLocked reads the copies in flight and then each watched
// query through the driver, the device idle, and counts what changed:
// Submits after the last change were of a command buffer recorded again
// without zones. (A query may be unavailable: its slot was reset on the
// host before the command buffer came back, and not written since.)
// Where the query cannot be read, whether they ran is not known: they
// are counted Pending. The caller holds p.mu.
func (p *Pool) finishWatchesLocked() {
	p.observeWatchesLocked(true)
	var r [2]uint64
	for i := range p.watches {
		w := &p.watches[i]
		if w.k == 0 {
			continue
		}
		rc := p.dev.QueryResults(w.pool, w.query, 1, 16, unsafe.Pointer(&r[0]), 16, resultFlags)
		if rc == vkg.Success && r[1] != 0 {
			p.sawLocked(w, r[0]&p.mask, ^uint64(0))
		}
		if rc != vkg.Success && rc != vkg.NotReady {
			p.pendingWatch(w)
		}
		w.subs = w.subs[:0]
	}
}

// pendingWatch counts w's Submits that no change shows as Pending. The
// caller holds p.mu.
func (p *Pool) pendingWatch(w *watch) {
	var n uint64
	for _, s := range w.subs {
		n += s.n
	}
	p.pairs.Add(w.pairs * n)
	p.pending.Add(w.pairs * n)
	w.subs = w.subs[:0]
}

// releaseWatches drops the watches and their buffer, counting as Pending
// what no Finish read. The caller holds p.mu, and the pool is stopped.
func (p *Pool) releaseWatches() {
	for i := range p.watches {
		if w := &p.watches[i]; w.k != 0 {
			p.pendingWatch(w)
		}
	}
	p.watches, p.nwatch = nil, 0
	if p.watchBuf != nil {
		p.watchBuf.Destroy()
		p.watchBuf = nil
	}
}

// countWatches counts the watches in use.
func (p *Pool) countWatches() int {
	n := 0
	for i := range p.watches {
		if p.watches[i].k != 0 {
			n++
		}
	}
	return n
}

// firstEnded returns the begin query, counted from run's first pair, of
// the first ended pair of run.
func firstEnded(run []pairMeta, g uint32) (uint32, bool) {
	for j := range run {
		if st := stateIn(run[j].state.Load(), g); st == pairEnded || st == pairEnding {
			return 2 * uint32(j), true
		}
	}
	return 0, false
}
