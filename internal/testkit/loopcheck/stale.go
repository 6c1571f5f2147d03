package loopcheck

import "fmt"

// stale is a frame slot's command buffer recorded once, with zones and
// without GPU.Record, on queue 0 in the first frame of its slot, and
// submitted again, named to GPU.Submit, in the slot's later frames
// (Loop.Resubmit): the vkcube pattern without Record, which the library
// refuses. Its later executions are not timed (the journal expects
// nothing of them), and the library must keep the queries they write
// from every other frame's zones, which the checks hold to their times.
type stale struct {
	pool     cmdPool
	buf      cmdBuf
	recorded bool // recorded on the contexts open now
	zones    int  // the zones the library handed out in it
}

// newStale makes slot sl's stale command buffer, from a pool of its own.
func (r *run) newStale(sl *slot) error {
	if !r.l.Resubmit {
		return nil
	}
	p, err := r.a.pool(r.a.queues[0].family)
	if err != nil {
		return err
	}
	b, err := r.a.alloc(p, false)
	if err != nil {
		r.a.destroyPool(p)
		return err
	}
	sl.stale = &stale{pool: p, buf: b}
	return nil
}

// recordStale records slot s's stale command buffer in frame, on queue 0
// (whose frame take began), when the contexts open now have not seen it:
// an outer zone around an inner one. It returns the command buffer's
// record, for its first submission; nil when it was recorded before.
func (r *run) recordStale(frame uint64, s int, sl *slot) (*cbRec, error) {
	st := sl.stale
	if st == nil || st.recorded {
		return nil, nil
	}
	if err := r.a.resetPool(st.pool); err != nil {
		return nil, err
	}
	if err := st.buf.beginReusable(false, false); err != nil {
		return nil, err
	}
	cb := &cbRec{queue: 0}
	names := []string{fmt.Sprintf("q0 stale%d z0", s), fmt.Sprintf("q0 stale%d z1", s)}
	st.zones = 0
	for _, z := range r.nestedZones(r.gpus[0], st.buf.handle(), names, frame, cb, true) {
		if z.valid {
			st.zones++
		}
	}
	if err := st.buf.end(); err != nil {
		return nil, err
	}
	st.recorded = true
	return cb, nil
}

// staleAgain notes that the contexts were made again: each slot's stale
// command buffer is recorded again on the new ones.
func (r *run) staleAgain() {
	for _, sl := range r.slots {
		if sl.stale != nil {
			sl.stale.recorded = false
		}
	}
}

// executeStaleAgain notes in the journal one more execution of a stale
// command buffer: its zones run again, untimed, each counted once.
func (r *run) executeStaleAgain(st *stale) {
	r.j.calls += uint64(st.zones)
	r.j.resubmitted += uint64(st.zones)
}
