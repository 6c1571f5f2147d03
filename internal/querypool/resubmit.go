package querypool

import (
	"runtime"
	"slices"

	vkg "github.com/vulkan-go/vulkan"
)

// Command buffers submitted again without being recorded again, and not
// made recordings (BeginRecording): the pattern the library refuses, whose
// timestamps are written again into the queries of the frame that recorded
// them, without a reset. Nothing the pool does makes those writes valid,
// but it keeps them from doing harm: once a Submit names a command buffer
// whose zones are in an earlier frame's slot, and none in the frame's own,
// that slot is pinned: never reset on the host again (a reset while the
// command buffer runs races the GPU's writes, which crashed lavapipe's
// queue thread) and never given to a later frame (whose zones the old
// command buffer would overwrite). A command buffer recorded again
// without zones looks the same from here, and pins a slot for nothing
// until it is recorded again with zones (its old executions are then
// over, and the slot goes back to the ring): at most MaxPinned a pool
// are kept, so the cost is bounded.

// MaxPinned bounds the slots a pool keeps out of use for command buffers
// submitted again.
const MaxPinned = 64

// maxAgain bounds the command buffers a pool remembers as submitted
// again: those of MaxPinned frames of many command buffers each.
const maxAgain = 1024

// againCmd is a command buffer submitted again: the slot pinned for it
// (nil: none), how many pairs each of its executions writes again, and
// its watch (watch.go; -1: none, its executions counted at Submit).
type againCmd struct {
	s     *Slot
	pairs uint64
	watch int
}

// pinResubmittedLocked pins the slots whose zones cmds, submitted in
// frame, carry from an earlier frame, and unpins those of command buffers
// recorded again with zones. Each execution of a command buffer
// submitted again counts its zones as pairs handed out and lost
// (Resubmitted): they run, and are not timed. The caller holds p.mu.
func (p *Pool) pinResubmittedLocked(frame uint64, cmds []vkg.CommandBuffer) {
	for _, c := range cmds {
		k := cmdKey(c)
		if k == 0 || p.recs[k] != nil || p.over[k] != nil {
			continue
		}
		a, again := p.again[k]
		refused := p.takeRefused(k)
		switch {
		case refused || p.inFrame(frame, k):
			if again {
				p.forgetAgainLocked(k, a)
			}
		case again:
			p.resubmitted.Add(1)
			p.executionLocked(a, frame)
		default:
			p.againLocked(frame, k)
		}
	}
}

// refusedMarks is the size of Pool.refusedIn: a command buffer whose
// mark another took before its Submit (a collision of two of many
// refused at once) is taken for one submitted again.
const refusedMarks = 64

// markRefused marks cmd, one of whose zones was refused: it is being
// recorded again, though none of its pairs may be in the frame's slot.
// Lock-free and bounded, for it runs on Begin's path.
func (p *Pool) markRefused(cmd vkg.CommandBuffer) {
	k := cmdKey(cmd)
	if e := &p.refusedIn[markIndex(k)]; e.Load() != k {
		e.Store(k)
	}
}

// takeRefused reports whether command buffer k was marked since its last
// Submit, and clears the mark.
func (p *Pool) takeRefused(k uint64) bool {
	e := &p.refusedIn[markIndex(k)]
	return e.Load() == k && e.CompareAndSwap(k, 0)
}

func markIndex(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> 58 } // 64 marks

// executionLocked notes one more Submit of a command buffer submitted
// again: watched, it is counted once its timestamp is seen to change.
// One that cannot be watched (past maxWatches, or on a pool that copies
// nothing) is not counted: Submit alone cannot tell that it ran. The
// caller holds p.mu.
func (p *Pool) executionLocked(a againCmd, frame uint64) {
	if a.watch >= 0 {
		p.submittedWatched(a.watch, frame)
	}
}

// executedAgain counts one execution of n pairs submitted again.
func (p *Pool) executedAgain(n uint64) {
	p.pairs.Add(n)
	p.resubmittedPairs.Add(n)
}

// againLocked notes command buffer k, submitted in frame with no zones
// of its own, and pins the earlier slot that holds its zones, if any.
// The caller holds p.mu.
func (p *Pool) againLocked(frame, k uint64) {
	// The newest frame that recorded k: it may have been recorded with
	// zones in several (a handle reused), and only the last recording
	// runs.
	// Its executions are counted only where its zones are still in the
	// slot of their frame, which can be watched (watch.go): in a slot
	// given to a later frame since, its queries are that frame's, and a
	// command buffer recorded again without zones would be counted for
	// nothing.
	var s *Slot
	var at, n uint64
	for _, c := range p.ring {
		if c.frame != frame && c.frame >= at && c.hasCursor(k) {
			s, at, n = c, c.frame, c.pairsOf(k)
		}
		if c.prevFrame != frame && c.prevFrame >= at && c.hadCursor(k) {
			s, at, n = c, c.prevFrame, 0
		}
	}
	if s == nil {
		return
	}
	p.resubmitted.Add(1)
	if s.state.Load() == slotClosed {
		// Not read yet: this execution will write its queries again.
		// The one before has finished (Vulkan submits a command buffer
		// not made for simultaneous use again only then), so the slot is
		// read now, before the new one is submitted (SubmitOn), where the
		// application has waited for its frame. (Read later, its values
		// were the new execution's, or, on lavapipe while that ran, none:
		// its zones were counted never submitted.)
		p.readFirst = true
	}
	a := againCmd{pairs: n, watch: -1}
	if len(p.again) >= maxAgain {
		return // neither pinned nor watched: not counted
	}
	if p.again == nil {
		p.again = map[uint64]againCmd{}
	}
	if p.pinLocked(s) {
		a.s = s
		a.watch, _ = p.watchLocked(k, s, at, n)
	}
	if n == 0 {
		a.watch = -1 // nothing to count
	}
	p.executionLocked(a, frame)
	p.again[k] = a
}

// forgetAgainLocked forgets command buffer k, recorded again: its earlier
// executions are over (Vulkan resets a command buffer only once they
// are), so its slot (nil: none pinned) needs no pin for it, nor it a
// watch. The caller
// holds p.mu.
func (p *Pool) forgetAgainLocked(k uint64, a againCmd) {
	delete(p.again, k)
	if a.watch >= 0 {
		p.retireWatchLocked(a.watch) // unpins its slot once done
		return
	}
	p.unpinOneLocked(a.s)
}

// unpinOneLocked ends one pin of s (nil: none). The caller holds p.mu.
func (p *Pool) unpinOneLocked(s *Slot) {
	if s == nil {
		return
	}
	if s.pins--; s.pins == 0 {
		p.unpinLocked(s)
	}
}

// inFrame reports whether command buffer k has zones in frame's slot. The
// caller holds p.mu.
func (p *Pool) inFrame(frame, k uint64) bool {
	for _, s := range p.ring {
		if s.frame == frame && s.hasCursor(k) {
			return true
		}
	}
	return false
}

// keepPrev keeps the command buffers of s's frame as its previous
// frame's, as s is given to the next frame: one that comes back later
// (submitted again after its frame's slot was reused: more swapchain
// images than frames in flight) is still found. The caller holds p.mu.
func (s *Slot) keepPrev() {
	s.seen, s.prevSeen = s.prevSeen[:0], s.seen
	for i := range s.cursors {
		s.prev[i] = s.cursors[i].cmd.Load()
	}
	s.prevFrame = s.frame
}

// pairsOf counts the pairs of s's frame begun in command buffer k. The
// caller holds p.mu, and no Begin of s's frame is in flight.
func (s *Slot) pairsOf(k uint64) uint64 {
	used := s.used // read back: next was cleared
	if n := s.next.Load(); n != 0 {
		used = s.usedNow()
	}
	var n uint64
	s.each(func(b *block) {
		meta := b.meta[:b.used(used)/2]
		for j := range meta {
			if meta[j].cmd == k {
				n++
			}
		}
	})
	return n
}

// hadCursor reports whether command buffer k took a cursor of the frame
// s recorded before its present one.
func (s *Slot) hadCursor(k uint64) bool {
	return k != 0 && slices.Contains(s.prev[:], k)
}

// hasCursor reports whether command buffer k took a cursor of s's frame.
func (s *Slot) hasCursor(k uint64) bool {
	for i := range s.cursors {
		if s.cursors[i].cmd.Load() == k {
			return true
		}
	}
	return false
}

// pinLocked pins s for one more command buffer: out of the ring now if
// its frame was read back, else once it is (readPass). It reports false
// when MaxPinned slots are pinned already. The caller holds p.mu.
func (p *Pool) pinLocked(s *Slot) bool {
	if s.pins == 0 {
		if p.npinned >= MaxPinned {
			return false
		}
		p.npinned++
		s.pin.Store(true)
	}
	s.pins++
	for s.state.Load() == slotResetting {
		// A readback pass is resetting it on the host: the command
		// buffer is not submitted yet (Submit comes first), so the
		// reset is done before it runs.
		runtime.Gosched()
	}
	switch s.state.Load() {
	case slotFree, slotSpent:
		p.pinOutLocked(s)
	}
	return true
}

// pinOutLocked takes the pinned slot s out of the ring, kept until
// Release or unpinned. The caller holds p.mu.
func (p *Pool) pinOutLocked(s *Slot) {
	last := p.ring[len(p.ring)-1]
	p.ring[s.index], last.index = last, s.index
	p.ring = p.ring[:len(p.ring)-1]
	s.state.Store(slotDead)
	p.pinned = append(p.pinned, s)
}

// unpinLocked ends the pin of s, which no command buffer submitted again
// writes any more: still in the ring, it stays; out of it, it goes back
// spent (its reset due) while the ring has room, else it stays out,
// pinned, until Release. The caller holds p.mu.
func (p *Pool) unpinLocked(s *Slot) {
	i := slices.Index(p.pinned, s)
	if i < 0 {
		s.pin.Store(false)
		p.npinned--
		return
	}
	if len(p.ring) >= p.cfg.MaxSlots {
		s.pins = 1 // kept, as if pinned
		return
	}
	p.pinned = slices.Delete(p.pinned, i, i+1)
	s.pin.Store(false)
	p.npinned--
	s.index = len(p.ring)
	s.state.Store(slotSpent)
	p.ring = append(p.ring, s)
}
