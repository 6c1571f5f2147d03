package record

import "github.com/framescope/framescope/timeline"

// maxZonesPerKey bounds the GPU spans one submission key links to.
const maxZonesPerKey = 1 << 14

// keyState is one submission key waiting for its other end. Every span it
// names is held back from the sink until the key expires, so that all the
// flows of one submission reach the sink in one batch.
type keyState struct {
	key    uint64
	cpu    uint64   // sequence of the submitting CPU span; 0 when not seen yet
	gpu    []uint64 // sequences of the GPU spans it carried
	born   uint64   // frames ended when the key was first seen
	bornID uint64   // the frame begun last when the key was first seen
	bornAt int64    // host time when the key was first seen
}

// flowTable pairs CPU submissions with GPU spans by key.
type flowTable struct {
	keys    map[uint64]*keyState
	keyQ    []*keyState // in order of birth, for expiry
	keyQBuf []*keyState // keyQ's array from its start, reused once keyQ is empty
	keyFree []*keyState // expired keys kept for reuse
}

// maxFreeKeys and maxReuseZones bound the expired keys kept for reuse, so
// that a steady render loop links its flows without allocating.
const (
	maxFreeKeys   = 64
	maxReuseZones = 4096
)

// keyFor returns the state of key, first seen on a span of frame,
// creating it. The caller holds mu.
func (r *Recorder) keyFor(key, frame uint64) *keyState {
	if ks := r.keys[key]; ks != nil {
		return ks
	}
	// A span of a frame whose begin is still in the inbox (FramesNoWait:
	// the program ran ahead of the boundaries applied) is born as it
	// would have been with that frame begun: its key waits for that frame
	// to settle, not for the last one applied.
	born, bornID := r.ended, r.lastID
	if frame > r.lastID {
		born, bornID = born+frame-r.lastID, frame
	}
	var ks *keyState
	if n := len(r.keyFree); n > 0 {
		ks, r.keyFree = r.keyFree[n-1], r.keyFree[:n-1]
		*ks = keyState{key: key, gpu: ks.gpu[:0], born: born, bornID: bornID, bornAt: timeline.Now()}
	} else {
		ks = &keyState{key: key, born: born, bornID: bornID, bornAt: timeline.Now()}
	}
	r.keys[key] = ks
	if r.keyQBuf == nil {
		r.keyQBuf = make([]*keyState, 0, 16)
		r.keyQ = append(r.keyQBuf, r.keyQ...)
	}
	if len(r.keyQ) == cap(r.keyQ) && len(r.keyQ) < cap(r.keyQBuf)/2 {
		// Expiry moved keyQ's start along its array: move it back
		// rather than let append allocate a new one.
		n := copy(r.keyQBuf[:len(r.keyQ)], r.keyQ)
		clear(r.keyQBuf[n:cap(r.keyQBuf)])
		r.keyQ = r.keyQBuf[:n]
	}
	r.keyQ = append(r.keyQ, ks)
	if cap(r.keyQ) > cap(r.keyQBuf) {
		r.keyQBuf = r.keyQ[:0] // append moved keyQ to a new array
	}
	if len(r.keys) > r.opt.MaxPendingKeys {
		r.expireOldest()
	}
	return ks
}

// hold keeps the span with sequence seq from the sink. The caller holds mu
// and seq is the span appended last.
func (r *Recorder) hold(seq uint64) {
	if n := r.spans.len(); n > 0 && r.spans.last().seq == seq {
		r.spans.last().holds++
	} else if i := r.spanIndex(seq); i >= 0 {
		r.spans.at(i).holds++
	}
}

// release lets the span with sequence seq go to the sink.
func (r *Recorder) release(seq uint64) {
	if i := r.spanIndex(seq); i >= 0 && r.spans.at(i).holds > 0 {
		r.spans.at(i).holds--
	}
}

// linkCPU records that CPU span seq, of frame, submitted key. The caller
// holds mu.
func (r *Recorder) linkCPU(key, seq, frame uint64) {
	ks := r.keyFor(key, frame)
	if ks.cpu != 0 {
		r.stats.DuplicateKeys++
		return
	}
	ks.cpu = seq
	r.hold(seq)
	r.waiting -= uint64(len(ks.gpu))
	for _, g := range ks.gpu {
		r.appendFlow(seq, g)
	}
}

// linkGPU records that GPU span seq, of frame, came from submission key.
// The caller holds mu.
func (r *Recorder) linkGPU(key, seq, frame uint64) {
	ks := r.keyFor(key, frame)
	r.linked++
	if len(ks.gpu) >= maxZonesPerKey {
		r.stats.ZonesUnlinked++
		return
	}
	ks.gpu = append(ks.gpu, seq)
	r.hold(seq)
	if ks.cpu != 0 {
		r.appendFlow(ks.cpu, seq)
	} else {
		r.waiting++
	}
}

// expireKeys ends the wait of keys older than SettleFrames frames or
// SettleTimeout (all keys when all is set). The caller holds mu.
func (r *Recorder) expireKeys(all bool) {
	now := timeline.Now()
	settle := uint64(r.opt.SettleFrames)
	timeout := int64(r.opt.SettleTimeout)
	wm, reports := r.gpuWatermark()
	for len(r.keyQ) > 0 {
		ks := r.keyQ[0]
		// A key born in a frame not applied yet (keyFor) has its born
		// ahead of ended.
		age := r.ended - min(ks.born, r.ended)
		due := age >= settle || now-ks.bornAt >= timeout
		if reports && ks.cpu != 0 {
			// Submitted by a CPU span: its zones are in once every
			// reporting queue has settled the frame it was submitted in
			// (bornID or earlier), however late that is.
			due = wm >= ks.bornID || age >= MaxSettleFrames
		}
		if !all && !due {
			break
		}
		r.expireOldest()
	}
	if len(r.keyQ) == 0 {
		r.keyQ = r.keyQBuf[:0]
	}
}

// expireOldest ends the wait of the oldest key. The caller holds mu.
func (r *Recorder) expireOldest() {
	ks := r.keyQ[0]
	r.keyQ[0] = nil
	r.keyQ = r.keyQ[1:]
	if r.keys[ks.key] == ks {
		delete(r.keys, ks.key)
	}
	switch {
	case ks.cpu == 0:
		r.stats.ZonesUnlinked += uint64(len(ks.gpu))
		r.waiting -= uint64(len(ks.gpu))
	case len(ks.gpu) == 0:
		r.stats.SubmitsUnmatched++
	}
	if ks.cpu != 0 {
		r.release(ks.cpu)
	}
	for _, g := range ks.gpu {
		r.release(g)
	}
	if len(r.keyFree) < maxFreeKeys && cap(ks.gpu) <= maxReuseZones {
		r.keyFree = append(r.keyFree, ks)
	}
}
