package history_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// stores runs f on a fresh SQLite history and on a fresh PostgreSQL one
// (a server of the test's own).
func stores(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite:"+filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, pgtest.Start(t)) })
}

func open(t *testing.T, dsn string) history.Store {
	t.Helper()
	s, err := history.Open(context.Background(), dsn, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run makes a run of zones "z0".."z(n-1)", each with p50 and p95 drawn
// from rng and, for the first, an exact count.
func run(rng *rand.Rand, digest string, zones int) history.Run {
	r := history.Run{Digest: digest, Path: digest + ".perfetto-trace"}
	for z := range zones {
		name := fmt.Sprintf("z%d", z)
		p50 := 1000 + rng.Float64()*100
		r.Points = append(r.Points,
			history.Point{Kind: "gpu", Track: "graphics queue 0.0", Name: name, Metric: "p50", Value: p50, N: 300},
			history.Point{Kind: "gpu", Track: "graphics queue 0.0", Name: name, Metric: "p95", Value: 1.2 * p50, N: 300})
		if z == 0 {
			r.Points = append(r.Points, history.Point{Kind: "gpu", Track: "graphics queue 0.0", Name: name,
				Metric: "fragment_shader_invocations", Value: 1 << 62, Whole: 1<<63 + 5, IsWhole: true, N: 300})
		}
	}
	return r
}

// What is added comes back: commits by sequence number, each run's
// points, exact counts past 2^63 exact; a run added again (a retried CI
// job) adds nothing; a commit again with another sequence number is
// refused and changes nothing; Load's window is the newest commits.
func TestAddAndLoad(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(1, 2))
		var want []history.Run
		for i := range 5 {
			c := history.Commit{Testbed: "lavapipe", Branch: "main", SHA: fmt.Sprintf("c%d", i), Seq: int64(10 * (5 - i))}
			runs := []history.Run{run(rng, fmt.Sprintf("r%da", i), 3), run(rng, fmt.Sprintf("r%db", i), 3)}
			want = append(want, runs...)
			if n, err := s.Add(ctx, c, runs); err != nil || n != 2 {
				t.Fatalf("commit %d: added %d, %v", i, n, err)
			}
			if n, err := s.Add(ctx, c, runs); err != nil || n != 0 {
				t.Fatalf("commit %d again: added %d, %v; want 0", i, n, err)
			}
		}
		_, err := s.Add(ctx, history.Commit{Testbed: "lavapipe", Branch: "main", SHA: "c1", Seq: 99}, []history.Run{run(rng, "new", 1)})
		if !errors.Is(err, history.ErrConflict) || !strings.Contains(err.Error(), "sequence number 40, not 99") {
			t.Fatalf("a commit again with another sequence number: %v", err)
		}
		h, err := s.Load(ctx, "lavapipe", "main", 3)
		if err != nil {
			t.Fatal(err)
		}
		var shas []string
		for _, c := range h.Commits {
			shas = append(shas, c.SHA)
		}
		if fmt.Sprint(shas) != "[c2 c1 c0]" { // seq 30, 40, 50: the newest three, oldest first
			t.Fatalf("commits %v", shas)
		}
		if len(h.Series) != 7 || fmt.Sprint(h.Runs) != "[[r2a r2b] [r1a r1b] [r0a r0b]]" {
			t.Fatalf("%d series, runs %v", len(h.Series), h.Runs)
		}
		for _, sr := range h.Series {
			if len(sr.Values) != 6 {
				t.Fatalf("series %s has %d values, want 6", sr.Key, len(sr.Values))
			}
			for _, v := range sr.Values {
				r := want[2*(4-v.Commit-2)+v.Run]
				i := slices.IndexFunc(r.Points, func(p history.Point) bool {
					return p.Name == sr.Key.Name && p.Metric == sr.Key.Metric
				})
				p := r.Points[i]
				if p.Value != v.Value || p.IsWhole != v.IsWhole || p.Whole != v.Whole {
					t.Fatalf("series %s, run %s: %+v, want %+v", sr.Key, r.Digest, v, p)
				}
			}
		}
		if h, err := s.Load(ctx, "lavapipe", "other", 10); !errors.Is(err, history.ErrUnknown) || len(h.Commits) != 0 {
			t.Fatalf("another branch: %+v, %v", h, err)
		}
	})
}

// Eight writers at once, each with a store of its own, recording the
// same commits (some runs shared, some their own) in other orders: each
// run is there once, and nothing is lost.
func TestWritersAtOnce(t *testing.T) {
	stores(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		open(t, dsn) // the schema, once
		const writers, commits = 8, 12
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := history.Open(ctx, dsn, history.Options{})
				if err != nil {
					errs[w] = err
					return
				}
				defer s.Close()
				rng := rand.New(rand.NewPCG(uint64(w), 9))
				for _, i := range rng.Perm(commits) {
					c := history.Commit{Testbed: "t", Branch: "main", SHA: fmt.Sprintf("c%02d", i), Seq: int64(i)}
					runs := []history.Run{run(rng, fmt.Sprintf("shared-%d", i), 20), run(rng, fmt.Sprintf("own-%d-%d", w, i), 20)}
					if _, err := s.Add(ctx, c, runs); err != nil {
						errs[w] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		h, err := open(t, dsn).Load(ctx, "t", "main", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Commits) != commits {
			t.Fatalf("%d commits, want %d", len(h.Commits), commits)
		}
		for i, runs := range h.Runs {
			if len(runs) != 1+writers {
				t.Errorf("commit %s: %d runs, want %d (one shared, one a writer)", h.Commits[i].SHA, len(runs), 1+writers)
			}
		}
		for _, sr := range h.Series {
			if len(sr.Values) != commits*(1+writers) {
				t.Errorf("series %s: %d values, want %d", sr.Key, len(sr.Values), commits*(1+writers))
			}
		}
	})
}

// Bad input gets an error that says what is wrong, and records nothing.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"", "sqlite:", "mysql://x", "sqlite:a.db?mode=ro", "sqlite:" + t.TempDir()} {
		if _, err := history.Open(ctx, dsn, history.Options{}); err == nil {
			t.Errorf("Open(%q) opened", dsn)
		}
	}
	_, err := history.Open(ctx, "postgres://nobody:secret@127.0.0.1:1/x?connect_timeout=2", history.Options{})
	if err == nil || !strings.Contains(err.Error(), "does not answer") || strings.Contains(err.Error(), "secret") {
		t.Errorf("a server that is not there: %v", err)
	}
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	good := history.Commit{Testbed: "t", Branch: "main", SHA: "c", Seq: 1}
	rng := rand.New(rand.NewPCG(3, 4))
	bad := run(rng, "r", 2)
	bad.Points[1].Value = 0 / zero()
	for _, c := range []struct {
		name string
		c    history.Commit
		runs []history.Run
	}{
		{"no commit", history.Commit{Testbed: "t", Branch: "main"}, []history.Run{run(rng, "a", 1)}},
		{"negative seq", history.Commit{Testbed: "t", Branch: "main", SHA: "c", Seq: -1}, []history.Run{run(rng, "a", 1)}},
		{"a long branch", history.Commit{Testbed: "t", Branch: strings.Repeat("b", 2000), SHA: "c"}, nil},
		{"a commit of two lines", history.Commit{Testbed: "t", Branch: "main", SHA: "c\nREGRESSED"}, []history.Run{run(rng, "a", 1)}},
		{"a blank commit", history.Commit{Testbed: "t", Branch: "main", SHA: " "}, []history.Run{run(rng, "a", 1)}},
		{"a blank branch", history.Commit{Testbed: "t", Branch: "\u00a0", SHA: "c"}, []history.Run{run(rng, "a", 1)}},
		{"a blank testbed", history.Commit{Testbed: "   ", Branch: "main", SHA: "c"}, []history.Run{run(rng, "a", 1)}},
		{"51 runs", good, make([]history.Run, 51)},
		{"a NaN", good, []history.Run{run(rng, "ok", 1), bad}},
		{"a run without digest", good, []history.Run{{Path: "x"}}},
	} {
		if _, err := s.Add(ctx, c.c, c.runs); err == nil {
			t.Errorf("%s: added", c.name)
		}
	}
	if h, err := s.Load(ctx, "t", "main", 10); !errors.Is(err, history.ErrUnknown) || len(h.Commits) != 0 {
		t.Errorf("after bad input the history holds %+v (%v), want nothing", h, err)
	}
}

func zero() float64 { return 0 }

// The same history in SQLite and in PostgreSQL gives the same check:
// the same findings, commits and false-alarm probabilities.
func TestCheckSameOnBothStores(t *testing.T) {
	ctx := context.Background()
	sq, pg := open(t, "sqlite:"+filepath.Join(t.TempDir(), "h.db")), open(t, pgtest.Start(t))
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 16 {
		r := run(rng, fmt.Sprintf("r%02d", i), 6)
		if i >= 11 {
			r.Points[3].Value *= 1.15 // z1's p50 (after z0's p50, p95 and count): 15% slower from commit 11
		}
		c := history.Commit{Testbed: "t", Branch: "main", SHA: fmt.Sprintf("c%02d", i), Seq: int64(i)}
		for _, s := range []history.Store{sq, pg} {
			if _, err := s.Add(ctx, c, []history.Run{r}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	for _, s := range []history.Store{sq, pg} {
		h, err := s.Load(ctx, "t", "main", 30)
		if err != nil {
			t.Fatal(err)
		}
		r, err := history.Check(h, history.DefaultCheck)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%+v", r))
	}
	if got[0] != got[1] || !strings.Contains(got[0], "Verdict:regressed") {
		t.Errorf("SQLite: %s\nPostgreSQL: %s", got[0], got[1])
	}
	t.Log(got[0])
}
