package history

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/framescope/framescope/internal/stats"
)

// stepWindow is how many commits on each side of a split its step is
// measured on: the commits just before against the commits just after
// (as Perfherder compares 12 and 12), so that an older step, or a step
// and its fix, leave a newer one its size.
const stepWindow = 12

// maxStep returns the largest |t| of a step over the splits of x (at
// least minBefore values before, one after): the difference of the means
// of the stepWindow values after and before, over its standard error
// with the noise's spread taken from the whole series (noise), so that t
// has near-normal tails however few values a side has; and the split
// (the first value after) and the step. s and q are room for prefix sums
// and differences.
func maxStep(x []float64, s, q []float64) (best float64, split int, diff float64) {
	n := len(x)
	if n-1 > noiseExact {
		return maxStepLong(x, s, clipOf(x, q))
	}
	s, q = s[:n+1], q[:n-1]
	s[0], s[1] = 0, x[0]
	for i := 1; i < n; i++ {
		s[i+1] = s[i] + x[i]
		q[i-1] = math.Abs(x[i] - x[i-1])
	}
	return bestSplit(s[:n+1], max(noise(q), noiseFloor))
}

// maxStepLong is maxStep over a series of more than noiseExact
// differences, its differences clipped at cut (clipOf(x)). It runs once
// a series for every ordering a check draws, so it reads the values once
// and keeps no differences: the noise's spread is the root mean square of
// the neighbours' differences, each at most cut, over sqrt 2.
func maxStepLong(x []float64, s []float64, cut float64) (float64, int, float64) {
	n := len(x)
	s = s[:n+1]
	s[0], s[1] = 0, x[0]
	ss := 0.0
	for i := 1; i < n; i++ {
		s[i+1] = s[i] + x[i]
		d := min(math.Abs(x[i]-x[i-1]), cut)
		ss += d * d
	}
	return bestSplit(s, spread(ss, n))
}

// maxStepsLong is maxStepLong of two series of one length in one order,
// a and b, in one pass: the two sums' additions, each waiting for the
// last, overlap.
func maxStepsLong(a, b []float64, order []int, sa, sb []float64, cutA, cutB float64) (ta, tb float64) {
	n := len(a)
	sa, sb = sa[:n+1], sb[:n+1]
	pa, pb := a[order[0]], b[order[0]]
	sa[0], sa[1], sb[0], sb[1] = 0, pa, 0, pb
	ssa, ssb := 0.0, 0.0
	for i := 1; i < n; i++ {
		c := order[i]
		va, vb := a[c], b[c]
		sa[i+1], sb[i+1] = sa[i]+va, sb[i]+vb
		da, db := min(math.Abs(va-pa), cutA), min(math.Abs(vb-pb), cutB)
		ssa, ssb = ssa+da*da, ssb+db*db
		pa, pb = va, vb
	}
	ta, _, _ = bestSplit(sa, spread(ssa, n))
	tb, _, _ = bestSplit(sb, spread(ssb, n))
	return ta, tb
}

// clipOf is where maxStepLong clips the differences of x: 4 interquartile
// ranges of its values. One difference is one of thousands there, so a
// step or two add little to the noise even unclipped; the clip keeps
// outliers from setting it. It is the same in every ordering of x, so
// it is found once a series, not in every ordering drawn. room is room
// for a copy of x.
func clipOf(x, room []float64) float64 {
	v := append(room[:0], x...)
	hi := stats.Select(v, len(v)*3/4)
	lo := stats.Select(v[:len(v)*3/4], len(v)/4)
	return 4 * (hi - lo)
}

// spread is the noise of a series of n values whose clipped differences'
// squares sum to ss.
func spread(ss float64, n int) float64 { return max(math.Sqrt(ss/float64(n-1)/2), noiseFloor) }

// bestSplit is maxStep's search, of the series of prefix sums s and
// noise sd. The splits with full windows on both sides, which share one
// standard error, are compared by their difference alone.
func bestSplit(s []float64, sd float64) (best float64, split int, diff float64) {
	n := len(s) - 1
	edge := func(k int) {
		b0, a1 := max(0, k-stepWindow), min(n, k+stepWindow)
		nb, na := float64(k-b0), float64(a1-k)
		d := (s[a1]-s[k])/na - (s[k]-s[b0])/nb
		if t := math.Abs(d) / (sd * math.Sqrt(1/nb+1/na)); t > best {
			best, split, diff = t, k, d
		}
	}
	k := minBefore
	for ; k < min(n, stepWindow); k++ {
		edge(k)
	}
	if top, at := fullWindows(s, k, n-stepWindow); at > 0 {
		d := (s[at+stepWindow]-s[at])/stepWindow - (s[at]-s[at-stepWindow])/stepWindow
		if t := top / stepWindow / (sd * math.Sqrt(2.0/stepWindow)); t > best {
			best, split, diff = t, at, d
		}
		k = n - stepWindow + 1
	}
	for ; k < n; k++ {
		edge(k)
	}
	return best, split, diff
}

// fullWindows is the largest |sum of stepWindow values after less the
// sum of stepWindow values before| over the splits from k to last, and
// the first split it is at; 0 where there are none.
func fullWindows(s []float64, k, last int) (top float64, at int) {
	if k > last {
		return 0, 0
	}
	top, at = -1, k
	for ; k <= last; k++ {
		if d := math.Abs(s[k+stepWindow] - 2*s[k] + s[k-stepWindow]); d > top {
			top, at = d, k
		}
	}
	return top, at
}

// noiseFloor is the least spread a series is taken to have (0.1%, in
// log): a GPU's timestamps tick in steps, and an H100's p50 of the same
// zone can be the same in every run (1.998 ms), where t would be
// infinite for any difference at all, under every ordering alike.
const noiseFloor = 1e-3

// noise is the spread of a series' values from the absolute differences
// of its neighbours, d: the root mean square of all but the largest
// eighth of them, over sqrt 2 (a difference of two values has twice
// their variance), so that a step or two, or an outlier, add little.
// It reorders d. (Its scale, a little low for normal noise, matters not:
// the permutations judge t as it is.)
func noise(d []float64) float64 {
	keep := len(d) - (len(d)+7)/8
	if keep < 1 {
		return 0
	}
	if keep < len(d) {
		stats.Select(d, keep)
	}
	ss := 0.0
	for _, v := range d[:keep] {
		ss += v * v
	}
	return math.Sqrt(ss / float64(keep) / 2)
}

// noiseExact is the most differences noise selects among exactly (a
// selection in every ordering drawn, at some 20 ns a value); a longer
// series' are clipped, in maxStepLong, in one pass.
const noiseExact = 128

// timeSteps tests every series for a step (a max-T over series and
// splits, calibrated by permuting the commits' order alike in every
// series), and, in each series with one, looks for a newer one in the
// commits after it, at the same level; it returns each such series'
// newest step.
func timeSteps(series []timeSeries, commits int, o CheckOptions) []Finding {
	if len(series) == 0 {
		return nil
	}
	s, q := make([]float64, commits+1), make([]float64, commits+1)
	obs := make([]float64, len(series))
	values := 0
	cut := make([]float64, len(series)) // where a long series' differences are clipped, in every ordering
	for j, ts := range series {
		values += len(ts.x)
		if len(ts.x)-1 > noiseExact {
			cut[j] = clipOf(ts.x, q)
			obs[j], _, _ = maxStepLong(ts.x, s, cut[j])
		} else {
			obs[j], _, _ = maxStep(ts.x, s, q)
		}
	}
	draws := drawsFor(values, o)
	// The largest |t| over every series, for each ordering of the commits:
	// in permChunks chunks of fixed seeds, so that a check gives the same
	// answer on any number of CPUs.
	exceed := make([]int, len(series))
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int, permChunks)
	for c := range permChunks {
		work <- c
	}
	close(work)
	for range min(runtime.GOMAXPROCS(0), permChunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				n := draws / permChunks
				if c < draws%permChunks {
					n++
				}
				ex := permuted(series, cut, commits, n, rand.New(rand.NewPCG(o.Seed, uint64(c))), obs)
				mu.Lock()
				for j := range ex {
					exceed[j] += ex[j]
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rng := newRand(o.Seed)
	var out []Finding
	found := 0
	for j := range series {
		if float64(1+exceed[j])/float64(draws+1) <= o.Alpha {
			found++
		}
	}
	for j, ts := range series {
		p := float64(1+exceed[j]) / float64(draws+1)
		if p > o.Alpha {
			continue
		}
		f, ok := newestStep(ts.x, 0, s, q, rng, o, found)
		if !ok {
			continue
		}
		f.Series, f.Commit = ts.key, ts.commit(f.Commit)
		f.P = p
		out = append(out, f)
	}
	return out
}

// permute is the series' values in the order of the commits in order,
// in room.
func (ts timeSeries) permute(order []int, room []float64) []float64 {
	if len(ts.x) == len(order) { // a value at every commit
		room = room[:len(order)]
		for i, c := range order {
			room[i] = ts.x[c]
		}
		return room
	}
	room = room[:0]
	for _, c := range order {
		if k := ts.idx[c]; k >= 0 {
			room = append(room, ts.x[k])
		}
	}
	return room
}

// permWork bounds a check's work in values over all its orderings (about
// 9 ns a value on one core): a check draws o.Permutations orderings where
// that fits, and fewer where not, but never fewer than reach its level
// (1/Alpha), so that a check of 10,000 commits of 1,000 series takes
// seconds, not minutes. A level found by fewer orderings is as exact (a
// Monte Carlo p-value, (1+b)/(draws+1), is one at any count) but coarser:
// at the fewest, only a step beyond every ordering's largest reaches it,
// and a step near the level is named less often.
var permWork = 1_000_000_000 // a variable for tests

// drawsFor is how many orderings a test of work values in all draws.
func drawsFor(work int, o CheckOptions) int {
	if work <= 0 || o.Permutations <= permWork/work {
		return o.Permutations
	}
	return min(o.Permutations, max(permWork/work, int(math.Ceil(1/o.Alpha))))
}

// permChunks is how many chunks a check's permutations come in.
const permChunks = 16

// permuted draws n orderings of the commits and counts, for each series,
// those whose largest |t| over every series is at least its own.
func permuted(series []timeSeries, cut []float64, commits, n int, rng *rand.Rand, obs []float64) []int {
	s, q := make([]float64, commits+1), make([]float64, commits+1)
	exceed := make([]int, len(series))
	xp := make([]float64, 0, commits)
	order := make([]int, commits)
	// Series of a value at every commit, and more than noiseExact, in
	// pairs (maxStepsLong); the others, one at a time.
	var long, alone []int
	for j, ts := range series {
		if len(ts.x) == commits && commits-1 > noiseExact {
			long = append(long, j)
		} else {
			alone = append(alone, j)
		}
	}
	if len(long)%2 == 1 {
		alone, long = append(alone, long[len(long)-1]), long[:len(long)-1]
	}
	step := func(j int) float64 { // series j's, in the order order
		x := series[j].permute(order, xp)
		if len(x)-1 > noiseExact {
			t, _, _ := maxStepLong(x, s, cut[j])
			return t
		}
		t, _, _ := maxStep(x, s, q)
		return t
	}
	for range n {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(commits, func(i, j int) { order[i], order[j] = order[j], order[i] })
		top := 0.0
		for i := 0; i < len(long); i += 2 {
			a, b := long[i], long[i+1]
			ta, tb := maxStepsLong(series[a].x, series[b].x, order, s, q, cut[a], cut[b])
			top = max(top, ta, tb)
		}
		for _, j := range alone {
			top = max(top, step(j))
		}
		for j := range series {
			if top >= obs[j] {
				exceed[j]++
			}
		}
	}
	return exceed
}

// newestStep finds the step of x[from:] and, while the values after it
// hold a step of their own at level Alpha (a permutation test of those
// values alone), that newer one. Commit is an index into x. A check
// makes this test in each of its series with a step, found of them:
// they share its bound on work (permWork).
func newestStep(x []float64, from int, s, q []float64, rng interface{ Shuffle(int, func(int, int)) }, o CheckOptions, found int) (Finding, bool) {
	_, k, d := maxStep(x[from:], s, q)
	if k == 0 {
		return Finding{}, false
	}
	f := Finding{Commit: from + k, Step: math.Exp(d) - 1}
	f.Regression = f.Step > o.MinEffect
	after := x[from+k:]
	if len(after) < minBefore+1 {
		return f, true
	}
	t, _, _ := maxStep(after, s, q)
	perm := append([]float64(nil), after...)
	exceed, draws := 0, drawsFor(len(after)*max(found, 1), o)
	long, cut := len(after)-1 > noiseExact, 0.0
	if long {
		cut = clipOf(after, q)
	}
	for range draws {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		var tp float64
		if long {
			tp, _, _ = maxStepLong(perm, s, cut)
		} else {
			tp, _, _ = maxStep(perm, s, q)
		}
		if tp >= t {
			exceed++
		}
	}
	if float64(1+exceed)/float64(draws+1) > o.Alpha {
		return f, true
	}
	if g, ok := newestStep(x, from+k, s, q, rng, o, found); ok {
		return g, true
	}
	return f, true
}
