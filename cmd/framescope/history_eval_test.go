package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// TestHistoryEvaluation measures framescope history check on real runs,
// one run a commit, when $FRAMESCOPE_HISTORY_CORPUS names a corpus that
// scripts/history-corpus.sh made: runs of the demo at one setting (base/),
// at settings with more GPU work a frame (step*/), and with pipeline
// statistics at two loads (work-base/, work-step/). Histories are drawn
// from them, 100 of each kind, runs without replacement within one:
//   - flat: 30 commits of base runs; a false alarm is a check that fails;
//   - a step: 20 base commits, then the step's runs; checked after each
//     of the 5 commits from the step on, it is caught when a check fails
//     by then, and the commit it names is the step's or not;
//   - work: 15 work-base commits and 5 work-step ones: the exact counts'
//     step must be found at its commit every time.
//
// It writes the table it logs to $FRAMESCOPE_HISTORY_EVAL, where set.
func TestHistoryEvaluation(t *testing.T) {
	corpus := os.Getenv("FRAMESCOPE_HISTORY_CORPUS")
	if corpus == "" {
		t.Skip("FRAMESCOPE_HISTORY_CORPUS names no corpus (scripts/history-corpus.sh makes one)")
	}
	pools := map[string][]history.Run{}
	ents, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			pools[e.Name()] = evalPool(t, filepath.Join(corpus, e.Name()))
		}
	}
	var b strings.Builder
	o := history.DefaultCheck
	fmt.Fprintf(&b, "framescope history check on %s, one run a commit, alpha %g, min effect %g, 100 histories of each kind\n", corpus, o.Alpha, o.MinEffect)
	rng := rand.New(rand.NewPCG(37, 1))
	base := pools["base"]
	var steps []string
	for name := range pools {
		if strings.HasPrefix(name, "step") {
			steps = append(steps, name)
		}
	}
	slices.Sort(steps)
	low, tails := o, o
	low.MinEffect, tails.Tails = 0.005, true
	for _, c := range []struct {
		name string
		o    history.CheckOptions
	}{{"the defaults", o}, {"-min-effect 0.5%", low}, {"-tails (p95 too)", tails}} {
		alarms := 0
		for range 100 {
			r, err := history.Check(evalHistory(evalDraw(rng, base, 30)), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict == history.Regressed {
				alarms++
			}
		}
		fmt.Fprintf(&b, "%s:\n  flat, 30 commits of %d base runs: %d of 100 failed\n", c.name, len(base), alarms)
		for _, name := range steps {
			evalStep(t, &b, rng, base, pools[name], name, c.o)
		}
	}
	if wb, ws := pools["work-base"], pools["work-step"]; len(wb) > 0 && len(ws) > 0 {
		found := 0
		for range 100 {
			r, err := history.Check(evalHistory(append(evalDraw(rng, wb, 15), evalDraw(rng, ws, 5)...)), o)
			if err != nil {
				t.Fatal(err)
			}
			exactAt15 := slices.ContainsFunc(r.Findings, func(f history.Finding) bool { return f.Exact && f.Commit == 15 })
			wrong := slices.ContainsFunc(r.Findings, func(f history.Finding) bool { return f.Exact && f.Commit != 15 })
			if exactAt15 && !wrong {
				found++
			}
		}
		fmt.Fprintf(&b, "work (%d and %d runs): the exact step found at its commit, and no other, in %d of 100\n", len(wb), len(ws), found)
		if found != 100 {
			t.Errorf("an exact work step was missed or misplaced")
		}
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("FRAMESCOPE_HISTORY_EVAL"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// evalStep checks 100 histories of 20 base runs and then the step's,
// after each of the 5 commits from the step on, and writes how many were
// caught, how soon, and at which commit.
func evalStep(t *testing.T, b *strings.Builder, rng *rand.Rand, base, pool []history.Run, name string, o history.CheckOptions) {
	caught, exact, delay := 0, 0, 0
	for range 100 {
		runs := append(evalDraw(rng, base, 20), evalDraw(rng, pool, 5)...)
		for at := 20; at < 25; at++ {
			r, err := history.Check(evalHistory(runs[:at+1]), o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != history.Regressed {
				continue
			}
			caught++
			delay += at - 20 + 1
			if i := slices.IndexFunc(r.Findings, func(f history.Finding) bool { return f.Regression }); r.Findings[i].Commit == 20 {
				exact++
			}
			break
		}
	}
	fmt.Fprintf(b, "  %s (%d runs; the GPU frame's p50 %+.2f%% over the base runs' median): caught within 5 commits in %d of 100 (at the %.1fth commit from the step on average), at the step's commit in %d of %d\n",
		name, len(pool), 100*(frameP50(pool)/frameP50(base)-1), caught, float64(delay)/float64(max(caught, 1)), exact, caught)
}

// frameP50 is the median over runs of the p50 of the demo's GPU zone
// "frame".
func frameP50(runs []history.Run) float64 {
	var v []float64
	for _, r := range runs {
		for _, p := range r.Points {
			if p.Kind == "gpu" && p.Name == "frame" && p.Metric == "p50" {
				v = append(v, p.Value)
			}
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// evalPool reads a directory of runs into the history's runs.
func evalPool(t *testing.T, dir string) []history.Run {
	files, err := filepath.Glob(filepath.Join(dir, "*.perfetto-trace"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []history.Run
	for _, f := range files {
		tr, err := loadTrace(f)
		if err != nil {
			t.Fatal(err)
		}
		pts, left := historyPoints(summarizeRun(f, tr))
		if len(left) > 0 {
			t.Fatalf("%s: zones left out: %v", f, left)
		}
		runs = append(runs, history.Run{Digest: f, Path: f, Points: pts})
	}
	return runs
}

// evalDraw draws n runs of pool without replacement (pool must hold n).
func evalDraw(rng *rand.Rand, pool []history.Run, n int) []history.Run {
	out := make([]history.Run, n)
	for i, k := range rng.Perm(len(pool))[:n] {
		out[i] = pool[k]
	}
	return out
}

// evalHistory is the history of one run a commit, as Load returns it.
func evalHistory(runs []history.Run) history.History {
	h := history.History{}
	at := map[history.SeriesKey]int{}
	for c, r := range runs {
		h.Commits = append(h.Commits, history.Commit{Testbed: "eval", Branch: "main", SHA: fmt.Sprintf("c%02d", c), Seq: int64(c)})
		h.Runs = append(h.Runs, []string{r.Digest})
		for _, p := range r.Points {
			k := history.SeriesKey{Kind: p.Kind, Track: p.Track, Name: p.Name, Metric: p.Metric}
			i, ok := at[k]
			if !ok {
				i = len(h.Series)
				at[k] = i
				h.Series = append(h.Series, history.Series{Key: k})
			}
			h.Series[i].Values = append(h.Series[i].Values, history.Value{Commit: c, Value: p.Value, Whole: p.Whole, IsWhole: p.IsWhole})
		}
	}
	return h
}
