package stats

import (
	"math"
	"slices"
)

// Summary describes a sample of durations in nanoseconds.
type Summary struct {
	Count int
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
	var total int64
	for _, x := range xs {
		total += x
	}
	return Summary{
		Count: len(xs),
		Total: total,
		Mean:  float64(total) / float64(len(xs)),
		Min:   xs[0],
		P50:   Quantile(xs, 0.50),
		P95:   Quantile(xs, 0.95),
		P99:   Quantile(xs, 0.99),
		Max:   xs[len(xs)-1],
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
	return float64(sorted[lo]) + frac*float64(sorted[lo+1]-sorted[lo])
}

// Median returns the median of xs without modifying it.
func Median(xs []int64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Quantile(s, 0.5)
}
