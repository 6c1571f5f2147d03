package loopcheck

import (
	"fmt"

	"github.com/framescope/framescope/profiler"
)

// recorded is a command buffer of one frame slot and queue recorded once
// and submitted in every frame of its slot, as vkcube and the Vulkan
// tutorials do (Loop.Recordings): made a recording with GPU.Record, from
// a command pool of its own, which the loop never resets under it.
type recorded struct {
	pool      cmdPool
	buf       cmdBuf
	secondary bool      // a secondary, executed by the first primary of its queue's frame
	zones     []recZone // the zones ended in it, in Begin order
	stale     bool      // to be recorded (again) before it is submitted
	ran       bool      // submitted since it was recorded
	// noEnd: a misuse, Recording.End was left out: no execution of it
	// can be timed, and each is counted as never ended.
	noEnd bool
	// simultaneous: begun with the simultaneous-use flag and shared by
	// every slot (Loop.Simultaneous): an execution may run beside
	// another, and then is counted as overlapped rather than timed.
	simultaneous bool
}

// recZone is a zone of a recording: its name and the zone around it (an
// index into zones; -1: none).
type recZone struct {
	name   string
	parent int
}

// makeRecordings gives slot sl a recording on each queue whose context
// can time one: graphics or compute (the copy of its results), counting
// no statistics.
func (r *run) makeRecordings(sl *slot) error {
	if !r.l.Recordings {
		return nil
	}
	shared := r.l.Simultaneous && sl != &r.slots[0]
	if shared {
		sl.recs = r.slots[0].recs // one for every slot
	} else {
		sl.recs = make([]*recorded, r.l.Queues)
	}
	sl.secRecs = make([]*recorded, r.l.Queues)
	for q := range r.l.Queues {
		if r.a.queues[q].flags&(queueGraphics|queueCompute) == 0 || r.stats(q) != 0 {
			continue
		}
		var err error
		if !shared {
			if sl.recs[q], err = r.newRecorded(q, false); err != nil {
				return err
			}
		}
		if r.l.CachedSecondaries {
			if sl.secRecs[q], err = r.newRecorded(q, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// newRecorded makes a recording's command buffer, and the pool of its own
// it comes from.
func (r *run) newRecorded(q int, secondary bool) (*recorded, error) {
	p, err := r.a.pool(r.a.queues[q].family)
	if err != nil {
		return nil, err
	}
	b, err := r.a.alloc(p, secondary)
	if err != nil {
		r.a.destroyPool(p)
		return nil, err
	}
	// Secondaries stay one a slot: Debian's validation layer (1.3.239)
	// aborts on a simultaneous-use secondary pending in many primaries.
	return &recorded{pool: p, buf: b, secondary: secondary, stale: true, simultaneous: r.l.Simultaneous && !secondary}, nil
}

// record records slot s's recordings that are stale, and, every
// RecordEvery frames, all of them again, on the contexts open now. Its
// refused zones are noted once, in frame.
func (r *run) rerecord(frame uint64, f, s int, sl *slot) error {
	for q, rc := range append(slicesClip(sl.recs), sl.secRecs...) {
		q %= r.l.Queues
		if rc == nil || !rc.stale && (r.l.RecordEvery == 0 || f%r.l.RecordEvery != 0) {
			continue
		}
		if rc.simultaneous {
			// Shared by every slot: it may be pending in any of them, and
			// Vulkan lets it be recorded again only once none is.
			if err := r.waitAll(); err != nil {
				return err
			}
		}
		r.forgetRecording(frame, q, rc)
		if err := r.a.resetPool(rc.pool); err != nil {
			return err
		}
		if err := rc.buf.beginReusable(rc.secondary, rc.simultaneous); err != nil {
			return err
		}
		cmd := rc.buf.handle()
		rec := r.gpus[q].Record(cmd)
		// An outer zone around two.
		outer := r.recZone(frame, q, s, rc, 0, -1)
		parent := -1
		if outer.Valid() {
			parent = len(rc.zones) // where the outer zone goes once ended
		}
		inner := []recZone{}
		for i := 1; i <= 2; i++ {
			if z := r.recZone(frame, q, s, rc, i, parent); z.Valid() {
				z.End()
				inner = append(inner, recZone{name: rc.zoneName(q, s, i), parent: parent})
			}
		}
		if outer.Valid() {
			outer.End()
			rc.zones = append(rc.zones, recZone{name: rc.zoneName(q, s, 0), parent: -1})
		}
		rc.zones = append(rc.zones, inner...)
		rc.noEnd = r.l.MisuseEvery > 0 && (f+s)%r.l.MisuseEvery == 0
		if !rc.noEnd {
			rec.End()
		} else {
			r.noEnds++
		}
		if err := rc.buf.end(); err != nil {
			return err
		}
		rc.stale, rc.ran = false, false
	}
	return nil
}

// executeRecording notes in the journal one execution of slot sl's
// recording on queue q, in submission sub of frame: each of its zones,
// as the library counts them, once an execution.
func (r *run) executeRecording(frame uint64, q int, rc *recorded, sub *submitRec) {
	cb := &cbRec{queue: q, submit: sub, named: true}
	ended := 1
	if rc.noEnd {
		ended = 0 // not timed: counted as never ended
	}
	zs := make([]*zoneRec, len(rc.zones))
	for i, z := range rc.zones {
		zr := &zoneRec{frame: frame, queue: q, name: z.name, valid: true, ended: ended, begin: cb, end: cb, mayOverlap: rc.simultaneous}
		if z.parent >= 0 {
			zr.parent = zs[z.parent]
		}
		zs[i] = zr
	}
	r.j.zones = append(r.j.zones, zs...)
	r.j.calls += uint64(len(zs))
	rc.ran = true
}

// forgetRecording notes, when a recording is recorded again or its
// context closes, the zones of one that never ran: the library counts
// them once, as never submitted.
func (r *run) forgetRecording(frame uint64, q int, rc *recorded) {
	if !rc.ran {
		cb := &cbRec{queue: q}
		for _, z := range rc.zones {
			r.j.zones = append(r.j.zones, &zoneRec{frame: frame, queue: q, name: z.name, valid: true, ended: 1, begin: cb, end: cb})
			r.j.calls++
		}
	}
	rc.zones, rc.ran, rc.stale = rc.zones[:0], true, true
}

// forgetRecordings is forgetRecording for every recording, as their
// contexts close.
func (r *run) forgetRecordings(frame uint64) {
	for _, sl := range r.slots {
		for q, rc := range append(slicesClip(sl.recs), sl.secRecs...) {
			if rc != nil {
				r.forgetRecording(frame, q%r.l.Queues, rc)
			}
		}
	}
}

// zoneName names zone i of slot s's recording on queue q.
func (rc *recorded) zoneName(q, s, i int) string {
	if rc.secondary {
		return fmt.Sprintf("q%d rs%d z%d", q, s, i)
	}
	return fmt.Sprintf("q%d r%d z%d", q, s, i)
}

// slicesClip is recs with no room past its length, so that an append
// copies it.
func slicesClip(recs []*recorded) []*recorded { return recs[:len(recs):len(recs)] }

// secondaryRecording returns the slot's cached secondary on queue q,
// nil where none.
func (sl *slot) secondaryRecording(q int) *recorded {
	if sl.secRecs == nil {
		return nil
	}
	return sl.secRecs[q]
}

// recording returns the slot's recording on queue q, nil where none.
func (sl *slot) recording(q int) *recorded {
	if sl.recs == nil {
		return nil
	}
	return sl.recs[q]
}

// recZone begins zone i of slot s's recording on queue q; one refused is
// noted in the journal at once, in frame.
func (r *run) recZone(frame uint64, q, s int, rc *recorded, i, parent int) profiler.Zone {
	name := rc.zoneName(q, s, i)
	z := r.gpus[q].Zone(rc.buf.handle(), r.name(name))
	if !z.Valid() {
		r.j.calls++
		r.j.zones = append(r.j.zones, &zoneRec{frame: frame, queue: q, name: name, begin: &cbRec{queue: q}})
	}
	return z
}
