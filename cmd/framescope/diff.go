package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/framescope/framescope/internal/stats"
)

func init() {
	register(command{
		name:    "diff",
		summary: "compare runs zone by zone, time and work: exit 0 unchanged, 1 regressed, 3 inconclusive",
		run:     runDiff,
	})
}

// Exit codes of `framescope diff`.
const (
	exitUnchanged    = 0
	exitRegressed    = 1
	exitBadInput     = 2
	exitInconclusive = 3
)

// Defaults and limits of the flags of `framescope diff`; the package doc
// says where the defaults come from.
const (
	defaultMinEffect = 0.03
	defaultFloor     = 10 * time.Microsecond
	defaultAlpha     = 0.05
	maxMinEffect     = 10.0 // +1000%
	// defaultOneRunLimit is the change that too few runs must show, every
	// frame apart, to call a regression: +200%, above the largest gap
	// between identical runs measured (+163%, lavapipe with a busy
	// neighbour).
	defaultOneRunLimit = 2.0
	maxFloor           = time.Hour
	maxAlpha           = 0.5
	maxBudget          = 24 * time.Hour
	maxBudgets         = 1000
	maxZoneArg         = 1024
)

// diffOptions are the rules of `framescope diff`.
type diffOptions struct {
	minEffect float64       // relative change below which nothing is a regression
	floor     time.Duration // absolute change below which nothing is a regression
	alpha     float64       // chance of any false "regressed" over all zones
	budgets   []budget
	driver    string  // shown in reports; traces do not record it
	gateTails bool    // p95 regressions fail the gate too (alpha split in two)
	oneRun    float64 // with too few runs: the smallest change that can regress
}

// budget is an absolute limit: the zone's p95 in NEW (the median over the
// runs of each run's p95) must not exceed max.
type budget struct {
	zone string // a name, kind:name ("gpu:shadow") or kind:track/name
	max  time.Duration
}

func (b budget) matches(k zoneKey) bool {
	return b.zone == k.Name || b.zone == k.Kind+":"+k.Name || b.zone == k.String()
}

// budgetValue implements flag.Value for repeated --budget ZONE=DURATION.
type budgetValue struct{ list *[]budget }

func (v budgetValue) String() string { return "" }

func (v budgetValue) Set(s string) error {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return errors.New("want ZONE=DURATION, e.g. shadow=2ms")
	}
	if i > maxZoneArg {
		return fmt.Errorf("zone name of %d bytes: the limit is %d", i, maxZoneArg)
	}
	if len(*v.list) >= maxBudgets {
		return fmt.Errorf("more than %d budgets", maxBudgets)
	}
	d, err := time.ParseDuration(s[i+1:])
	if err != nil || d <= 0 || d > maxBudget {
		return fmt.Errorf("bad duration %q: want a positive duration up to %v, such as 1.5ms", termText(s[i+1:]), maxBudget)
	}
	*v.list = append(*v.list, budget{zone: s[:i], max: d})
	return nil
}

// percentValue implements flag.Value for a fraction given as 0.05 or 5%,
// from 0 to max.
type percentValue struct {
	f   *float64
	max float64
}

func (v percentValue) String() string {
	if v.f == nil {
		return ""
	}
	return strconv.FormatFloat(*v.f*100, 'g', -1, 64) + "%"
}

func (v percentValue) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		f /= 100
	}
	if err != nil || !(f >= 0 && f <= v.max) {
		return fmt.Errorf("bad fraction %q: want 0%% to %g%% (or 0 to %g)", termText(s), v.max*100, v.max)
	}
	*v.f = f
	return nil
}

// durationValue implements flag.Value for a duration from 0 to max.
type durationValue struct {
	d   *time.Duration
	max time.Duration
}

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > v.max {
		return fmt.Errorf("bad duration %q: want 0 to %v, such as 2us", termText(s), v.max)
	}
	*v.d = d
	return nil
}

// alphaValue implements flag.Value for the false-alarm level.
type alphaValue struct{ f *float64 }

func (v alphaValue) String() string {
	if v.f == nil {
		return ""
	}
	return strconv.FormatFloat(*v.f, 'g', -1, 64)
}

func (v alphaValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= maxAlpha) {
		return fmt.Errorf("bad level %q: want more than 0 and at most %g", termText(s), maxAlpha)
	}
	*v.f = f
	return nil
}

// outcome is the answer for one statistic, one zone or the whole diff,
// from best to worst.
type outcome int

const (
	unchanged outcome = iota
	improved
	inconclusive
	regressed
)

func (v outcome) String() string {
	return [...]string{"unchanged", "improved", "inconclusive", "regressed"}[v]
}

// statNames are the per-run statistics compared, in the order of
// zoneDiff.tests.
var statNames = [2]string{"p50", "p95"}

// testDiff is the comparison of one statistic of one zone over the runs.
type testDiff struct {
	base, cur []float64 // each run's value, ns
	// medBase and medNew are the medians over the runs; change is
	// medNew/medBase-1.
	medBase, medNew, change float64
	pRegressed              float64 // adjusted p-value of "more than the minimum effect slower"
	pUnchanged              float64 // p-value of "less than the minimum effect slower"
	outcome                 outcome
	runsNeeded              int // runs a side an inconclusive answer would need; 0 when unknown or not applicable
}

// zoneDiff is the comparison of one zone.
type zoneDiff struct {
	key                zoneKey
	runsBase, runsNew  int // runs that have the zone
	tests              [2]testDiff
	outcome            outcome
	note               string // "new", "gone"
	separated          bool   // with too few runs to test: every NEW frame slower than every BASE frame by more than the minimum effect
	budget             *budget
	p95New             float64
	overBudget         bool
	fewRuns            bool       // too few runs for the test to reach alpha
	work               []workDiff // each statistic counted on either side (diff_work.go)
	minBase, maxBase   int64
	minNew, maxNew     int64
	framesB, framesNew int
}

type diffReport struct {
	base, cur   side
	zones       []zoneDiff
	outcome     outcome
	regressions int
	overBudget  int
	unchanged   int
	improved    int
	undecided   int
	runsNeeded  int
	splits      int
	exact       bool
	fewRuns     bool
	unmatched   []string // budgets naming no zone of NEW
	common      int      // zones on both sides, the frames' series among them: the tests
	inCommon    int      // zones of GPU or CPU work on both sides: where none, the sides are not of one program
}

// compare compares every zone of two sides; the package doc says how.
func compare(base, cur side, o diffOptions) diffReport {
	r := diffReport{base: base, cur: cur}
	ts := newTestSet(len(base.Runs), len(cur.Runs))
	for _, k := range zoneKeysOf(base, cur) {
		d := gatherZone(k, base, cur)
		if d.note == "" {
			r.common++
			if k.Kind != frameKind {
				r.inCommon++
			}
			ts.add(len(r.zones), d, base, cur, o)
			d.work = compareWork(k, base, cur, o)
		}
		r.zones = append(r.zones, d)
	}
	// The work statistics the runs decide share the gate's level with
	// the time tests (diff_work_runs.go): half each, when there are any.
	wt := workTestsOf(&r, o)
	to := o
	if len(wt.values) > 0 {
		to.alpha /= 2
	}
	wt.decide(&r, to.alpha, o)
	canTest := ts.decide(&r, to)
	for i := range r.zones {
		r.zones[i].decide(canTest, to)
	}
	r.applyBudgets(o)
	r.tally()
	slices.SortStableFunc(r.zones, bySeverity)
	return r
}

// zoneKeysOf lists every zone of either side, in compareKeys order.
func zoneKeysOf(base, cur side) []zoneKey {
	all := map[zoneKey]bool{}
	for _, s := range []side{base, cur} {
		for _, ru := range s.Runs {
			for k := range ru.Zones {
				all[k] = true
			}
		}
	}
	keys := make([]zoneKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// gatherZone collects zone k's per-run values and their medians, and
// notes a zone on one side only as new or gone.
func gatherZone(k zoneKey, base, cur side) zoneDiff {
	d := zoneDiff{key: k, minBase: math.MaxInt64, minNew: math.MaxInt64, p95New: math.NaN()}
	for ti := range d.tests {
		d.tests[ti] = testDiff{medBase: math.NaN(), medNew: math.NaN(), change: math.NaN(), pRegressed: math.NaN(), pUnchanged: math.NaN()}
	}
	for _, ru := range base.Runs {
		if z, ok := ru.Zones[k]; ok {
			d.runsBase++
			d.tests[0].base = append(d.tests[0].base, z.P50)
			d.tests[1].base = append(d.tests[1].base, z.P95)
			d.minBase, d.maxBase, d.framesB = min(d.minBase, z.Min), max(d.maxBase, z.Max), d.framesB+z.N
		}
	}
	for _, ru := range cur.Runs {
		if z, ok := ru.Zones[k]; ok {
			d.runsNew++
			d.tests[0].cur = append(d.tests[0].cur, z.P50)
			d.tests[1].cur = append(d.tests[1].cur, z.P95)
			d.minNew, d.maxNew, d.framesNew = min(d.minNew, z.Min), max(d.maxNew, z.Max), d.framesNew+z.N
		}
	}
	for ti := range d.tests {
		t := &d.tests[ti]
		t.medBase, t.medNew = stats.MedianFloat(t.base), stats.MedianFloat(t.cur)
		t.change = relChange(t.medBase, t.medNew)
	}
	d.p95New = d.tests[1].medNew
	switch {
	case d.runsBase == 0:
		d.note = "new"
	case d.runsNew == 0:
		d.note = "gone"
	}
	return d
}

// testSet holds the time tests: two per zone on both sides (median and
// p95), each a value per run in log ns (NaN where the run lacks the
// zone), NEW's runs after BASE's.
type testSet struct {
	nb, nn        int
	isNew         []bool      // per run: NEW's runs follow BASE's
	values        [][]float64 // per test, per run
	shiftedValues [][]float64 // the same, BASE shifted up by the minimum effect and the floor
	prec, margin  []float64   // per test: the frames' precision, log(shift(median))-log(median)
	owner         []int       // test -> 2*(index in diffReport.zones)+statistic
	pUp, pEq      []float64   // per test: adjusted p of regressed, p of unchanged
	splits        int         // splits of the runs each family counted
	exact         bool        // whether they are all the splits there are
}

func newTestSet(nb, nn int) *testSet {
	ts := &testSet{nb: nb, nn: nn, isNew: make([]bool, nb+nn)}
	for i := nb; i < nb+nn; i++ {
		ts.isNew[i] = true
	}
	return ts
}

// add adds the two tests of zone d, the zi-th of the report.
func (ts *testSet) add(zi int, d zoneDiff, base, cur side, o diffOptions) {
	nb, nn, k := ts.nb, ts.nn, d.key
	for ti := range statNames {
		raw := make([]float64, nb+nn)
		shifted := make([]float64, nb+nn)
		var se2 float64
		var nse int
		for i, ru := range base.Runs {
			raw[i], shifted[i] = math.NaN(), math.NaN()
			if z, ok := ru.Zones[k]; ok {
				raw[i] = logNs(statOf(z, ti))
				shifted[i] = logNs(o.shift(statOf(z, ti)))
				se2 += sq(seOf(z, ti))
				nse++
			}
		}
		for i, ru := range cur.Runs {
			raw[nb+i], shifted[nb+i] = math.NaN(), math.NaN()
			if z, ok := ru.Zones[k]; ok {
				raw[nb+i] = logNs(statOf(z, ti))
				shifted[nb+i] = raw[nb+i]
				se2 += sq(seOf(z, ti))
				nse++
			}
		}
		m := d.tests[ti].medBase
		ts.values = append(ts.values, raw)
		ts.shiftedValues = append(ts.shiftedValues, shifted)
		ts.prec = append(ts.prec, math.Sqrt(se2/float64(nse)))
		ts.margin = append(ts.margin, logNs(o.shift(m))-logNs(m))
		ts.owner = append(ts.owner, zi*2+ti)
	}
}

// levels are the false-alarm levels of the two families: medians and
// tails are each under their own max-T; with --tails both gate, at
// alpha/2 each.
func (o diffOptions) levels() [2]float64 {
	if o.gateTails {
		return [2]float64{o.alpha / 2, o.alpha / 2}
	}
	return [2]float64{o.alpha, o.alpha}
}

// decide runs both families of tests and gives each test its outcome;
// it reports whether the runs are enough for a test to reach alpha.
func (ts *testSet) decide(r *diffReport, o diffOptions) bool {
	ts.pUp = make([]float64, len(ts.values))
	ts.pEq = make([]float64, len(ts.values))
	for ti := range statNames {
		ts.family(ti)
	}
	levels := o.levels()
	r.splits, r.exact = ts.splits, ts.exact
	// A test can reject only if one split in 1/alpha is enough.
	canTest := ts.splits > 0 && 1/float64(ts.splits) <= levels[0]
	r.fewRuns = !canTest
	za := normalQuantile(1 - levels[0]/float64(max(len(ts.values)/2, 1)))
	for j, w := range ts.owner {
		t := &r.zones[w/2].tests[w%2]
		t.pRegressed, t.pUnchanged = ts.pUp[j], ts.pEq[j]
		t.outcome = decideTest(*t, canTest && 1/float64(ts.splits) <= levels[w%2], levels[w%2], o)
		if t.outcome == inconclusive {
			t.runsNeeded = runsNeeded(ts.shiftedValues[j], ts.isNew, ts.prec[j], za, levels[0])
		}
	}
	return canTest
}

// family runs the max-T tests of statistic ti (0 median, 1 p95) over
// every zone: regressed (upper tail, less the margin) and unchanged
// (lower tail, BASE shifted up).
func (ts *testSet) family(ti int) {
	var idx []int
	for j, w := range ts.owner {
		if w%2 == ti {
			idx = append(idx, j)
		}
	}
	if len(idx) == 0 {
		return
	}
	values, shifted := make([][]float64, len(idx)), make([][]float64, len(idx))
	prec, margin := make([]float64, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		values[i], shifted[i], prec[i], margin[i] = ts.values[j], ts.shiftedValues[j], ts.prec[j], ts.margin[j]
	}
	splits := splitBudget(len(idx), ts.nb, ts.nn)
	up, err := stats.MaxT(values, ts.isNew, studentizedShift(prec, margin), splits)
	if err != nil {
		panic(err) // both sides have runs: loadSide refuses empty ones
	}
	eq, err := stats.MaxT(shifted, ts.isNew, studentizedShift(prec, nil), splits)
	if err != nil {
		panic(err)
	}
	for i, j := range idx {
		ts.pUp[j], ts.pEq[j] = up.Upper[i], eq.Lower[i]
	}
	ts.splits, ts.exact = up.Splits, up.Exact
}

// decideTest is a test's outcome at its family's level; canTest says
// whether the runs let a test reach that level at all.
func decideTest(t testDiff, canTest bool, level float64, o diffOptions) outcome {
	floor := float64(o.floor.Nanoseconds())
	switch {
	case !canTest:
		return inconclusive
	case t.pRegressed <= level && t.change > o.minEffect && t.medNew-t.medBase > floor:
		return regressed
	case t.pUnchanged <= level:
		if t.change < -o.minEffect && t.medBase-t.medNew > floor {
			return improved
		}
		return unchanged
	}
	return inconclusive
}

// decide gives a zone on both sides its outcome from its tests: the
// median decides; the tail, noisier, adds a regression with --tails and
// is only reported without. With too few runs, only frames that do not
// overlap at all, by more than the minimum effect, can show a change.
func (d *zoneDiff) decide(canTest bool, o diffOptions) {
	d.fewRuns = !canTest
	if d.note != "" {
		return
	}
	d.outcome = d.tests[0].outcome
	if o.gateTails && d.tests[1].outcome == regressed {
		d.outcome = regressed
	}
	if !canTest {
		d.separated = d.minNew > d.maxBase && float64(d.minNew) > o.shift(float64(d.maxBase)) && d.tests[0].change > o.oneRun
		if d.separated {
			d.outcome = regressed
			d.tests[0].outcome = regressed
		}
	}
}

// applyBudgets checks every --budget against the zones of NEW; budgets
// that name no zone of NEW are listed in r.unmatched.
func (r *diffReport) applyBudgets(o diffOptions) {
	used := make([]bool, len(o.budgets))
	for i := range r.zones {
		d := &r.zones[i]
		for bi := range o.budgets {
			if o.budgets[bi].matches(d.key) && d.runsNew > 0 {
				used[bi] = true
				d.budget = &o.budgets[bi]
				d.overBudget = d.p95New > float64(o.budgets[bi].max.Nanoseconds())
			}
		}
	}
	for i, u := range used {
		if !u {
			r.unmatched = append(r.unmatched, o.budgets[i].zone)
		}
	}
}

// tally counts the zones by outcome and gives the diff its outcome: a
// zone slower, over budget or with more work regresses it.
func (r *diffReport) tally() {
	for _, d := range r.zones {
		if d.overBudget {
			r.overBudget++
		}
		if d.note != "" {
			continue
		}
		switch d.outcome {
		case regressed:
			r.regressions++
		case inconclusive:
			r.undecided++
			r.runsNeeded = max(r.runsNeeded, d.tests[0].runsNeeded)
		case improved:
			r.improved++
		default:
			r.unchanged++
		}
	}
	w := r.workCounts()
	switch {
	case r.regressions > 0 || r.overBudget > 0 || w.regressed > 0:
		r.outcome = regressed
	case r.undecided > 0 || r.inCommon == 0 || w.inconclusive > 0 || w.oneSided > 0:
		r.outcome = inconclusive
	case r.improved > 0 || w.improved > 0:
		r.outcome = improved
	default:
		r.outcome = unchanged
	}
}

// shift is a BASE value moved up by the minimum effect and the floor.
func (o diffOptions) shift(x float64) float64 {
	return math.Max(x*(1+o.minEffect), x+float64(o.floor.Nanoseconds()))
}

// bySeverity orders zones for people: regressed (in time or work), over
// budget, inconclusive, improved (in time or work), new and gone,
// unchanged; within each, the largest change of the median first.
func bySeverity(a, b zoneDiff) int {
	rank := func(d zoneDiff) int {
		switch {
		case d.note == "" && (d.outcome == regressed || d.workOutcome() == regressed):
			return 0
		case d.overBudget:
			return 1
		case d.note == "" && d.outcome == inconclusive:
			return 2
		case d.note == "" && (d.outcome == improved || d.workOutcome() == improved):
			return 3
		case d.note != "":
			return 4
		}
		return 5
	}
	if c := rank(a) - rank(b); c != 0 {
		return c
	}
	ca, cb := a.tests[0].change, b.tests[0].change
	if math.IsNaN(ca) {
		ca = math.Inf(-1)
	}
	if math.IsNaN(cb) {
		cb = math.Inf(-1)
	}
	switch {
	case math.Abs(ca) > math.Abs(cb):
		return -1
	case math.Abs(ca) < math.Abs(cb):
		return 1
	}
	return compareKeys(a.key, b.key)
}

func statOf(z runZone, ti int) float64 {
	if ti == 0 {
		return z.P50
	}
	return z.P95
}

func seOf(z runZone, ti int) float64 {
	if ti == 0 {
		return z.SE50
	}
	return z.SE95
}

func logNs(ns float64) float64 { return math.Log(math.Max(ns, 1)) }

func sq(x float64) float64 { return x * x }

func relChange(base, cur float64) float64 {
	switch {
	case math.IsNaN(base) || math.IsNaN(cur):
		return math.NaN()
	case base > 0:
		return cur/base - 1
	case cur > 0:
		return math.Inf(1)
	}
	return 0
}

// studentizedShift is the statistic of every test: the Hodges-Lehmann
// shift of NEW's log run values against BASE's, less the test's margin
// (none when margin is nil), over its standard error, from the spread
// between runs pooled over both sides (spreadOf), no smaller than the
// precision the frames give each run's value. Pooling matters with 5 runs
// a side: a MAD of 5 values falls to almost 0 whenever 3 of them agree,
// and the splits where that happens by chance would outweigh the real one.
func studentizedShift(prec, margin []float64) stats.Statistic {
	var buf []float64
	return func(j int, x, y []float64) float64 {
		hl := stats.TrimmedShiftBuf(x, y, 0.25, &buf)
		if margin != nil {
			hl -= margin[j]
		}
		s := math.Max(spreadOf(x, y), prec[j])
		se := s * math.Sqrt(1/float64(len(x))+1/float64(len(y)))
		return hl / math.Max(se, 1e-9)
	}
}

// spreadOf is the spread between runs, pooled over both sides: the MAD
// of every run's distance from its own side's median.
func spreadOf(x, y []float64) float64 {
	mx, my := stats.MedianFloat(x), stats.MedianFloat(y)
	res := make([]float64, 0, len(x)+len(y))
	for _, v := range x {
		res = append(res, v-mx)
	}
	for _, v := range y {
		res = append(res, v-my)
	}
	return stats.MAD(res)
}

// runsNeeded estimates the runs a side an inconclusive test needs: with
// the spread seen between runs (sigma, log units), a shift as far from the
// minimum effect as the one seen is told apart with 80% power at the
// per-test level of a Bonferroni bound (z), with the rank test's 3/pi
// efficiency; and never fewer than the runs that let a permutation test
// reach alpha at all. 0 when it cannot be estimated.
func runsNeeded(v []float64, isNew []bool, prec, z, alpha float64) int {
	var x, y []float64
	for i, val := range v {
		if math.IsNaN(val) {
			continue
		}
		if isNew[i] {
			y = append(y, val)
		} else {
			x = append(x, val)
		}
	}
	if len(x) == 0 || len(y) == 0 {
		return 0
	}
	sigma := math.Max(spreadOf(x, y), prec)
	d := math.Abs(stats.TrimmedShift(x, y, 0.25))
	least := leastRuns(alpha)
	if len(x) < 2 || len(y) < 2 || sigma == 0 || d == 0 {
		return least // the spread between runs is unknown
	}
	n := math.Ceil(math.Pi / 3 * 2 * sq(z+0.8416) * sq(sigma) / sq(d))
	if n > maxRuns {
		return maxRuns + 1
	}
	// What the runs at hand did not decide needs more of them.
	return max(int(n), least, min(len(x), len(y))+1)
}

// splitBudget is how many splits of the runs a family of tests may count:
// stats.MaxEnumerate, fewer when the runs are many, so that the work
// (splits x tests x the BASE x NEW differences each statistic sorts) stays
// near 5e7 differences, a second or two; never fewer than 1000, the splits
// that let a test reach alpha 0.001.
func splitBudget(tests, nb, nn int) int {
	b := 5e7 / (float64(max(tests, 1)) * float64(nb) * float64(nn))
	return int(min(max(b, 1000), stats.MaxEnumerate))
}

// leastRuns is the fewest runs a side with which a split test can reach
// alpha at all: one split in C(2n, n) must be at most alpha.
func leastRuns(alpha float64) int {
	n := 1
	for 1/float64(stats.Binomial(2*n, n)) > alpha {
		n++
	}
	return n
}

// normalQuantile is the inverse of the standard normal distribution.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

func runDiff(args []string, stdout, stderr io.Writer) int {
	o := diffOptions{minEffect: defaultMinEffect, floor: defaultFloor, alpha: defaultAlpha, oneRun: defaultOneRunLimit}
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(percentValue{&o.minEffect, maxMinEffect}, "min-effect", "smallest relative slow-down that counts (3% or 0.03; at most 1000%)")
	fs.Var(percentValue{&o.minEffect, maxMinEffect}, "threshold", "the same as --min-effect")
	fs.Var(durationValue{&o.floor, maxFloor}, "floor", "smallest absolute slow-down that counts (at most 1h)")
	fs.Var(alphaValue{&o.alpha}, "alpha", "chance of a false 'regressed' over all zones together (at most 0.5)")
	fs.Var(budgetValue{&o.budgets}, "budget", "ZONE=DURATION: the zone's p95 in NEW (median over runs) must not exceed DURATION (repeatable; ZONE is a name, gpu:NAME, cpu:NAME or KIND:TRACK/NAME)")
	fs.Var(percentValue{&o.oneRun, maxMinEffect}, "few-runs-limit", "with too few runs to test, the median change (every frame apart) that still counts as a regression (at most 1000%)")
	fs.BoolVar(&o.gateTails, "tails", false, "let a regression of the per-run p95 fail the gate too (alpha is then split between medians and tails)")
	fs.StringVar(&o.driver, "driver", "", "driver to name in reports (traces do not record it)")
	markdown := fs.Bool("markdown", false, "write a Markdown report for a pull-request comment or a job summary")
	asJSON := fs.Bool("json", false, "write JSON")
	htmlOut := fs.String("html", "", "also write an HTML report with the per-run distributions to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope diff [flags] BASE NEW")
		fmt.Fprintln(stderr, "BASE and NEW are each a trace file or a directory of trace files, one run each.")
		fmt.Fprintln(stderr, "Each zone's per-run median and p95 are compared over the runs, and each GPU zone's")
		fmt.Fprintln(stderr, "work counts (pipeline statistics) where traces carry them (see `go doc")
		fmt.Fprintln(stderr, "github.com/framescope/framescope/cmd/framescope`). Exit 0: unchanged or improved;")
		fmt.Fprintln(stderr, "1: regressed (time or work) or a budget exceeded; 2: bad usage or input; 3: inconclusive.")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitBadInput
	}
	if len(pos) != 2 {
		fs.Usage()
		return exitBadInput
	}
	if *asJSON && *markdown {
		fmt.Fprintln(stderr, "framescope diff: --json and --markdown exclude each other")
		return exitBadInput
	}
	if len(o.driver) > maxZoneArg {
		fmt.Fprintf(stderr, "framescope diff: --driver of %d bytes: the limit is %d\n", len(o.driver), maxZoneArg)
		return exitBadInput
	}
	base, err := loadSide(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "framescope diff: BASE: %s\n", termText(err.Error()))
		return exitBadInput
	}
	cur, err := loadSide(pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "framescope diff: NEW: %s\n", termText(err.Error()))
		return exitBadInput
	}
	warnCuts(stderr, "diff", base, cur)
	r := compare(base, cur, o)
	if len(r.unmatched) > 0 {
		names := make([]string, len(r.unmatched))
		for i, u := range r.unmatched {
			names[i] = termText(u)
		}
		fmt.Fprintf(stderr, "framescope diff: --budget names zones not in NEW: %s\n", strings.Join(names, ", "))
		return exitBadInput
	}
	switch {
	case *asJSON:
		if err := writeDiffJSON(stdout, r, o); err != nil {
			fmt.Fprintf(stderr, "framescope diff: %v\n", err)
			return exitBadInput
		}
	case *markdown:
		writeDiffMarkdown(stdout, r, o)
	default:
		writeDiffText(stdout, r, o)
	}
	if *htmlOut != "" {
		if err := writeDiffHTMLFile(*htmlOut, r, o); err != nil {
			fmt.Fprintf(stderr, "framescope diff: --html: %s\n", termText(err.Error()))
			return exitBadInput
		}
	}
	return r.exitCode()
}

// exitCode is the diff's exit code: 1 regressed (a zone slower, over
// budget or doing more work), 3 inconclusive, else 0.
func (r diffReport) exitCode() int {
	switch r.outcome {
	case regressed:
		return exitRegressed
	case inconclusive:
		return exitInconclusive
	}
	return exitUnchanged
}
