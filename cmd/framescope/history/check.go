package history

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// MinEffect is the smallest step that counts as a regression: +0.02
	// is 2% slower, or 2% more work.
	MinEffect float64
	// Alpha is the false-alarm level of a check, over all its time series
	// and candidate commits together.
	Alpha float64
	// MinCommits: a history shorter than this is too short to say.
	MinCommits int
	// Tails adds the p95 series to the p50 ones. They are noisier, and
	// more series raise the bar for each: on real runs (TestHistoryEvaluation)
	// they cost a good share of the steps caught, and gave flat histories
	// on lavapipe more false alarms; so DefaultCheck leaves them out, as
	// framescope diff gates medians alone unless --tails.
	Tails bool
	// Permutations of the commits' order the level is found by; Seed
	// draws them, so that a check replays.
	Permutations int
	Seed         uint64
}

// DefaultCheck are the options `framescope history check` starts from.
var DefaultCheck = CheckOptions{MinEffect: 0.02, Alpha: 0.01, MinCommits: 8, Permutations: 2000, Seed: 1}

// Limits on the options.
const (
	MaxPermutations = 100_000
	minBefore       = 3 // commits before a step: a level and a spread
)

// Finding is a step in one series: its first commit after the step, how
// large it is (after/before - 1, on the runs' geometric means for time,
// on the exact counts for work), and how sure the check is: the false
// alarm probability, over every series and commit of the check together
// (0 for an exact count: a step in one is a change).
type Finding struct {
	Series     SeriesKey
	Commit     int // index into History.Commits
	Step       float64
	P          float64
	Exact      bool
	Regression bool // upward, past MinEffect
}

// Verdict is a check's outcome.
type Verdict int

const (
	Unchanged Verdict = iota // no series' newest step is a regression
	Regressed                // one is
	TooShort                 // too few commits to say
)

func (v Verdict) String() string { return [...]string{"unchanged", "regressed", "too short"}[v] }

// CheckResult is what Check found: each series' newest significant step,
// newest first, and how many series it looked at.
type CheckResult struct {
	Verdict  Verdict
	Findings []Finding
	Series   int // series tested as times are: times, and Noisy
	Exact    int // exact work series followed
	Noisy    int // work series not shown to be exact (heldStill), tested as times are
}

// Check finds, in each series of h, its newest step, and says whether
// any is a regression. Time series (p50, and p95 with Tails): for each
// series the largest standardized step of the mean log value over every
// split (at least minBefore commits before it, one after; the
// stepWindow commits on each side), its false-alarm probability
// the share of orderings of the commits, permuted alike in every series,
// whose largest rise over every series and split is as large (a max-T
// over series and commits, as framescope diff's max-T over zones). The
// unit of replication is the commit, its runs averaged. A work statistic
// that the history shows to be exact (heldStill) has its newest change
// named a step at that commit; any other is tested as times are.
func Check(h History, o CheckOptions) (CheckResult, error) {
	if err := o.check(); err != nil {
		return CheckResult{}, err
	}
	r := CheckResult{}
	if len(h.Commits) < o.MinCommits {
		r.Verdict = TooShort
		return r, nil
	}
	var g gathered
	var a seriesAcc
	for _, sr := range h.Series {
		read, work := checked(sr.Key.Metric, o)
		if !read {
			continue
		}
		a.reset(sr.Key, work, len(h.Commits))
		for _, v := range sr.Values {
			a.add(v.Commit, v.Value, v.Whole, v.IsWhole)
		}
		g.take(&a, o)
	}
	return g.result(len(h.Commits), o), nil
}

// result tests g's time series, and says what the check found. The
// series are tested in order of their keys, whichever order they came
// in: the newer steps' tests draw from one source, series by series.
func (g *gathered) result(commits int, o CheckOptions) CheckResult {
	slices.SortStableFunc(g.time, func(a, b timeSeries) int { return cmp.Compare(a.key.String(), b.key.String()) })
	r := CheckResult{Findings: g.findings, Series: len(g.time), Exact: g.exact, Noisy: g.noisy}
	r.Findings = append(r.Findings, timeSteps(g.time, commits, o)...)
	slices.SortFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(-cmp.Compare(a.Commit, b.Commit), cmp.Compare(a.Series.String(), b.Series.String()))
	})
	for _, f := range r.Findings {
		if f.Regression {
			r.Verdict = Regressed
		}
	}
	return r
}

func (o CheckOptions) check() error {
	switch {
	case !(o.MinEffect >= 0 && o.MinEffect <= 10):
		return fmt.Errorf("history: min effect %g: from 0 to 10 (1000%%)", o.MinEffect)
	case !(o.Alpha > 0 && o.Alpha <= 0.5):
		return fmt.Errorf("history: alpha %g: in (0, 0.5]", o.Alpha)
	case o.Permutations < 1 || o.Permutations > MaxPermutations:
		return fmt.Errorf("history: %d permutations: from 1 to %d", o.Permutations, MaxPermutations)
	case float64(o.Permutations+1)*o.Alpha < 1:
		return fmt.Errorf("history: %d permutations cannot reach alpha %g: at least %d", o.Permutations, o.Alpha, int(math.Ceil(1/o.Alpha)))
	case o.MinCommits < minBefore+1 || o.MinCommits > MaxLoad:
		return fmt.Errorf("history: min commits %d: from %d to %d", o.MinCommits, minBefore+1, MaxLoad)
	}
	return nil
}

// heldStill says whether a count, that the runs of each commit agree on
// (vals[c], over runs[c] runs), shows that it does not move between runs
// of the same code: two runs of a commit agree on it, or, with one run a
// commit, no value it takes is alone, unlike the commits' on either side
// of it (the window's oldest and newest may be: the oldest's value may
// have begun before the window, the newest's is new). With one run a
// commit, "every run of the commit agrees" holds of any count: a count
// that is the same in every frame of a run, but moves between runs,
// would change at nearly every commit, and every change would be an
// exact step.
func heldStill(vals []uint64, runs []int32) bool {
	var at []int // the commits with runs
	for c, n := range runs {
		if n > 1 {
			return true
		}
		if n == 1 {
			at = append(at, c)
		}
	}
	for i := 1; i+1 < len(at); i++ {
		if v := vals[at[i]]; v != vals[at[i-1]] && v != vals[at[i+1]] {
			return false
		}
	}
	return true
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return float64(a) / float64(b)
}

// newRand is the permutations' source.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
