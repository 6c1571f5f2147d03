package clock

// The mapping chain: the segments a snapshot is made of, and how a refit
// extends it (freeze point, slew, fit), upholding the guarantees the
// package doc states.

import "math"

// clockSeg is one piece of the mapping, for ticks from x0 to the next
// segment's x0: host = h0 + int64(slope*(x-x0)), error bound
// p0 + p1*a + p2*a^2 + p3*a^3 with a = |x - xc|.
type clockSeg struct {
	x0    int64
	h0    int64
	slope float64
	xc    int64
	p     [4]float64
}

// clockSnap is an immutable published state. Convert reads only this.
type clockSnap struct {
	base  uint64
	mask  uint64
	half  uint64 // half a wrap; 0 when ValidBits == 64
	segs  []clockSeg
	last  clockSeg // segs[len(segs)-1]
	predX float64  // tick predicted at predH, for wrap extension
	predH float64
	invSl float64 // ticks per host ns
}

// publish turns the fit into a new snapshot: the old chain up to the
// freeze point, a slew, then the fit. restart begins a new chain.
func (m *Model) publish(sampleHost int64, restart bool) {
	f := &m.fit
	old := m.snap.Load()
	if !restart && old != nil && len(old.segs) > 0 {
		a := &old.segs[len(old.segs)-1]
		t := min(max(m.cfg.Now(), sampleHost), satAdd(sampleHost, clockPublishLag))
		xf := a.tickAt(t)
		for range 2 { // the bound grows with the distance: iterate
			xf = a.tickAt(satAdd(t, clampTick(min(a.bound(xf), clockLimit))))
		}
		xf = max(xf, m.freeze, a.x0)
		hf, ok := a.host(xf)
		c := f.hostAt(xf) - float64(hf)
		ea, ef := a.bound(xf), f.bound(xf)
		if ok && math.Abs(c) <= 4*(ea+ef)+1000 {
			m.extend(xf, hf, c, ea)
			return
		}
		// The new fit disagrees with the old beyond both bounds: the
		// device clock jumped. Start over.
		m.resets++
	}
	m.freeze = math.MinInt64
	m.segs = append(m.segs[:0:0], f.seg(f.xc))
	m.store()
}

// extend appends to the chain the slew from (xf, hf) onto the fit, and
// the fit itself, and publishes.
func (m *Model) extend(xf, hf int64, c, ea float64) {
	f := &m.fit
	if len(m.segs) >= clockMaxSegs {
		m.segs = append(make([]clockSeg, 0, clockMaxSegs+2), m.segs[clockMaxSegs/2:]...)
	}
	m.freeze = xf
	if math.Abs(c) < 1 {
		s := f.seg(xf)
		s.h0 = hf
		s.p[0] += 1
		m.segs = append(m.segs, s)
		m.store()
		return
	}
	l := math.Ceil(math.Abs(c) / (clockSlewMax * f.slope))
	if !(l < clockLimit/4) || xf > math.MaxInt64-int64(l) {
		m.segs = append(m.segs[:0:0], f.seg(f.xc))
		m.freeze = math.MinInt64
		m.resets++
		m.store()
		return
	}
	li := int64(l)
	xe := xf + li
	he := f.hostAt(xe)
	slope := (he - float64(hf)) / l
	slew := clockSeg{x0: xf, h0: hf, slope: slope, xc: xf}
	slew.p[0] = math.Max(ea, f.bound(xe)) + m.kappa*l*l/8 + 2
	hEnd, ok := slew.host(xe)
	if !ok || !(slope > 0) {
		m.segs = append(m.segs[:0:0], f.seg(f.xc))
		m.freeze = math.MinInt64
		m.resets++
		m.store()
		return
	}
	s := f.seg(xe)
	s.h0 = hEnd
	s.p[0] += 2
	m.segs = append(m.segs, slew, s)
	m.store()
}

// store publishes the current chain and fit as a snapshot.
func (m *Model) store() {
	f := &m.fit
	s := &clockSnap{
		base:  m.base,
		mask:  m.mask,
		segs:  m.segs[:len(m.segs):len(m.segs)],
		last:  m.segs[len(m.segs)-1],
		predX: float64(f.xc),
		predH: float64(f.hcI) + f.hcF,
		invSl: 1 / f.slope,
	}
	if m.mask != math.MaxUint64 {
		s.half = (m.mask >> 1) + 1
	}
	m.snap.Store(s)
}

// convert evaluates the segment and its bound at x.
func (g *clockSeg) convert(x int64) (host, errNs int64, ok bool) {
	v := diffF(x, g.x0) * g.slope
	if !(math.Abs(float64(g.h0)+v) < clockLimit) {
		return 0, 0, false
	}
	a := math.Abs(diffF(x, g.xc))
	e := g.p[0] + a*(g.p[1]+a*(g.p[2]+a*g.p[3]))
	if !(e < clockLimit) {
		return g.h0 + int64(v), math.MaxInt64, true // no useful bound
	}
	return g.h0 + int64(v), int64(e) + 1, true
}

// host evaluates the segment at x, exactly as convert does; false when
// out of int64 range.
func (g *clockSeg) host(x int64) (int64, bool) {
	v := diffF(x, g.x0) * g.slope
	if !(math.Abs(float64(g.h0)+v) < clockLimit) {
		return 0, false
	}
	return g.h0 + int64(v), true
}

// bound evaluates the segment's error bound at x.
func (g *clockSeg) bound(x int64) float64 {
	return evalBound(&g.p, x, g.xc)
}

func evalBound(p *[4]float64, x, xc int64) float64 {
	a := math.Abs(diffF(x, xc))
	return p[0] + a*(p[1]+a*(p[2]+a*p[3]))
}

// tickAt inverts the segment's line: the tick it maps to host time t.
func (g *clockSeg) tickAt(t int64) int64 {
	return clampTick(float64(g.x0) + float64(t-g.h0)/g.slope)
}

func clampTick(v float64) int64 {
	switch {
	case v >= clockLimit:
		return int64(clockLimit)
	case v <= -clockLimit:
		return -int64(clockLimit)
	case v == v:
		return int64(v)
	}
	return 0
}

// satAdd returns a+b saturated to the int64 range, for b >= 0.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
