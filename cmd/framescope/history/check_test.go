package history

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// synth is a history of n commits, one run each, of series zones with
// p50 values of lognormal noise sd around 1 ms, each scaled by level(c)
// at commit c.
func synth(seed uint64, n, zones int, sd float64, level func(z, c int) float64) History {
	rng := rand.New(rand.NewPCG(seed, 11))
	h := History{}
	for c := range n {
		h.Commits = append(h.Commits, Commit{Testbed: "t", Branch: "main", SHA: fmt.Sprintf("c%02d", c), Seq: int64(c)})
		h.Runs = append(h.Runs, []string{fmt.Sprintf("r%02d", c)})
	}
	for z := range zones {
		sr := Series{Key: SeriesKey{"gpu", "q", fmt.Sprintf("z%d", z), "p50"}}
		for c := range n {
			v := 1e6 * level(z, c) * math.Exp(sd*rng.NormFloat64())
			sr.Values = append(sr.Values, Value{Commit: c, Value: v})
		}
		h.Series = append(h.Series, sr)
	}
	return h
}

func flat(int, int) float64 { return 1 }

// Flat histories (30 commits, 20 series, 3% noise a run) fail a check at
// about its level: at alpha 0.01, at most 4 of 100 (a level of 0.01
// gives 5 or more 3 times in 1,000).
func TestCheckFlatHistories(t *testing.T) {
	alarms := 0
	for seed := range uint64(100) {
		r, err := Check(synth(seed, 30, 20, 0.03, flat), DefaultCheck)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == Regressed {
			alarms++
		}
	}
	t.Logf("flat histories: %d of 100 failed the check", alarms)
	if alarms > 4 {
		t.Errorf("%d of 100 flat histories failed at alpha %g", alarms, DefaultCheck.Alpha)
	}
}

// A step of +10% at commit 20 of 30 (3% noise) in one of 20 series is
// found at commit 20, a regression; -10% is found, and is none; up at 10
// and back down at 20 is, newest, the fix.
func TestCheckSteps(t *testing.T) {
	for _, c := range []struct {
		name    string
		level   func(z, c int) float64
		commit  int
		verdict Verdict
	}{
		{"up 10%", func(z, c int) float64 { return step(z, c, 20, 1.1) }, 20, Regressed},
		{"down 10%", func(z, c int) float64 { return step(z, c, 20, 0.9) }, 20, Unchanged},
		{"up and back", func(z, c int) float64 { return step(z, c, 10, 1.2) / step(z, c, 20, 1.2) }, 20, Unchanged},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := synth(7, 30, 20, 0.03, c.level)
			r, err := Check(h, DefaultCheck)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != c.verdict || len(r.Findings) != 1 || r.Findings[0].Commit != c.commit || r.Findings[0].Series.Name != "z3" {
				t.Fatalf("verdict %v, findings:\n%s", r.Verdict, describe(r))
			}
		})
	}
}

func step(z, c, at int, f float64) float64 {
	if z == 3 && c >= at {
		return f
	}
	return 1
}

// An exact work count that changes is a step at its commit, whatever the
// noise of time; runs of a commit that disagree make the series a noisy
// one, tested as times are (and, one outlier, found to have no step).
func TestCheckExactWork(t *testing.T) {
	h := synth(3, 12, 2, 0.03, flat)
	work := Series{Key: SeriesKey{"gpu", "q", "z0", "fragment_shader_invocations"}}
	odd := Series{Key: SeriesKey{"gpu", "q", "z1", "fragment_shader_invocations"}}
	for c := range 12 {
		n := uint64(1000)
		if c >= 9 {
			n = 1100
		}
		work.Values = append(work.Values, Value{Commit: c, Value: float64(n), Whole: n, IsWhole: true})
		odd.Values = append(odd.Values, Value{Commit: c, Value: 5, Whole: 5, IsWhole: true})
	}
	odd.Values = append(odd.Values, Value{Commit: 4, Run: 1, Value: 6, Whole: 6, IsWhole: true})
	h.Series = append(h.Series, work, odd)
	r, err := Check(h, DefaultCheck)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Regressed || len(r.Findings) != 1 || !r.Findings[0].Exact || r.Findings[0].Commit != 9 || r.Exact != 1 || r.Noisy != 1 || r.Series != 3 {
		t.Fatalf("%+v\n%s", r, describe(r))
	}
	if f := r.Findings[0]; math.Abs(f.Step-0.1) > 1e-12 {
		t.Fatalf("step %g, want +10%%", f.Step)
	}
}

// A count is exact on evidence: two runs of a commit that agree, or,
// with one run a commit, no value alone between commits of others (but
// the oldest's and the newest's); else it is noisy, tested as times are.
func TestCheckExactOnEvidence(t *testing.T) {
	for _, c := range []struct {
		name  string
		vals  []uint64 // one run a commit
		twice int      // a commit with a second run, of the same count; -1 none
		other uint64   // the second run's count, where not vals[twice]
		want  string
	}{
		{"held", []uint64{5, 5, 5, 5, 6, 6, 6, 6}, -1, 0, "exact, step at 4"},
		{"newest alone", []uint64{5, 5, 5, 5, 5, 5, 5, 6}, -1, 0, "exact, step at 7"},
		{"oldest alone", []uint64{4, 5, 5, 5, 5, 5, 5, 5}, -1, 0, "exact, step at 1"},
		{"flat", []uint64{5, 5, 5, 5, 5, 5, 5, 5}, -1, 0, "exact, no step"},
		{"one alone between", []uint64{5, 5, 5, 6, 5, 5, 5, 5}, -1, 0, "noisy"},
		{"moves each commit", []uint64{500, 510, 495, 505, 490, 507, 498, 503}, -1, 0, "noisy"},
		{"two runs agree", []uint64{5, 5, 6, 7, 7, 7, 7, 7}, 2, 0, "exact, step at 3"},
		{"two runs disagree", []uint64{5, 5, 5, 5, 6, 6, 6, 6}, 2, 9, "noisy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := synth(5, len(c.vals), 1, 0.03, flat)
			sr := Series{Key: SeriesKey{"gpu", "q", "z0", "clipping_primitives"}}
			for i, v := range c.vals {
				sr.Values = append(sr.Values, Value{Commit: i, Value: float64(v), Whole: v, IsWhole: true})
			}
			if c.twice >= 0 {
				v := cmp.Or(c.other, c.vals[c.twice])
				sr.Values = append(sr.Values, Value{Commit: c.twice, Run: 1, Value: float64(v), Whole: v, IsWhole: true})
			}
			h.Series = append(h.Series, sr)
			r, err := Check(h, DefaultCheck)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%d exact, %d noisy of %d series", r.Exact, r.Noisy, r.Series)
			switch i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Exact }); {
			case r.Exact == 0 && r.Noisy == 1 && r.Series == 2:
				got = "noisy"
			case r.Exact == 1 && r.Noisy == 0 && i >= 0:
				got = fmt.Sprintf("exact, step at %d", r.Findings[i].Commit)
			case r.Exact == 1 && r.Noisy == 0:
				got = "exact, no step"
			}
			if got != c.want {
				t.Fatalf("%s, want %s; findings:\n%s", got, c.want, describe(r))
			}
		})
	}
}

// Too few commits say nothing; options out of bounds are refused.
func TestCheckBounds(t *testing.T) {
	if r, err := Check(synth(1, 7, 3, 0.03, flat), DefaultCheck); err != nil || r.Verdict != TooShort {
		t.Fatalf("7 commits: %v, %v", r.Verdict, err)
	}
	for _, o := range []CheckOptions{
		{MinEffect: -1, Alpha: 0.01, MinCommits: 8, Permutations: 2000},
		{MinEffect: 0.02, Alpha: 0, MinCommits: 8, Permutations: 2000},
		{MinEffect: 0.02, Alpha: 0.01, MinCommits: 8, Permutations: 50},
		{MinEffect: 0.02, Alpha: 0.01, MinCommits: 2, Permutations: 2000},
		{MinEffect: math.NaN(), Alpha: 0.01, MinCommits: 8, Permutations: 2000},
		{MinEffect: 0.02, Alpha: 0.01, MinCommits: 8, Permutations: MaxPermutations + 1},
	} {
		if _, err := Check(History{}, o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
}

func describe(r CheckResult) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s: %+.1f%% at commit %d, p %.4f, exact %t, regression %t\n", f.Series, 100*f.Step, f.Commit, f.P, f.Exact, f.Regression)
	}
	return b.String()
}

// A long history (past noiseExact commits, its noise from clipped
// differences) whose check draws fewer orderings than Permutations
// (permWork lowered here to what 100 draws of it take): flat histories
// fail at about the level, at most 3 of 40 (0.4 expected); a +20% step 10
// commits from the newest is named at its commit in at least 38 of 40
// (the commits after it are tested again, alone, at the same level: a
// newer step found there is a false alarm of that test).
func TestCheckLongHistoriesFewerDraws(t *testing.T) {
	defer func(w int) { permWork = w }(permWork)
	const n, zones = 700, 10
	permWork = 100 * n * zones
	if d := drawsFor(n*zones, DefaultCheck); d != 100 {
		t.Fatalf("%d draws, want 100", d)
	}
	alarms, missed := 0, 0
	for seed := range uint64(40) {
		r, err := Check(synth(seed, n, zones, 0.03, flat), DefaultCheck)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == Regressed {
			alarms++
		}
		r, err = Check(synth(seed, n, zones, 0.03, func(z, c int) float64 { return step(z, c, n-10, 1.2) }), DefaultCheck)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Regressed || len(r.Findings) != 1 || r.Findings[0].Commit != n-10 || r.Findings[0].Series.Name != "z3" {
			missed++
			t.Logf("seed %d: %v\n%s", seed, r.Verdict, describe(r))
		}
	}
	t.Logf("%d of 40 flat long histories failed; %d of 40 steps missed or misplaced", alarms, missed)
	if alarms > 3 || missed > 2 {
		t.Errorf("%d of 40 flat histories failed (at most 3), %d of 40 steps missed (at most 2)", alarms, missed)
	}
}

// A check draws Permutations orderings where they fit in permWork, and
// otherwise as many as fit, never fewer than reach its level.
func TestDrawsFor(t *testing.T) {
	o := DefaultCheck
	for _, c := range []struct{ values, want int }{
		{30 * 1000, o.Permutations},
		{permWork / o.Permutations, o.Permutations},
		{permWork / 500, 500},
		{10_000 * 1000, 100},
		{100_000 * 1000, 100},
	} {
		if got := drawsFor(c.values, o); got != c.want {
			t.Errorf("%d values: %d draws, want %d", c.values, got, c.want)
		}
	}
}
