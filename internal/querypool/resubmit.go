package querypool

import (
	"runtime"

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
// without zones looks the same from here, and pins a slot for nothing: at
// most MaxPinned a pool are kept, so the cost is bounded.

// MaxPinned bounds the slots a pool keeps out of use for command buffers
// submitted again.
const MaxPinned = 16

// pinResubmittedLocked pins the slots whose zones cmds, submitted in
// frame, carry from an earlier frame. The caller holds p.mu.
func (p *Pool) pinResubmittedLocked(frame uint64, cmds []vkg.CommandBuffer) {
	for _, c := range cmds {
		k := cmdKey(c)
		if k == 0 || p.recs[k] != nil {
			continue
		}
		if p.inFrame(frame, k) {
			delete(p.again, k) // recorded again, with zones
			continue
		}
		if _, ok := p.again[k]; ok {
			p.resubmitted.Add(1)
			continue
		}
		for _, s := range p.ring {
			if s.frame != frame && s.hasCursor(k) {
				p.resubmitted.Add(1)
				if len(p.again) < maxAgain {
					if p.again == nil {
						p.again = map[uint64]struct{}{}
					}
					p.again[k] = struct{}{}
				}
				p.pinLocked(s)
				break
			}
		}
	}
}

// maxAgain bounds the command buffers a pool remembers as submitted
// again: those of MaxPinned frames of many command buffers each.
const maxAgain = 1024

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

// hasCursor reports whether command buffer k took a cursor of s's frame.
func (s *Slot) hasCursor(k uint64) bool {
	for i := range s.cursors {
		if s.cursors[i].cmd.Load() == k {
			return true
		}
	}
	return false
}

// pinLocked pins s: out of the ring now if its frame was read back, else
// once it is (readPass). The caller holds p.mu.
func (p *Pool) pinLocked(s *Slot) {
	if s.pin.Load() || p.npinned >= MaxPinned {
		return
	}
	p.npinned++
	s.pin.Store(true)
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
}

// pinOutLocked takes the pinned slot s out of the ring, kept until
// Release. The caller holds p.mu.
func (p *Pool) pinOutLocked(s *Slot) {
	last := p.ring[len(p.ring)-1]
	p.ring[s.index], last.index = last, s.index
	p.ring = p.ring[:len(p.ring)-1]
	s.state.Store(slotDead)
	p.retired = append(p.retired, s)
}
