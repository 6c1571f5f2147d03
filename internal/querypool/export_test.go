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
