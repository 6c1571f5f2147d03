package main

import (
	"math"

	"github.com/framescope/framescope/internal/stats"
)

// When the runs of a side disagree on a statistic's count, the runs
// decide, as they do for time: the run is the unit, and a permutation
// test over them (max-T over every such statistic of every zone, at the
// gate's level, which the time tests then share) says regressed or
// improved only beyond --min-effect and the statistic's measured
// tolerance, and unchanged only when the runs show the change is within
// --min-effect. Anything else is inconclusive: a tolerance widens "no
// change" to "inconclusive", never to "unchanged".

// workTests holds the work statistics the runs decide: per test, each
// run's value as log(max(count, 1)) (NaN where the run lacks it), BASE's
// runs first.
type workTests struct {
	nb, nn  int
	isNew   []bool
	values  [][]float64
	shifted [][]float64 // BASE moved up by --min-effect
	owner   [][2]int    // test -> zone index, work index
}

// workTestsOf gathers the statistics of r's zones that are not compared
// exactly.
func workTestsOf(r *diffReport, o diffOptions) *workTests {
	wt := &workTests{nb: len(r.base.Runs), nn: len(r.cur.Runs)}
	wt.isNew = make([]bool, wt.nb+wt.nn)
	for i := wt.nb; i < len(wt.isNew); i++ {
		wt.isNew[i] = true
	}
	m := math.Log1p(o.minEffect)
	for zi := range r.zones {
		for wi, w := range r.zones[zi].work {
			if !w.tested {
				continue
			}
			v, s := make([]float64, 0, wt.nb+wt.nn), make([]float64, 0, wt.nb+wt.nn)
			for _, x := range padNaN(w.base, wt.nb) {
				v, s = append(v, logCount(x)), append(s, logCount(x)+m)
			}
			for _, x := range padNaN(w.cur, wt.nn) {
				v, s = append(v, logCount(x)), append(s, logCount(x))
			}
			wt.values, wt.shifted = append(wt.values, v), append(wt.shifted, s)
			wt.owner = append(wt.owner, [2]int{zi, wi})
		}
	}
	return wt
}

// padNaN is v with NaN for the runs of a side that lack the value.
func padNaN(v []float64, n int) []float64 {
	out := append([]float64(nil), v...)
	for len(out) < n {
		out = append(out, math.NaN())
	}
	return out
}

// logCount is a count's log: counts are whole numbers, and one under 1
// counts as 1, as workSpread has it.
func logCount(x float64) float64 { return math.Log(math.Max(x, 1)) }

// decide runs the tests at level and gives each its outcome.
func (wt *workTests) decide(r *diffReport, level float64, o diffOptions) {
	if len(wt.values) == 0 {
		return
	}
	margin := math.Log1p(o.minEffect)
	var buf []float64
	shift := func(j int, x, y []float64) float64 { return stats.TrimmedShiftBuf(x, y, 0.25, &buf) }
	splits := splitBudget(len(wt.values), wt.nb, wt.nn)
	up, err := stats.MaxT(wt.values, wt.isNew, func(j int, x, y []float64) float64 { return shift(j, x, y) - margin }, splits)
	if err != nil {
		panic(err) // both sides have runs: loadSide refuses empty ones
	}
	eq, err := stats.MaxT(wt.shifted, wt.isNew, shift, splits)
	if err != nil {
		panic(err)
	}
	canTest := up.Splits > 0 && 1/float64(up.Splits) <= level
	for j, ow := range wt.owner {
		w := &r.zones[ow[0]].work[ow[1]]
		w.pRegressed, w.pUnchanged = up.Upper[j], eq.Lower[j]
		w.outcome = decideWorkTest(*w, canTest, level, o)
	}
}

// decideWorkTest is a tested statistic's outcome at level; canTest says
// whether the runs let a test reach it at all.
func decideWorkTest(w workDiff, canTest bool, level float64, o diffOptions) outcome {
	limit := max(o.minEffect, w.tolerance)
	switch {
	case !canTest:
		return inconclusive
	case w.pRegressed <= level && w.change > limit:
		return regressed
	case w.pUnchanged <= level && w.change < -limit:
		return improved
	case w.pUnchanged <= level && math.Abs(w.change) <= o.minEffect && w.tolerance == 0:
		return unchanged
	}
	return inconclusive
}
