package querypool

// CurrentNext returns the next query index and the capacity of the frame
// being recorded, for tests.
func (p *Pool) CurrentNext() (next, capacity uint32) {
	s := p.cur.Load()
	if s == nil {
		return 0, 0
	}
	return s.next.Load(), s.cap
}

// bareSlot returns a slot of the given pairs with no Vulkan objects, laid
// out as newSlot lays one out (slotMem), for the benchmarks that time the
// zone path and the harvest without a device.
func bareSlot(pairs uint32, writeTS uintptr) *Slot {
	cursors, hot, meta := slotMem(pairs)
	s := &Slot{slotHot: hot, cursors: cursors}
	s.block.meta = meta
	s.block.cap, s.qcap, s.writeTS = 2*pairs, 2*pairs, writeTS
	s.limit = 2 * pairs
	return s
}

// Handovers returns how many recordings' executions were handed to
// Collect whole (deferred.go), for tests.
func (p *Pool) Handovers() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handovers
}

// TakenIdle returns how many recordings began on the slot of one whose
// command buffer was reset (takeIdleLocked), for tests.
func (p *Pool) TakenIdle() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takenIdle
}
