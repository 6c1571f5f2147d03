package querypool

import (
	"fmt"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

const resultFlags = vkg.QueryResultFlags(vkg.QueryResult64Bit | vkg.QueryResultWithAvailabilityBit)

// Readback runs on a goroutine of the Pool's own, never on the caller's:
// vkGetQueryPoolResults without the WAIT bit is meant not to wait, but some
// drivers serialise it with queue execution (lavapipe holds one lock for
// both, so the call sleeps while a command buffer runs). Collect only takes
// what the reader has already harvested and wakes it for the next pass.

// Collect appends to dst the pairs read back since the last call, oldest
// frame first, and wakes the reader for another pass. It never waits for
// the GPU or the driver. A slot whose queries are not all written yet is
// looked at again on a later pass, until it is StaleFrames frames old,
// when it is given up and what it lacked is counted. Collect allocates
// only when dst must grow. The error is the first readback failure since
// the last call (VK_ERROR_DEVICE_LOST, say).
func (p *Pool) Collect(dst []Result) ([]Result, error) {
	if p.closed.Load() {
		return dst, ErrClosed
	}
	p.mu.Lock()
	dst = append(dst, p.ready...)
	p.ready = p.ready[:0]
	err := p.readErr
	p.readErr = nil
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return dst, err
}

// Drain runs one readback pass on the calling goroutine, then collects. It
// may wait inside the driver: call it off the render path, for example
// at shutdown after vkDeviceWaitIdle, to take every result still pending.
func (p *Pool) Drain(dst []Result) ([]Result, error) {
	if p.closed.Load() {
		return dst, ErrClosed
	}
	p.readMu.Lock()
	p.readPass()
	p.readMu.Unlock()
	p.mu.Lock()
	dst = append(dst, p.ready...)
	p.ready = p.ready[:0]
	err := p.readErr
	p.readErr = nil
	p.mu.Unlock()
	return dst, err
}

func (p *Pool) reader() {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-p.wake:
			p.readMu.Lock()
			p.readPass()
			p.readMu.Unlock()
		}
	}
}

// readPass reads every closed slot that may be complete, harvests what is,
// and resets spent slots whose frame is FramesInFlight old. The driver calls
// run without p.mu, so BeginFrame and Collect never wait on them.
func (p *Pool) readPass() {
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		return
	}
	// Eligible closed slots, oldest frame first (the ring is small: insertion sort).
	p.order = p.order[:0]
	for _, s := range p.ring {
		if s.state.Load() != slotClosed {
			continue
		}
		stale := p.frames-s.closed >= p.cfg.StaleFrames
		if !stale && (s.writers.Load() != 0 || s.open.Load() != 0) {
			continue
		}
		s.stale = stale
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
		s.used = s.next.Load()
		if s.used > s.cap {
			s.used = s.cap
		}
		s.rc = vkg.Success
		if s.used > 0 {
			s.rc = vkg.GetQueryPoolResults(p.dev.Handle, s.pool, 0, s.used, uint(s.used)*16,
				unsafe.Pointer(&s.results[0]), 16, resultFlags)
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
		if s.rc == vkg.NotReady && !s.stale && !s.complete() {
			s.state.Store(slotClosed)
			continue
		}
		// Take the slot: Begin and End refuse it from here on.
		s.state.Store(slotRecycling)
		if s.writers.Load() != 0 {
			s.state.Store(slotClosed) // an End is in flight; next pass
			continue
		}
		p.harvest(s)
		s.gen.Add(1)
		s.next.Store(0)
		s.open.Store(0)
		s.dirty = true
		s.state.Store(slotSpent)
	}
	// Spent slots whose frame the application has waited for are reset:
	// on the host here, or by BeginFrame's command buffer.
	p.order = p.order[:0]
	for _, s := range p.ring {
		if s.state.Load() != slotSpent || p.frames-s.begun < uint64(p.cfg.FramesInFlight) {
			continue
		}
		if !p.dev.HostQueryReset {
			s.state.Store(slotFree) // dirty: BeginFrame records the reset
			continue
		}
		s.state.Store(slotResetting)
		p.order = append(p.order, s)
	}
	resets := p.order
	p.mu.Unlock()
	if len(resets) == 0 {
		return
	}
	for _, s := range resets {
		if err := p.dev.ResetQueryPool(s.pool, 0, s.cap); err != nil {
			s.rc = vkg.ErrorInitializationFailed
		} else {
			s.rc = vkg.Success
		}
	}
	p.mu.Lock()
	for _, s := range resets {
		if s.rc == vkg.Success {
			s.dirty = false
		}
		s.state.Store(slotFree)
	}
	p.mu.Unlock()
}

// harvest moves a taken slot's complete pairs to p.ready and counts the rest.
func (p *Pool) harvest(s *Slot) {
	for k := uint32(0); k < s.used/2; k++ {
		m := &s.meta[k]
		switch m.state.Load() {
		case pairEnded:
			b, bAvail := s.results[4*k], s.results[4*k+1]
			e, eAvail := s.results[4*k+2], s.results[4*k+3]
			if bAvail == 0 || eAvail == 0 {
				p.unwritten.Add(1)
				break
			}
			p.ready = append(p.ready, Result{
				Frame: s.frame, Name: m.name, Seq: k, Cmd: m.cmd,
				Begin: b & p.mask, End: e & p.mask,
			})
			p.collected.Add(1)
		case pairBegun:
			p.unended.Add(1)
		}
		m.state.Store(pairFree)
	}
}

// complete reports whether every ended pair has both values available.
func (s *Slot) complete() bool {
	for k := uint32(0); k < s.used/2; k++ {
		if s.meta[k].state.Load() != pairEnded {
			continue
		}
		if s.results[4*k+1] == 0 || s.results[4*k+3] == 0 {
			return false
		}
	}
	return true
}
