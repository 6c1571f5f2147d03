package history

import "math"

// seriesAcc gathers one series' values, commit by commit, into what
// Check's tests read: for a time, the sum of the log values and their
// count; for a work count, the whole count its runs agree on, and
// whether they do. Check fills it from a History, CheckStore from a
// store's rows, so that a check of a long history holds no values.
type seriesAcc struct {
	key   SeriesKey
	work  bool // a work count: exact where the history shows it is
	sum   []float64
	n     []int32
	whole []uint64
	runs  []int32
	exact bool // every value so far whole, and the runs of each commit agreeing
}

// checked says whether Check reads the series of metric, and whether it
// is a work count.
func checked(metric string, o CheckOptions) (read, work bool) {
	switch {
	case metric == "p50" || o.Tails && metric == "p95":
		return true, false
	case metric == "p95":
		return false, false
	}
	return true, true
}

// reset makes a an empty gatherer of key's values over commits commits,
// reusing its room.
func (a *seriesAcc) reset(key SeriesKey, work bool, commits int) {
	a.key, a.work, a.exact = key, work, work
	a.sum, a.n = zeroed(a.sum, commits), zeroed(a.n, commits)
	if work {
		a.whole, a.runs = zeroed(a.whole, commits), zeroed(a.runs, commits)
	}
}

func zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// add takes one run's value at commit c.
func (a *seriesAcc) add(c int, value float64, whole uint64, isWhole bool) {
	if value > 0 {
		a.sum[c] += math.Log(value)
		a.n[c]++
	}
	if !a.exact {
		return
	}
	if !isWhole || a.runs[c] > 0 && a.whole[c] != whole {
		a.exact = false
		return
	}
	a.whole[c] = whole
	a.runs[c]++
}

// timeSeries is a time series for Check: the commits that have a value,
// and each one's mean log value over its runs, centred. at and idx are
// nil where every commit has a value.
type timeSeries struct {
	key SeriesKey
	at  []int // commit indices, ascending
	x   []float64
	idx []int32 // by commit: the place in at, or -1
}

// commit is the index of the commit of the series' i-th value.
func (ts timeSeries) commit(i int) int {
	if ts.at == nil {
		return i
	}
	return ts.at[i]
}

// timeSeries is a's series as a time series; ok is false where it has
// too few values to test.
func (a *seriesAcc) timeSeries() (ts timeSeries, ok bool) {
	have := 0
	for _, k := range a.n {
		if k > 0 {
			have++
		}
	}
	if have < minBefore+1 {
		return ts, false
	}
	ts = timeSeries{key: a.key, x: make([]float64, 0, have)}
	if have < len(a.n) {
		ts.at, ts.idx = make([]int, 0, have), make([]int32, len(a.n))
	}
	mean := 0.0
	for c, k := range a.n {
		if k == 0 {
			if ts.idx != nil {
				ts.idx[c] = -1
			}
			continue
		}
		if ts.idx != nil {
			ts.idx[c] = int32(len(ts.x))
			ts.at = append(ts.at, c)
		}
		v := a.sum[c] / float64(k)
		ts.x = append(ts.x, v)
		mean += v
	}
	mean /= float64(have)
	for i := range ts.x {
		ts.x[i] -= mean
	}
	return ts, true
}

// exactStep is a work series' newest change, where its count is exact:
// a whole count that every commit's runs agree on, and that the history
// shows to hold still (heldStill); ok says there is one.
func (a *seriesAcc) exactStep(o CheckOptions) (f Finding, exact, ok bool) {
	if !a.exact || !heldStill(a.whole, a.runs) {
		return f, false, false
	}
	prev := -1
	for c, n := range a.runs {
		if n == 0 {
			continue
		}
		if prev >= 0 && a.whole[c] != a.whole[prev] {
			f = Finding{Series: a.key, Commit: c, Exact: true, Step: ratio(a.whole[c], a.whole[prev]) - 1}
			ok = true
		}
		prev = c
	}
	f.Regression = ok && f.Step > o.MinEffect
	return f, true, ok
}

// gathered is what Check makes of the series it read: its time series,
// and the exact work series' steps.
type gathered struct {
	time     []timeSeries
	findings []Finding
	exact    int // exact work series
	noisy    int // work series not shown exact, among time
}

// take classifies a's series: an exact work count's step, or a time
// series to test.
func (g *gathered) take(a *seriesAcc, o CheckOptions) {
	if a.work {
		f, exact, ok := a.exactStep(o)
		if exact {
			g.exact++
			if ok {
				g.findings = append(g.findings, f)
			}
			return
		}
	}
	if ts, ok := a.timeSeries(); ok {
		g.time = append(g.time, ts)
		if a.work {
			g.noisy++
		}
	}
}
