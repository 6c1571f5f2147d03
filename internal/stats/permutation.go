package stats

import (
	"errors"
	"math"
	"math/rand/v2"
)

// MaxEnumerate is the largest number of ways to split the runs into two
// groups that [MaxT] enumerates, and the most it draws at random beyond.
const MaxEnumerate = 20000

// Statistic computes test j's statistic from its values in the two groups
// of one split of the runs; larger means "y is larger". It returns NaN
// when the split leaves test j without data on a side.
type Statistic func(j int, x, y []float64) float64

// MaxTResult is what [MaxT] finds for each test.
type MaxTResult struct {
	// Observed is each test's statistic on the real split.
	Observed []float64
	// Upper is each test's p-value for "y is larger", adjusted for every
	// test at once (single-step max-T): the share of splits whose largest
	// statistic over all tests reaches this test's observed one.
	Upper []float64
	// Lower is each test's own p-value for "y is smaller", not adjusted:
	// the share of splits whose statistic for this test is at most the
	// observed one.
	Lower []float64
	// Splits is how many splits were counted, the real one included;
	// 1/Splits is the smallest p-value possible.
	Splits int
	// Exact says every split was enumerated (else they were drawn).
	Exact bool
}

// ErrNoRuns is returned by [MaxT] when a group is empty.
var ErrNoRuns = errors.New("stats: a permutation test needs at least one run on each side")

// MaxT is a permutation test over runs for many tests at once, after
// Westfall and Young (1993, "Resampling-Based Multiple Testing", the
// single-step max-T procedure). values[j][r] is test j's value in run r
// (NaN where run r lacks it); isY[r] says run r is in the second group.
// Under the null hypothesis that the runs are exchangeable between the
// groups, every way to split them into groups of the same sizes is as
// likely as the real one, so the share of splits whose statistic reaches
// the real one's is a p-value; comparing each test with the largest
// statistic of every split over all tests holds the chance of any false
// rejection at the level, whatever the dependence between the tests.
//
// Splits are enumerated when there are at most splits (at most
// [MaxEnumerate]; less than 1 means MaxEnumerate); otherwise splits-1 are
// drawn at random (with a fixed seed, so the answer is reproducible)
// beside the real one. The work is splits times the tests times the cost
// of stat.
func MaxT(values [][]float64, isY []bool, stat Statistic, splits int) (MaxTResult, error) {
	if splits < 1 || splits > MaxEnumerate {
		splits = MaxEnumerate
	}
	n := len(isY)
	ny := 0
	for _, b := range isY {
		if b {
			ny++
		}
	}
	if ny == 0 || ny == n {
		return MaxTResult{}, ErrNoRuns
	}
	m := len(values)
	r := MaxTResult{Observed: make([]float64, m), Upper: make([]float64, m), Lower: make([]float64, m)}
	x := make([]float64, 0, n)
	y := make([]float64, 0, n)
	eval := func(j int, inY []bool) float64 {
		x, y = x[:0], y[:0]
		for i, v := range values[j] {
			if math.IsNaN(v) {
				continue
			}
			if inY[i] {
				y = append(y, v)
			} else {
				x = append(x, v)
			}
		}
		if len(x) == 0 || len(y) == 0 {
			return math.NaN()
		}
		return stat(j, x, y)
	}
	for j := range values {
		r.Observed[j] = eval(j, isY)
	}
	upper := make([]int, m)
	lower := make([]int, m)
	visit := func(inY []bool) {
		top := math.Inf(-1)
		for j := range values {
			t := eval(j, inY)
			if math.IsNaN(t) {
				continue
			}
			top = max(top, t)
			if t <= r.Observed[j] {
				lower[j]++
			}
		}
		for j, o := range r.Observed {
			if top >= o {
				upper[j]++
			}
		}
		r.Splits++
	}
	total := Binomial(n, ny)
	inY := make([]bool, n)
	if total <= splits {
		r.Exact = true
		combinations(n, ny, func(idx []int) {
			clear(inY)
			for _, i := range idx {
				inY[i] = true
			}
			visit(inY)
		})
	} else {
		visit(isY)
		rng := rand.New(rand.NewPCG(0x6672616d, 0x73636f70))
		perm := make([]int, n)
		for range splits - 1 {
			for i := range perm {
				perm[i] = i
			}
			rng.Shuffle(n, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
			clear(inY)
			for _, i := range perm[:ny] {
				inY[i] = true
			}
			visit(inY)
		}
	}
	for j, o := range r.Observed {
		if math.IsNaN(o) {
			r.Upper[j], r.Lower[j] = math.NaN(), math.NaN()
			continue
		}
		r.Upper[j] = float64(upper[j]) / float64(r.Splits)
		r.Lower[j] = float64(lower[j]) / float64(r.Splits)
	}
	return r, nil
}

// combinations calls f with every k-subset of 0..n-1 in lexicographic
// order; f must not keep the slice.
func combinations(n, k int, f func([]int)) {
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for {
		f(idx)
		i := k - 1
		for i >= 0 && idx[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// Binomial returns the binomial coefficient C(n, k), saturating at
// math.MaxInt64 / 2 so that callers can compare it with a limit.
func Binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	const limit = math.MaxInt64 / 2
	c := 1
	for i := 1; i <= k; i++ {
		// c*(n-k+i)/i is exact at every step: c is C(n-k+i-1, i-1).
		if c > limit/(n-k+i) {
			return limit
		}
		c = c * (n - k + i) / i
	}
	return c
}
