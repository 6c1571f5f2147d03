package timeline

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
	bornAt int64    // host time when the key was first seen
}

// flowTable pairs CPU submissions with GPU spans by key.
type flowTable struct {
	keys map[uint64]*keyState
	keyQ []*keyState // in order of birth, for expiry
}

// keyFor returns the state of key, creating it. The caller holds mu.
func (r *Recorder) keyFor(key uint64) *keyState {
	if ks := r.keys[key]; ks != nil {
		return ks
	}
	ks := &keyState{key: key, born: r.ended, bornAt: Now()}
	r.keys[key] = ks
	r.keyQ = append(r.keyQ, ks)
	if len(r.keys) > r.opt.MaxPendingKeys {
		r.expireOldest()
	}
	return ks
}

// hold keeps the span with sequence seq from the sink. The caller holds mu
// and seq is the span appended last.
func (r *Recorder) hold(seq uint64) {
	if n := len(r.spans); n > 0 && r.spans[n-1].seq == seq {
		r.spans[n-1].holds++
	} else if i := r.spanIndex(seq); i >= 0 {
		r.spans[i].holds++
	}
}

// release lets the span with sequence seq go to the sink.
func (r *Recorder) release(seq uint64) {
	if i := r.spanIndex(seq); i >= 0 && r.spans[i].holds > 0 {
		r.spans[i].holds--
	}
}

// linkCPU records that CPU span seq submitted key. The caller holds mu.
func (r *Recorder) linkCPU(key, seq uint64) {
	ks := r.keyFor(key)
	if ks.cpu != 0 {
		r.stats.DuplicateKeys++
		return
	}
	ks.cpu = seq
	r.hold(seq)
	for _, g := range ks.gpu {
		r.flows = append(r.flows, flowItem{from: seq, to: g})
	}
}

// linkGPU records that GPU span seq came from submission key. The caller
// holds mu.
func (r *Recorder) linkGPU(key, seq uint64) {
	ks := r.keyFor(key)
	if len(ks.gpu) >= maxZonesPerKey {
		r.stats.ZonesUnlinked++
		return
	}
	ks.gpu = append(ks.gpu, seq)
	r.hold(seq)
	if ks.cpu != 0 {
		r.flows = append(r.flows, flowItem{from: ks.cpu, to: seq})
	}
}

// expireKeys ends the wait of keys older than SettleFrames frames or
// SettleTimeout (all keys when all is set). The caller holds mu.
func (r *Recorder) expireKeys(all bool) {
	now := Now()
	settle := uint64(r.opt.SettleFrames)
	timeout := int64(r.opt.SettleTimeout)
	for len(r.keyQ) > 0 {
		ks := r.keyQ[0]
		if !all && r.ended-ks.born < settle && now-ks.bornAt < timeout {
			break
		}
		r.expireOldest()
	}
	if len(r.keyQ) == 0 {
		r.keyQ = nil
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
	case len(ks.gpu) == 0:
		r.stats.SubmitsUnmatched++
	}
	if ks.cpu != 0 {
		r.release(ks.cpu)
	}
	for _, g := range ks.gpu {
		r.release(g)
	}
}
