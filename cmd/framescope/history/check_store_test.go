package history_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// onlyStore hides a store's type: CheckStore then checks what Load reads.
type onlyStore struct{ history.Store }

// CheckStore, which reads a store's series a few at a time and keeps only
// what the check reads, finds what Check finds in what Load reads, on
// both stores and through a Store of another package: more series than
// it reads at once, series missing at some commits, commits of two runs,
// exact counts with a step, a count that moves between runs, and steps in
// time; with and without the p95 series. Its History is Load's, with
// the series of the findings alone.
func TestCheckStoreIsCheckOfLoad(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(5, 5))
		for c := range 40 {
			var runs []history.Run
			for k := range 1 + c%3/2 {
				runs = append(runs, mixedRun(rng, fmt.Sprintf("r%02d.%d", c, k), c))
			}
			if _, err := s.Add(ctx, history.Commit{Testbed: "t", Branch: "main", SHA: fmt.Sprintf("c%02d", c), Seq: int64(c)}, runs); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range []history.CheckOptions{history.DefaultCheck, withTails(history.DefaultCheck)} {
			h, err := s.Load(ctx, "t", "main", 35)
			if err != nil {
				t.Fatal(err)
			}
			want, err := history.Check(h, o)
			if err != nil {
				t.Fatal(err)
			}
			if want.Verdict != history.Regressed || want.Exact == 0 || want.Noisy == 0 {
				t.Fatalf("the history is not the one meant: %+v", want)
			}
			found := map[history.SeriesKey]bool{}
			for _, f := range want.Findings {
				found[f.Series] = true
			}
			var series []history.Series
			for _, sr := range h.Series {
				if found[sr.Key] {
					series = append(series, sr)
				}
			}
			h.Series = series
			for _, st := range []history.Store{s, onlyStore{s}} {
				gh, got, err := history.CheckStore(ctx, st, "t", "main", 35, o)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%T, tails %v: CheckStore found\n%+v\nCheck of Load\n%+v", st, o.Tails, got, want)
				}
				if !reflect.DeepEqual(gh, h) {
					t.Errorf("%T, tails %v: CheckStore's history is not Load's with the series found", st, o.Tails)
				}
			}
		}
	})
}

func withTails(o history.CheckOptions) history.CheckOptions {
	o.Tails = true
	return o
}

// mixedRun is a run of commit c: 80 zones with p50 and p95 (z5 20%
// slower from commit 30; z7 only at even commits), an exact count that
// steps at commit 20, and a count that moves between runs.
func mixedRun(rng *rand.Rand, digest string, c int) history.Run {
	r := history.Run{Digest: digest, Path: digest}
	for z := range 80 {
		if z == 7 && c%2 == 1 {
			continue
		}
		v := 1e6 * math.Exp(0.02*rng.NormFloat64())
		if z == 5 && c >= 30 {
			v *= 1.2
		}
		name := fmt.Sprintf("z%d", z)
		r.Points = append(r.Points,
			history.Point{Kind: "gpu", Track: "q", Name: name, Metric: "p50", Value: v, N: 10},
			history.Point{Kind: "gpu", Track: "q", Name: name, Metric: "p95", Value: 1.1 * v, N: 10})
	}
	exact := uint64(1000)
	if c >= 20 {
		exact = 1100
	}
	moving := uint64(500 + rng.IntN(20))
	r.Points = append(r.Points,
		history.Point{Kind: "gpu", Track: "q", Name: "z0", Metric: "vertices", Value: float64(exact), Whole: exact, IsWhole: true, N: 10},
		history.Point{Kind: "gpu", Track: "q", Name: "z1", Metric: "vertices", Value: float64(moving), Whole: moving, IsWhole: true, N: 10})
	return r
}
