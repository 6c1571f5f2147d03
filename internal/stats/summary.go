package stats

import (
	"math"
	"math/bits"
	"slices"
)

// Summary describes a sample of durations in nanoseconds.
type Summary struct {
	Count int
	// Total is the sum, saturated at math.MaxInt64 (or math.MinInt64):
	// two spans of 5e15 µs overflow an int64. Mean is exact all the same,
	// from a 128-bit sum.
	Total int64
	Mean  float64
	Min   int64
	P50   float64
	P95   float64
	P99   float64
	Max   int64
}

// Summarize sorts xs in place and returns its summary. Percentiles are
// interpolated linearly between order statistics (the "type 7" definition
// of R and NumPy's default). An empty sample gives the zero Summary.
func Summarize(xs []int64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	var sum sum128
	for _, x := range xs {
		sum.add(x)
	}
	return Summary{
		Count: len(xs),
		Total: sum.saturated(),
		// Rounding may take the mean past the extremes of a sample of
		// equal values: it is kept between them.
		Mean: min(max(sum.float()/float64(len(xs)), float64(xs[0])), float64(xs[len(xs)-1])),
		Min:  xs[0],
		P50:  Quantile(xs, 0.50),
		P95:  Quantile(xs, 0.95),
		P99:  Quantile(xs, 0.99),
		Max:  xs[len(xs)-1],
	}
}

// Quantile returns the p-quantile (0 <= p <= 1) of the sorted sample xs,
// interpolating linearly between neighbouring order statistics. It returns
// NaN for an empty sample.
func Quantile(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if p <= 0 {
		return float64(sorted[0])
	}
	if p >= 1 {
		return float64(sorted[n-1])
	}
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	frac := h - float64(lo)
	// In floating point: the difference of two int64s may overflow one.
	a, b := float64(sorted[lo]), float64(sorted[lo+1])
	return min(a+frac*(b-a), b)
}

// AddSat returns a+b, saturated at math.MaxInt64 or math.MinInt64
// instead of wrapping.
func AddSat(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// sum128 is a two's-complement 128-bit sum of int64s: it cannot overflow
// for fewer than 2^63 terms.
type sum128 struct{ hi, lo uint64 }

func (s *sum128) add(x int64) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, uint64(x), 0)
	ext := uint64(x >> 63) // the sign extension of x: 0 or all ones
	s.hi, _ = bits.Add64(s.hi, ext, c)
}

// float returns the sum as a float64, rounded.
func (s sum128) float() float64 {
	if v := int64(s.lo); int64(s.hi) == v>>63 {
		return float64(v) // fits: exact, where the sum below would cancel
	}
	return float64(int64(s.hi))*(1<<64) + float64(s.lo)
}

// saturated returns the sum, or math.MaxInt64 or math.MinInt64 when it
// does not fit an int64.
func (s sum128) saturated() int64 {
	v := int64(s.lo)
	if int64(s.hi) == v>>63 {
		return v
	}
	if int64(s.hi) < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// Median returns the median of xs without modifying it.
func Median(xs []int64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Quantile(s, 0.5)
}
