package querypool

import "slices"

// A recording's last execution is read when its command buffer is
// recorded again (BeginRecording), on the thread that records it: under
// the layer, the program's. Making its results there (256 zones took 3.5
// us of an H200's vkBeginCommandBuffer, most of it writing 80-byte
// results into room another core last held) is, in the usual case, left
// to the next Collect, outside the pool's lock: the recording thread
// copies each zone's two times and name out of the host copy, in the
// pass that finds them in, into a slab the pool keeps (24 bytes a zone),
// and Collect makes the results. The books count the zones collected at
// the handover; Account's ready and Settled count them until a Collect
// takes them.

// deferredRun is an execution of a recording handed over: its zones lie
// in the slab from off, three words each (begin, end, name).
type deferredRun struct {
	cmd uint64
	x   execution
	off int
	n   int
}

// maxSlab bounds the slab (words): past it, as where nothing collects,
// an execution's results are made on the recording thread.
const maxSlab = 3 * maxReadyRoom

// handOverLocked copies r's last execution out of its host copy, vals,
// for the next Collect, and reports true; false where a pair is not in
// (nothing is handed over) or the slab is full. The caller holds p.mu.
func (p *Pool) handOverLocked(r *recording, vals []uint64) bool {
	n := len(r.pairs)
	if n == 0 {
		return true // nothing to hand over
	}
	off := len(p.slab)
	if off+3*n > maxSlab {
		return false
	}
	p.slab = slices.Grow(p.slab, 3*n)[:off+3*n]
	w := p.slab[off : off+3*n : off+3*n]
	for i, pr := range r.pairs {
		v := vals[4*pr.j : 4*pr.j+4 : 4*pr.j+4]
		if !pairIn(v) {
			p.slab = p.slab[:off]
			return false
		}
		w[3*i], w[3*i+1], w[3*i+2] = v[0]&p.mask, v[2]&p.mask, uint64(pr.name)
	}
	p.deferred = append(p.deferred, deferredRun{cmd: r.cmd, x: *r.run, off: off, n: n})
	p.deferredN += n
	p.handovers++
	return true
}

// deferredTake is what a Collect takes of the handed over.
type deferredTake struct {
	runs []deferredRun
	slab []uint64
}

// takeDeferredLocked takes the executions handed over since the last
// take. The lists and slabs take turns (makeDeferred gives these back):
// a handover allocates nothing once warm. With none handed over it
// takes nothing, and the room stays: taken, it was given back by no one,
// and the next handover grew its room anew on the recording thread. The
// caller holds p.mu.
func (p *Pool) takeDeferredLocked() deferredTake {
	if len(p.deferred) == 0 {
		return deferredTake{}
	}
	t := deferredTake{runs: p.deferred, slab: p.slab}
	p.deferred, p.deferredSpare = p.deferredSpare[:0], nil
	p.slab, p.slabSpare = p.slabSpare[:0], nil
	p.deferredN = 0
	return t
}

// makeDeferred appends the results of t's executions to dst, off the
// pool's lock but for giving t's room back.
func (p *Pool) makeDeferred(dst []Result, t deferredTake) []Result {
	if len(t.runs) == 0 {
		return dst
	}
	for i := range t.runs {
		dst = t.runs[i].results(dst, t.slab)
	}
	p.mu.Lock()
	if p.deferredSpare == nil {
		p.deferredSpare = t.runs[:0]
	}
	if p.slabSpare == nil {
		p.slabSpare = t.slab[:0]
	}
	p.mu.Unlock()
	return dst
}

// results appends d's results, whose zones lie in slab, to dst.
func (d *deferredRun) results(dst []Result, slab []uint64) []Result {
	n0 := len(dst)
	dst = slices.Grow(dst, d.n)[:n0+d.n]
	w := slab[d.off : d.off+3*d.n : d.off+3*d.n]
	for i := range d.n {
		dst[n0+i] = Result{Frame: d.x.frame, Host: d.x.host, Name: uint32(w[3*i+2]), Seq: uint32(i), Cmd: d.cmd,
			Begin: w[3*i], End: w[3*i+1], Key: d.x.key, Submitted: true, Queue: d.x.queue}
	}
	return dst
}

// finishDeferredLocked appends the results of the executions handed over
// and not taken to dst, at the pool's end, and forgets them. The caller
// holds p.mu.
func (p *Pool) finishDeferredLocked(dst []Result) []Result {
	for i := range p.deferred {
		dst = p.deferred[i].results(dst, p.slab)
	}
	p.dropDeferredLocked()
	return dst
}

// dropDeferredLocked forgets the executions handed over and not taken.
// The caller holds p.mu.
func (p *Pool) dropDeferredLocked() {
	p.deferred, p.slab, p.deferredN = p.deferred[:0], p.slab[:0], 0
}

// deferredOldest returns the oldest frame of the executions handed over
// and not taken (^0: none), for Settled. The caller holds p.mu.
func (p *Pool) deferredOldest() uint64 {
	oldest := ^uint64(0)
	for i := range p.deferred {
		oldest = min(oldest, p.deferred[i].x.frame)
	}
	return oldest
}
