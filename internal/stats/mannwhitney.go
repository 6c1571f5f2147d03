package stats

import (
	"errors"
	"math"
	"slices"
)

// RankTest is the result of a Mann-Whitney U test of "y tends to be
// larger than x".
type RankTest struct {
	U     float64 // U statistic of y: pairs (x, y) with y > x, ties counting 1/2
	Z     float64 // normal score of U, continuity-corrected (0 when Exact)
	P     float64 // one-sided p-value of the alternative "y is larger"
	Exact bool    // P comes from the exact null distribution
}

// ExactLimit is the largest len(x)*len(y) for which MannWhitney computes the
// exact null distribution of U when the samples have no ties.
const ExactLimit = 400

// ErrEmpty is returned when a sample is empty.
var ErrEmpty = errors.New("stats: rank test needs two non-empty samples")

// MannWhitney tests whether values of y tend to exceed values of x
// (one-sided). Without ties and with len(x)*len(y) <= ExactLimit the
// p-value is exact; otherwise it uses the normal approximation with the
// tie-corrected variance and a continuity correction of 1/2.
func MannWhitney(x, y []float64) (RankTest, error) {
	return mannWhitney(x, y, true)
}

func mannWhitney(x, y []float64, allowExact bool) (RankTest, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return RankTest{}, ErrEmpty
	}
	type obs struct {
		v   float64
		ofY bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, false})
	}
	for _, v := range y {
		all = append(all, obs{v, true})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	// Mid-ranks; tieTerm accumulates sum(t^3 - t) over tie groups.
	var ranksY, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].ofY {
				ranksY += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	fn1, fn2 := float64(n1), float64(n2)
	u := ranksY - fn2*(fn2+1)/2
	r := RankTest{U: u}
	if allowExact && !ties && n1*n2 <= ExactLimit {
		r.Exact = true
		r.P = exactUpper(n2, n1, int(math.Round(u)))
		return r, nil
	}
	n := fn1 + fn2
	mean := fn1 * fn2 / 2
	variance := fn1 * fn2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		// Every value is the same: no evidence either way.
		r.P = 1
		return r, nil
	}
	r.Z = (u - mean - 0.5) / math.Sqrt(variance)
	r.P = 0.5 * math.Erfc(r.Z/math.Sqrt2)
	return r, nil
}

// exactUpper returns P(U >= u) where U is the Mann-Whitney statistic of a
// sample of size m against one of size n with no ties, under the null.
func exactUpper(m, n, u int) float64 {
	// count[k] = number of arrangements with U = k, by the recurrence
	// f(m, n, k) = f(m-1, n, k-n) + f(m, n-1, k), built up over n for each m.
	maxU := m * n
	if u <= 0 {
		return 1
	}
	if u > maxU {
		return 0
	}
	// dp[i][j] as rolling rows over i (size of the first sample).
	// f(i, j, k): prev[j][k] holds f(i-1, j, k).
	prev := make([][]float64, n+1)
	cur := make([][]float64, n+1)
	for j := 0; j <= n; j++ {
		prev[j] = make([]float64, maxU+1)
		cur[j] = make([]float64, maxU+1)
		prev[j][0] = 1 // f(0, j, 0) = 1
	}
	for i := 1; i <= m; i++ {
		clear(cur[0])
		cur[0][0] = 1 // f(i, 0, 0) = 1
		for j := 1; j <= n; j++ {
			c := cur[j]
			for k := 0; k <= i*j; k++ {
				v := cur[j-1][k] // first sample's largest is below: U unchanged
				if k >= j {
					v += prev[j][k-j] // first sample's largest on top: beats all j
				}
				c[k] = v
			}
			for k := i*j + 1; k <= maxU; k++ {
				c[k] = 0
			}
		}
		prev, cur = cur, prev
	}
	dist := prev[n]
	var total, tail float64
	for k, c := range dist {
		total += c
		if k >= u {
			tail += c
		}
	}
	return tail / total
}
