package stats

import (
	"math"
	"slices"
)

// HodgesLehmann returns the Hodges-Lehmann estimate of the shift of y
// against x: the median of the len(x)*len(y) differences y[j]-x[i]. It is
// the estimator that goes with the Mann-Whitney test: robust (up to 29% of
// either sample may be wild) and, for normal data, 95% as efficient as the
// difference of means. NaN when a sample is empty.
func HodgesLehmann(x, y []float64) float64 {
	return hodgesLehmann(x, y, nil)
}

// hodgesLehmann is HodgesLehmann with a scratch buffer it may grow.
func hodgesLehmann(x, y []float64, buf *[]float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN()
	}
	var d []float64
	if buf != nil {
		d = (*buf)[:0]
	}
	for _, b := range y {
		for _, a := range x {
			d = append(d, b-a)
		}
	}
	if buf != nil {
		*buf = d
	}
	slices.Sort(d)
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

// MAD returns the median absolute deviation from the median of xs, times
// 1.4826 so that it estimates the standard deviation of normal data. 0 for
// fewer than two values. xs is not modified.
func MAD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := medianSorted(s)
	for i, v := range s {
		s[i] = math.Abs(v - m)
	}
	slices.Sort(s)
	return 1.4826 * medianSorted(s)
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianFloat returns the median of xs without modifying it; NaN when
// empty.
func MedianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return medianSorted(s)
}

// QuantileSE returns the standard error, in the log of the unit, of the
// p-quantile of the sorted sample xs (all > 0), from the distribution-free
// confidence interval of a quantile: the order statistics of ranks
// n*p -/+ 1.96*sqrt(n*p*(1-p)) bound it with about 95% confidence, and a
// normal interval is 2*1.96 standard errors wide. It is how precisely one
// run's frames pin down that run's statistic; 0 when they cannot tell
// (a single frame).
func QuantileSE(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n < 2 {
		return 0
	}
	k := p * float64(n-1)
	h := 1.96 * math.Sqrt(float64(n)*p*(1-p))
	lo := int(math.Floor(k - h))
	hi := int(math.Ceil(k + h))
	lo = max(lo, 0)
	hi = min(hi, n-1)
	a, b := float64(max(sorted[lo], 1)), float64(max(sorted[hi], 1))
	return (math.Log(b) - math.Log(a)) / (2 * 1.96)
}

// MeanAD returns the mean absolute deviation of xs from its median, times
// sqrt(pi/2) so that it estimates the standard deviation of normal data.
// Unlike [MAD] it does not fall to 0 when most values coincide, and unlike
// the standard deviation a wild value weighs in linearly, not squared. 0
// for fewer than two values.
func MeanAD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := MedianFloat(xs)
	var sum float64
	for _, v := range xs {
		sum += math.Abs(v - m)
	}
	return math.Sqrt(math.Pi/2) * sum / float64(len(xs))
}

// TrimmedShift returns the mean of the middle of the len(x)*len(y)
// differences y[j]-x[i], trim of them cut from each end (0 <= trim <
// 0.5): with trim 0.25, the mean of their middle half. Like
// [HodgesLehmann] it shrugs off a wild value (one of five runs makes a
// fifth of the differences, fewer than a quarter); unlike it, moving one
// value moves the estimate, so that a permutation test over a handful of
// runs does not find many splits exactly as extreme as the real one. NaN
// when a sample is empty.
func TrimmedShift(x, y []float64, trim float64) float64 {
	return TrimmedShiftBuf(x, y, trim, nil)
}

// TrimmedShiftBuf is [TrimmedShift] with a scratch buffer that it grows
// and keeps in *buf (nil: none), for callers that call it in a loop.
func TrimmedShiftBuf(x, y []float64, trim float64, buf *[]float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN()
	}
	var d []float64
	if buf != nil {
		d = (*buf)[:0]
	}
	for _, b := range y {
		for _, a := range x {
			d = append(d, b-a)
		}
	}
	if buf != nil {
		*buf = d
	}
	cut := int(trim * float64(len(d)))
	if cut > 0 {
		// Partition so that d[:cut] are the smallest and d[len-cut:] the
		// largest: linear time, where sorting is n log n.
		Select(d, cut)
		Select(d[cut:], len(d)-2*cut)
	}
	d = d[cut : len(d)-cut]
	var sum float64
	for _, v := range d {
		sum += v
	}
	return sum / float64(len(d))
}
