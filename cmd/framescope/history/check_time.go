package history

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/framescope/framescope/internal/stats"
)

// timeSeries is a time series for Check: the commits that have a value,
// and each one's mean log value over its runs, centred.
type timeSeries struct {
	key SeriesKey
	at  []int // commit indices, ascending
	x   []float64
	idx []int32 // by commit: the place in at, or -1
}

func newTimeSeries(sr Series, commits int) (timeSeries, bool) {
	sum, n := make([]float64, commits), make([]int, commits)
	for _, v := range sr.Values {
		if v.Value > 0 {
			sum[v.Commit] += math.Log(v.Value)
			n[v.Commit]++
		}
	}
	ts := timeSeries{key: sr.Key, idx: make([]int32, commits)}
	mean := 0.0
	for c := range commits {
		ts.idx[c] = -1
		if n[c] > 0 {
			ts.idx[c] = int32(len(ts.at))
			ts.at = append(ts.at, c)
			ts.x = append(ts.x, sum[c]/float64(n[c]))
			mean += sum[c] / float64(n[c])
		}
	}
	if len(ts.x) < minBefore+1 {
		return ts, false
	}
	mean /= float64(len(ts.x))
	for i := range ts.x {
		ts.x[i] -= mean
	}
	return ts, true
}

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
	s, q = s[:n+1], q[:n-1]
	s[0] = 0
	for i, v := range x {
		s[i+1] = s[i] + v
	}
	for i := range q {
		q[i] = math.Abs(x[i+1] - x[i])
	}
	sd := max(noise(q), noiseFloor)
	for k := minBefore; k < n; k++ {
		b0, a1 := max(0, k-stepWindow), min(n, k+stepWindow)
		nb, na := float64(k-b0), float64(a1-k)
		d := (s[a1]-s[k])/na - (s[k]-s[b0])/nb
		t := math.Abs(d) / (sd * math.Sqrt(1/nb+1/na))
		if t > best {
			best, split, diff = t, k, d
		}
	}
	return best, split, diff
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
	for j, ts := range series {
		obs[j], _, _ = maxStep(ts.x, s, q)
	}
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
				n := o.Permutations / permChunks
				if c < o.Permutations%permChunks {
					n++
				}
				ex := permuted(series, commits, n, rand.New(rand.NewPCG(o.Seed, uint64(c))), obs)
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
	for j, ts := range series {
		p := float64(1+exceed[j]) / float64(o.Permutations+1)
		if p > o.Alpha {
			continue
		}
		f, ok := newestStep(ts.x, 0, s, q, rng, o)
		if !ok {
			continue
		}
		f.Series, f.Commit = ts.key, ts.at[f.Commit]
		f.P = p
		out = append(out, f)
	}
	return out
}

// permChunks is how many chunks a check's permutations come in.
const permChunks = 16

// permuted draws n orderings of the commits and counts, for each series,
// those whose largest |t| over every series is at least its own.
func permuted(series []timeSeries, commits, n int, rng *rand.Rand, obs []float64) []int {
	s, q := make([]float64, commits+1), make([]float64, commits+1)
	exceed := make([]int, len(series))
	xp := make([]float64, 0, commits)
	order := make([]int, commits)
	for range n {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(commits, func(i, j int) { order[i], order[j] = order[j], order[i] })
		top := 0.0
		for _, ts := range series {
			xp = xp[:0]
			for _, c := range order {
				if k := ts.idx[c]; k >= 0 {
					xp = append(xp, ts.x[k])
				}
			}
			t, _, _ := maxStep(xp, s, q)
			top = max(top, t)
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
// values alone), that newer one. Commit is an index into x.
func newestStep(x []float64, from int, s, q []float64, rng interface{ Shuffle(int, func(int, int)) }, o CheckOptions) (Finding, bool) {
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
	exceed := 0
	for range o.Permutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if tp, _, _ := maxStep(perm, s, q); tp >= t {
			exceed++
		}
	}
	if float64(1+exceed)/float64(o.Permutations+1) > o.Alpha {
		return f, true
	}
	if g, ok := newestStep(x, from+k, s, q, rng, o); ok {
		return g, true
	}
	return f, true
}
