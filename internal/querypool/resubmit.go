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

// pinResubmittedLocked pins the slots whose zones cmds, submitted in
// frame, carry from an earlier frame, and unpins those of command buffers
// recorded again with zones. The caller holds p.mu.
func (p *Pool) pinResubmittedLocked(frame uint64, cmds []vkg.CommandBuffer) {
	for _, c := range cmds {
		k := cmdKey(c)
		if k == 0 || p.recs[k] != nil {
			continue
		}
		s, again := p.again[k]
		switch {
		case p.inFrame(frame, k):
			if again {
				p.forgetAgainLocked(k, s)
			}
		case again:
			p.resubmitted.Add(1)
		default:
			p.againLocked(frame, k)
		}
	}
}

// againLocked notes command buffer k, submitted in frame with no zones
// of its own, and pins the earlier slot that holds its zones, if any.
// The caller holds p.mu.
func (p *Pool) againLocked(frame, k uint64) {
	// The newest frame that recorded k: it may have been recorded with
	// zones in several (a handle reused), and only the last recording
	// runs.
	var s *Slot
	var at uint64
	for _, c := range p.ring {
		if c.frame != frame && c.frame >= at && c.hasCursor(k) {
			s, at = c, c.frame
		}
		if c.prevFrame != frame && c.prevFrame >= at && c.hadCursor(k) {
			s, at = c, c.prevFrame
		}
	}
	if s != nil {
		p.resubmitted.Add(1)
		if len(p.again) >= maxAgain {
			return
		}
		if p.again == nil {
			p.again = map[uint64]*Slot{}
		}
		if !p.pinLocked(s) {
			s = nil
		}
		p.again[k] = s
	}
}

// forgetAgainLocked forgets command buffer k, recorded again: its earlier
// executions are over (Vulkan resets a command buffer only once they
// are), so its slot s (nil: none pinned) needs no pin for it. The caller
// holds p.mu.
func (p *Pool) forgetAgainLocked(k uint64, s *Slot) {
	delete(p.again, k)
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
	for i := range s.cursors {
		s.prev[i] = s.cursors[i].cmd.Load()
	}
	s.prevFrame = s.frame
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
