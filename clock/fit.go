package clock

import (
	"math"

	"github.com/framescope/framescope/internal/stats"
)

// clockFit is a fitted line h(x) = hc + slope*(x - xc) with its error
// bound p0 + p1*a + p2*a^2 + p3*a^3, a = |x - xc|. xc is the newest fitted
// sample's tick; hc is split into an integer and a fraction to keep ns
// precision on hosts with a large CLOCK_MONOTONIC.
type clockFit struct {
	xc    int64
	hcI   int64
	hcF   float64
	slope float64
	p     [4]float64
	// scatter is 1.4826 times the median absolute residual of the fitted
	// samples: how well they agree with each other, not a bound.
	scatter float64
}

// diffF returns a-b as a float64 without int64 overflow.
func diffF(a, b int64) float64 {
	if a >= b {
		return float64(uint64(a) - uint64(b))
	}
	return -float64(uint64(b) - uint64(a))
}

// hostAt is the fitted host time at x, as a float64.
func (f *clockFit) hostAt(x int64) float64 {
	return float64(f.hcI) + (f.hcF + f.slope*diffF(x, f.xc))
}

// tickAt is the tick the fit maps to host time t.
func (f *clockFit) tickAt(t int64) int64 {
	return clampTick(float64(f.xc) + (diffF(t, f.hcI)-f.hcF)/f.slope)
}

// bound is the fit's error bound at x.
func (f *clockFit) bound(x int64) float64 { return evalBound(&f.p, x, f.xc) }

// seg returns the fit as a segment starting at x0.
func (f *clockFit) seg(x0 int64) clockSeg {
	v := math.Round(f.hcF + f.slope*diffF(x0, f.xc))
	h0 := f.hcI
	if math.Abs(v) < clockLimit {
		h0 += int64(v)
	}
	return clockSeg{x0: x0, h0: h0, slope: f.slope, xc: f.xc, p: f.p}
}

// anchorFit is the fallback with no usable slope: the nominal period
// through one sample, the rate known only within MaxDriftPPM.
func anchorFit(p clockPoint, m *Model) clockFit {
	return clockFit{
		xc:    p.x,
		hcI:   p.h,
		slope: m.period,
		p:     [4]float64{p.dev + 1, m.period * m.drift / (1 - m.drift), m.kappa / 2, 0},
	}
}

// median returns the median of v, reordering v; v must not be empty.
func median(v []float64) float64 {
	n := len(v)
	hi := stats.Select(v, n/2)
	if n%2 == 1 {
		return hi
	}
	// The lower middle is the largest of the elements left of n/2.
	lo := v[0]
	for _, x := range v[1 : n/2] {
		lo = max(lo, x)
	}
	return (lo + hi) / 2
}

// fitPoints fits ps (oldest first) as the package doc describes (Fit). It sets
// m.keep[i] for each point it keeps and returns the number it rejected.
// It uses m's scratch space and does not allocate.
func fitPoints(ps []clockPoint, m *Model) (clockFit, int) {
	n := len(ps)
	keep := m.keep[:0]
	for range ps {
		keep = append(keep, true)
	}
	m.keep = keep
	last := ps[n-1]
	if n == 1 {
		return anchorFit(last, m), 0
	}
	lo, hi := m.period/(1+m.drift), m.period/(1-m.drift)
	dx := func(i int) float64 { return diffF(ps[i].x, last.x) }
	dy := func(i int) float64 { return diffF(ps[i].h, last.h) }

	// 1. Robust line and in-window outliers.
	sc := m.scratch[:0]
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if d := dx(j) - dx(i); d != 0 {
				sc = append(sc, (dy(j)-dy(i))/d)
			}
		}
	}
	b0 := m.period
	if len(sc) > 0 {
		b0 = median(sc)
	}
	if !(b0 >= lo) {
		b0 = lo
	} else if b0 > hi {
		b0 = hi
	}
	sc = sc[:0]
	for i := 0; i < n; i++ {
		sc = append(sc, dy(i)-b0*dx(i))
	}
	a0 := median(sc)
	sc = sc[:0]
	for i := 0; i < n; i++ {
		sc = append(sc, math.Abs(dy(i)-a0-b0*dx(i))/ps[i].dev)
	}
	z := sc[n:n]
	z = append(z, sc[:n]...) // keep the per-point order in sc[:n]
	thr := math.Max(clockRejectK*1.4826*median(z), clockRejectMin)
	rejected := 0
	for i := 0; i < n && n >= clockMinKeep; i++ {
		if !(sc[i] <= thr) {
			keep[i] = false
			rejected++
		}
	}
	m.scratch = sc[:0]

	// 2. Weighted least squares on the kept points.
	var s, sx, sy float64
	newest := -1
	for i := 0; i < n; i++ {
		if keep[i] {
			w := 1 / (ps[i].dev * ps[i].dev)
			s += w
			sx += w * dx(i)
			sy += w * dy(i)
			newest = i
		}
	}
	if newest < 0 {
		return anchorFit(last, m), rejected
	}
	xbar, ybar := sx/s, sy/s
	var sxx, sxy float64
	for i := 0; i < n; i++ {
		if keep[i] {
			w := 1 / (ps[i].dev * ps[i].dev)
			d := dx(i) - xbar
			sxx += w * d * d
			sxy += w * d * (dy(i) - ybar)
		}
	}
	if !(sxx > 0) {
		return anchorFit(ps[newest], m), rejected
	}
	b := sxy / sxx

	// 3. The hard error bound at the newest point (dx = 0), expanded in
	// a = |x - xc|.
	uc := -xbar
	var g0, a1, q0, q1, q2, q3 float64
	sc = m.scratch[:0]
	for i := 0; i < n; i++ {
		if !keep[i] {
			continue
		}
		w := 1 / (ps[i].dev * ps[i].dev)
		d := dx(i) - xbar
		r := dy(i) - (ybar + b*d)
		sc = append(sc, math.Abs(r))
		dv := math.Max(ps[i].dev, math.Abs(r))
		c := math.Abs(w/s + w*d*uc/sxx)
		beta := math.Abs(w * d / sxx)
		e := math.Abs(dx(i))
		g0 += c * dv
		a1 += beta * dv
		q0 += c * e * e
		q1 += 2*c*e + beta*e*e
		q2 += c + 2*beta*e
		q3 += beta
	}
	if !(a1 < m.period*m.drift) {
		return anchorFit(ps[newest], m), rejected
	}
	bc := b
	if !(bc >= lo) {
		bc = lo
	} else if bc > hi {
		bc = hi
	}
	k := m.kappa / 2
	hc := ybar + b*uc
	f := clockFit{
		xc:      last.x,
		hcI:     last.h,
		slope:   bc,
		p:       [4]float64{g0 + k*q0 + 1, a1 + math.Abs(b-bc) + k*q1, k * q2, k * q3},
		scatter: 1.4826 * median(sc),
	}
	m.scratch = sc[:0]
	ip := math.Round(hc)
	if !(math.Abs(ip) < clockLimit) || math.IsNaN(f.p[0]+f.p[1]+f.p[2]+f.p[3]) {
		return anchorFit(ps[newest], m), rejected
	}
	f.hcI += int64(ip)
	f.hcF = hc - ip
	return f, rejected
}
