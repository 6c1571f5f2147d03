package clock

// Conversion: the lock-free read side of the model.

// Convert places a raw device tick on the host clock. hint is a host time
// near the tick's (its command buffer's submission, or the readback time):
// for ValidBits < 64 the tick is extended to the 64-bit value nearest the
// tick the model predicts for hint, which is right as long as hint is
// within half a wrap (2^(ValidBits-1) ticks, 2.1 s for 32 bits at 1 ns) of
// the truth; with 64 valid bits hint is not used. It returns the host time
// in ns and its error bound in ns (math.MaxInt64 when too large to hold),
// and ok = false before the first sample or when the result would not fit
// in an int64: count those as Drops.Unconverted. It does not allocate and
// is safe to call concurrently with Add.
func (m *Model) Convert(raw uint64, hint int64) (host, errNs int64, ok bool) {
	s := m.snap.Load()
	if s == nil {
		return 0, 0, false
	}
	raw &= s.mask
	var x int64
	if s.half == 0 {
		x = int64(raw - s.base)
	} else if x, ok = s.near(raw, hint, s.mask, s.half); !ok {
		return 0, 0, false
	}
	g := &s.last
	if x < g.x0 {
		g = s.find(x)
	}
	return g.convert(x)
}

// ConvertBits is Convert for a tick with fewer valid bits than the clock
// the samples were taken from: a queue family whose timestampValidBits is
// below the model's ValidBits (the H100's transfer family counts 32 bits
// of its 64-bit device clock). One model then serves every family of a
// device. validBits of 0, or not below the model's, means Convert.
func (m *Model) ConvertBits(raw uint64, validBits uint, hint int64) (host, errNs int64, ok bool) {
	s := m.snap.Load()
	if s == nil {
		return 0, 0, false
	}
	mask := uint64(1)<<(validBits&63) - 1
	if validBits == 0 || validBits >= 64 || mask >= s.mask {
		return m.Convert(raw, hint)
	}
	x, ok := s.near(raw&mask, hint, mask, mask>>1+1)
	if !ok {
		return 0, 0, false
	}
	g := &s.last
	if x < g.x0 {
		g = s.find(x)
	}
	return g.convert(x)
}

// ConvertSpan places a span's two ticks, begin and end, on the host
// clock: what two calls of Convert with the same hint return, start from
// begin and stop from end, errNs the larger of their bounds, ok only if
// both convert. Both ticks are converted with one snapshot of the model,
// so that a calibration published between them cannot convert the two
// with different fits; and the work they share (the snapshot, the tick
// predicted at hint) is done once. It does not allocate and is safe to
// call concurrently with Add.
func (m *Model) ConvertSpan(begin, end uint64, hint int64) (start, stop, errNs int64, ok bool) {
	return m.snap.Load().convertSpan(begin, end, hint)
}

// convertSpan is ConvertSpan with snapshot s (nil: none yet).
func (s *clockSnap) convertSpan(begin, end uint64, hint int64) (start, stop, errNs int64, ok bool) {
	if s == nil {
		return 0, 0, 0, false
	}
	begin, end = begin&s.mask, end&s.mask
	var xb, xe int64
	if s.half == 0 {
		xb, xe = int64(begin-s.base), int64(end-s.base)
	} else {
		pred, ok := s.predict(hint)
		if !ok {
			return 0, 0, 0, false
		}
		xb, xe = s.extend(begin, pred, s.mask, s.half), s.extend(end, pred, s.mask, s.half)
	}
	start, e1, ok1 := s.at(xb)
	stop, e2, ok2 := s.at(xe)
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	return start, stop, max(e1, e2), true
}

// near extends raw (its low bits, mask) to the tick nearest the one the
// snapshot predicts at host time hint; half is half a wrap.
func (s *clockSnap) near(raw uint64, hint int64, mask, half uint64) (int64, bool) {
	pred, ok := s.predict(hint)
	if !ok {
		return 0, false
	}
	return s.extend(raw, pred, mask, half), true
}

// predict returns the extended tick the snapshot predicts at host time
// hint, or false when it is out of range.
func (s *clockSnap) predict(hint int64) (int64, bool) {
	pf := s.predX + (float64(hint)-s.predH)*s.invSl
	if !(pf > -clockLimit && pf < clockLimit) {
		return 0, false
	}
	return int64(pf), true
}

// extend extends raw (its low bits, mask) to the tick nearest pred; half
// is half a wrap.
func (s *clockSnap) extend(raw uint64, pred int64, mask, half uint64) int64 {
	d := (raw - (s.base + uint64(pred))) & mask
	x := pred + int64(d)
	if d >= half {
		x -= int64(half) * 2
	}
	return x
}

// at converts the extended tick x with the snapshot's chain.
func (s *clockSnap) at(x int64) (host, errNs int64, ok bool) {
	g := &s.last
	if x < g.x0 {
		g = s.find(x)
	}
	return g.convert(x)
}

// find returns the last segment starting at or before x, or the first.
//
//go:noinline
func (s *clockSnap) find(x int64) *clockSeg {
	segs := s.segs
	lo, hi := 0, len(segs)-1
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if segs[mid].x0 <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return &segs[lo]
}

// Snapshot is the model as it stood at one moment (Model.Snapshot): its
// conversions never change, whatever samples come later. Ticks that
// must keep their order on the host clock are converted with one
// Snapshot: the zones of one submission read back at different times (a
// primary command buffer's and its secondaries'), converted with the
// model of each moment, could cross by the change between two fits. The
// zero Snapshot converts nothing.
type Snapshot struct{ s *clockSnap }

// Snapshot returns the model as it stands now.
func (m *Model) Snapshot() Snapshot { return Snapshot{m.snap.Load()} }

// ConvertSpan is Model.ConvertSpan with the snapshot's model.
func (s Snapshot) ConvertSpan(begin, end uint64, hint int64) (start, stop, errNs int64, ok bool) {
	return s.s.convertSpan(begin, end, hint)
}
