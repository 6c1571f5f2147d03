package main

import (
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
)

// The work gate (issue 23): GPU zones that carry pipeline statistics
// (timeline.Work) have them compared beside their times. The package doc
// says how; this file holds the rule and its numbers.

// diffWorkTolerance is, for each pipeline statistic (by bit position), the
// relative change that identical runs can show. 0 is exact: where the
// runs of each side agree, any change beyond --min-effect counts, with
// one run a side. A statistic with a tolerance is always left to the runs
// (diff_work_runs.go), and a change within it is never a regression.
//
// All 0, as measured: over 10 identical runs of the demo
// (-pipeline-stats -load 2) on lavapipe (60 frames) and on an NVIDIA H100
// (300 frames), every statistic's mean per frame was the same in every
// run (docs/measurements/work-determinism-*.json).
//
// Until issue 38 a side's spread widened the tolerance (3 times the
// largest deviation of a run from its side's median), and a change within
// it was "unchanged": BASE 1000, 1000, 1000, 1000, 1100 against NEW 1250
// in five runs, every NEW run above every BASE run, was unchanged.
var diffWorkTolerance = [timeline.NumPipelineStats]float64{}

// runWork is one zone's work in one run. A run's value of a statistic is
// its mean count per occurrence of the zone, over the occurrences that
// counted it: for a zone that runs once a frame, its count per frame.
type runWork struct {
	Stats timeline.PipelineStats // statistics at least one occurrence counted
	// N[i] is how many occurrences counted statistic i, Mean[i] their
	// mean count.
	N    [timeline.NumPipelineStats]int
	Mean [timeline.NumPipelineStats]float64
	// Whole[i] is the mean as an integer where it is one (Mean is
	// float64, exact only to 2^53): IsWhole says where. Exact comparisons,
	// JSON and benchfmt use it.
	Whole   [timeline.NumPipelineStats]uint64
	IsWhole [timeline.NumPipelineStats]bool
	// Missing counts the occurrences with no counts, by reason
	// (timeline.WorkMissing; the last, a reason this build does not know).
	Missing [timeline.NumWorkMissing + 1]int
}

// whole returns statistic i's value in the run as an integer, where the
// run has it and it is one.
func (w *runWork) whole(i int) (uint64, bool) {
	if w == nil || !w.Stats.Has(i) || !w.IsWhole[i] {
		return 0, false
	}
	return w.Whole[i], true
}

// value returns statistic i's value in the run, and whether the run has it.
func (w *runWork) value(i int) (float64, bool) {
	if w == nil || !w.Stats.Has(i) {
		return 0, false
	}
	return w.Mean[i], true
}

// runWorkSum adds up one zone's counts in one run: stats' accumulator,
// its sums in 128 bits so that no sum of uint64 counts overflows.
type runWorkSum = workAcc

// result is the run's work, or nil when a is.
func (a *workAcc) result() *runWork {
	if a == nil {
		return nil
	}
	var w runWork
	for i, n := range a.n {
		switch {
		case n == 0:
			continue
		case a.min[i] == a.max[i]:
			w.Mean[i] = float64(a.min[i]) // exact, whatever n
			w.Whole[i], w.IsWhole[i] = a.min[i], true
		default:
			w.Mean[i] = (float64(a.sum[i][0])*0x1p64 + float64(a.sum[i][1])) / float64(n)
			if a.sum[i][0] < n { // the quotient fits 64 bits
				q, r := bits.Div64(a.sum[i][0], a.sum[i][1], n)
				w.Whole[i], w.IsWhole[i] = q, r == 0
			}
		}
		w.N[i] = int(n)
		w.Stats |= 1 << i
	}
	if a.missing != nil {
		for k, m := range workReasons {
			w.Missing[m] = int(a.missing[k])
		}
		w.Missing[timeline.NumWorkMissing] = int(a.missing[len(workReasons)])
	}
	return &w
}

// workDiff is the comparison of one statistic of one zone over the runs.
type workDiff struct {
	stat      int
	base, cur []float64 // each run's value, of the runs that have it
	// baseWhole and curWhole are the same as integers, where every run's
	// value is one (whole): exact comparisons and outputs use them.
	baseWhole, curWhole []uint64
	whole               bool
	// medBase and medNew are the medians over the runs; change is
	// medNew/medBase-1.
	medBase, medNew, change float64
	spread                  float64 // the larger workSpread of the two sides
	tolerance               float64 // the statistic's measured tolerance (diffWorkTolerance)
	// tested: the runs decide (diff_work_runs.go), a side's runs
	// disagreeing or the tolerance not 0; pRegressed and pUnchanged are
	// their test's p-values.
	tested                 bool
	pRegressed, pUnchanged float64
	outcome                outcome // unchanged, improved, inconclusive or regressed
	// only is "BASE" or "NEW" when only that side counted the statistic
	// (no outcome then); missing says why the other side has no counts.
	only, missing string
}

// exact reports whether the statistic is compared exactly: its table
// tolerance is 0 and no run of either side differs from its side's.
func (w workDiff) exact() bool { return w.only == "" && !w.tested }

// compareWork compares the work of zone k, on both sides: every
// statistic counted on either side, in bit order.
func compareWork(k zoneKey, base, cur side, o diffOptions) []workDiff {
	var out []workDiff
	for i := range timeline.NumPipelineStats {
		b, n := sideValues(k, base, i, (*runWork).value), sideValues(k, cur, i, (*runWork).value)
		bw, nw := sideValues(k, base, i, (*runWork).whole), sideValues(k, cur, i, (*runWork).whole)
		var w workDiff
		switch {
		case len(b) == 0 && len(n) == 0:
			continue
		case len(n) == 0:
			w = oneSidedWork(i, b, nil, "BASE", whyNoWork(k, cur))
		case len(b) == 0:
			w = oneSidedWork(i, nil, n, "NEW", whyNoWork(k, base))
		default:
			w = decideWork(i, b, n, bw, nw, o)
		}
		if len(bw) == len(b) && len(nw) == len(n) {
			w.baseWhole, w.curWhole, w.whole = bw, nw, true
		}
		out = append(out, w)
	}
	return out
}

// sideValues lists what get says of statistic i of zone k, one per run of
// s that has it: its values ((*runWork).value) or its integers (whole).
func sideValues[T any](k zoneKey, s side, i int, get func(*runWork, int) (T, bool)) []T {
	var v []T
	for _, ru := range s.Runs {
		if x, ok := get(ru.Zones[k].Work, i); ok {
			v = append(v, x)
		}
	}
	return v
}

// decideWork compares statistic i's values of the two sides. Where every
// run of each side agrees and the statistic's tolerance is 0, exactly: a
// change beyond --min-effect regresses (up) or improves (down), one run a
// side is enough. Otherwise the runs decide, with the other statistics
// that need them (diff_work_runs.go): tested, inconclusive until then.
func decideWork(i int, b, n []float64, bw, nw []uint64, o diffOptions) workDiff {
	w := workDiff{stat: i, base: b, cur: n, medBase: stats.MedianFloat(b), medNew: stats.MedianFloat(n),
		pRegressed: math.NaN(), pUnchanged: math.NaN()}
	w.change = relChange(w.medBase, w.medNew)
	w.spread = max(workSpread(b), workSpread(n))
	whole := len(bw) == len(b) && len(nw) == len(n)
	if whole && w.spread == 0 && (!allSame(bw) || !allSame(nw)) {
		// Runs that float64 cannot tell apart (past 2^53) still differ.
		w.spread = math.SmallestNonzeroFloat64
	}
	w.tolerance = diffWorkTolerance[i]
	if w.spread > 0 || w.tolerance > 0 {
		w.tested, w.outcome = true, inconclusive
		return w
	}
	up, down := w.change > o.minEffect, w.change < -o.minEffect
	if whole { // in integers: float64 tells 2^53 from 2^53+1 not
		b, n := bw[0], nw[0]
		up = n > b && exceedsBy(n, b, b, o.minEffect)
		down = b > n && exceedsBy(b, n, b, o.minEffect)
	}
	switch {
	case up:
		w.outcome = regressed
	case down:
		w.outcome = improved
	}
	return w
}

// allSame reports whether every value of v is the first.
func allSame(v []uint64) bool {
	return !slices.ContainsFunc(v, func(x uint64) bool { return x != v[0] })
}

// exceedsBy reports whether hi-lo > m*of, computed exactly (m is a
// float64, so exact as a binary fraction).
func exceedsBy(hi, lo, of uint64, m float64) bool {
	d := new(big.Float).SetPrec(256).SetUint64(hi - lo)
	lim := new(big.Float).SetPrec(256).SetUint64(of)
	lim.Mul(lim, new(big.Float).SetPrec(256).SetFloat64(m))
	return d.Cmp(lim) > 0
}

// oneSidedWork is statistic i counted on one side only: the other's
// counts are missing, so nothing says it did not change (inconclusive).
func oneSidedWork(i int, b, n []float64, only, missing string) workDiff {
	return workDiff{stat: i, base: b, cur: n, medBase: stats.MedianFloat(b), medNew: stats.MedianFloat(n),
		change: math.NaN(), spread: math.NaN(), tolerance: math.NaN(), pRegressed: math.NaN(), pUnchanged: math.NaN(),
		only: only, missing: missing, outcome: inconclusive}
}

// workSpread is how much the runs of one side disagree: the largest
// relative deviation of a run's value from the side's median (counts
// are whole numbers, so a median under 1 counts as 1); 0 with fewer than
// two runs, which show no spread.
func workSpread(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := stats.MedianFloat(v)
	var s float64
	for _, x := range v {
		s = max(s, math.Abs(x-m)/math.Max(math.Abs(m), 1))
	}
	return s
}

// whyNoWork says why zone k has no counts of a statistic on side s:
// the reasons its occurrences gave, or "not counted" when they carried
// none (a context that counts nothing, or other statistics).
func whyNoWork(k zoneKey, s side) string {
	var n [timeline.NumWorkMissing + 1]int
	for _, ru := range s.Runs {
		if w := ru.Zones[k].Work; w != nil {
			for r, c := range w.Missing {
				n[r] += c
			}
		}
	}
	var why []string
	for r, c := range n {
		if c > 0 {
			why = append(why, timeline.WorkMissing(r).String())
		}
	}
	if len(why) == 0 {
		return "not counted"
	}
	return strings.Join(why, ", ")
}

// workOutcome is the worst outcome of a zone's statistics: regressed,
// inconclusive (one counted on one side only among them), improved or
// unchanged.
func (d zoneDiff) workOutcome() outcome {
	o := unchanged
	for _, w := range d.work {
		o = max(o, w.outcome)
	}
	return o
}

// diffWorkCounts tallies the statistics compared over every zone;
// inconclusive counts the tested ones the runs could not decide, not
// those counted on one side only (oneSided).
type diffWorkCounts struct {
	regressed, improved, unchanged, inconclusive, exact, oneSided, zones int
}

func (r diffReport) workCounts() diffWorkCounts {
	var c diffWorkCounts
	for _, d := range r.zones {
		if len(d.work) > 0 {
			c.zones++
		}
		for _, w := range d.work {
			switch {
			case w.only != "":
				c.oneSided++
				continue
			case w.outcome == regressed:
				c.regressed++
			case w.outcome == improved:
				c.improved++
			case w.outcome == inconclusive:
				c.inconclusive++
			default:
				c.unchanged++
			}
			if w.exact() {
				c.exact++
			}
		}
	}
	return c
}

// hasWork reports whether any zone on both sides carried work.
func (r diffReport) hasWork() bool {
	for _, d := range r.zones {
		if len(d.work) > 0 {
			return true
		}
	}
	return false
}
