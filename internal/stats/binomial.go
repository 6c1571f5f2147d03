package stats

import "math"

// BinomialUpper returns the smallest k such that P(X > k) <= tail for X
// binomial with n trials of probability p: a count of independent events
// above k is evidence, at level tail, that their probability exceeds p.
func BinomialUpper(n int, p, tail float64) int {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return n
	}
	// Accumulate the pmf from 0 up; P(X > k) = 1 - cdf(k).
	lp, lq := math.Log(p), math.Log1p(-p)
	cdf := 0.0
	for k := 0; k <= n; k++ {
		lgN, _ := math.Lgamma(float64(n + 1))
		lgK, _ := math.Lgamma(float64(k + 1))
		lgNK, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lgN - lgK - lgNK + float64(k)*lp + float64(n-k)*lq)
		if 1-cdf <= tail {
			return k
		}
	}
	return n
}
