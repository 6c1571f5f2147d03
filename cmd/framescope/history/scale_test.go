package history_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/framescope/framescope/cmd/framescope/history"
	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// The scale a history check is measured at: 10,000 commits of 1,000
// zones (each a p50 and a p95), one run a commit, 1% noise, zone 7 5%
// slower from the fifth newest commit on (every zone, with
// FRAMESCOPE_HISTORY_SCALE_STEPS=all). FRAMESCOPE_HISTORY_SCALE
// ("COMMITS") makes it smaller.
func scale() (commits, zones int) {
	commits = 10_000
	if n, err := strconv.Atoi(os.Getenv("FRAMESCOPE_HISTORY_SCALE")); err == nil && n > 0 {
		commits = n
	}
	return commits, 1000
}

// fillScale adds the scale's history to the store at dsn, testbed
// "scale", branch "main".
func fillScale(tb testing.TB, dsn string) {
	ctx := context.Background()
	s, err := history.Open(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	commits, zones := scale()
	rng := rand.New(rand.NewPCG(10_000, 1000))
	all := os.Getenv("FRAMESCOPE_HISTORY_SCALE_STEPS") == "all"
	pts := make([]history.Point, 0, 2*zones)
	start := time.Now()
	for c := range commits {
		pts = pts[:0]
		for z := range zones {
			p50 := 1e6 * (1 + float64(z)/100) * math.Exp(0.01*rng.NormFloat64())
			if (z == 7 || all) && c >= commits-5 {
				p50 *= 1.05
			}
			name := fmt.Sprintf("zone %d", z)
			pts = append(pts, history.Point{Kind: "gpu", Track: "graphics queue 0.0", Name: name, Metric: "p50", Value: p50, N: 300},
				history.Point{Kind: "gpu", Track: "graphics queue 0.0", Name: name, Metric: "p95", Value: 1.2 * p50, N: 300})
		}
		sha := fmt.Sprintf("%040x", c)
		run := history.Run{Digest: "run of " + sha, Path: sha + ".perfetto-trace", Points: pts}
		if _, err := s.Add(ctx, history.Commit{Testbed: "scale", Branch: "main", SHA: sha, Seq: int64(c)}, []history.Run{run}); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Logf("added %d commits of %d zones in %v", commits, zones, time.Since(start))
}

// TestMakeScaleHistory fills the store FRAMESCOPE_HISTORY_SCALE_DSN names
// with the scale's history (scripts/history-scale.sh measures the CLI on
// it); without it, it is skipped.
func TestMakeScaleHistory(t *testing.T) {
	dsn := os.Getenv("FRAMESCOPE_HISTORY_SCALE_DSN")
	if dsn == "" {
		t.Skip("FRAMESCOPE_HISTORY_SCALE_DSN names no store to fill")
	}
	fillScale(t, dsn)
}

// BenchmarkCheckStoreScale is the default check of the scale's whole
// history (-last 10000), on SQLite (made once, kept in the build's cache
// directory, as it takes minutes) and PostgreSQL (made each time), against
// reading the window's rows alone, the floor any check pays: ns/op, the
// ratio, and the Go heap at its peak (MB).
func BenchmarkCheckStoreScale(b *testing.B) {
	commits, zones := scale()
	b.Run("sqlite", func(b *testing.B) {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		path := filepath.Join(dir, "framescope", fmt.Sprintf("history-scale-v%d-%dx%d.db", history.Version, commits, zones))
		if _, err := os.Stat(path); err != nil {
			os.MkdirAll(filepath.Dir(path), 0o755)
			fillScale(b, "sqlite:"+path+".part")
			if err := os.Rename(path+".part", path); err != nil {
				b.Fatal(err)
			}
		}
		benchCheckScale(b, "sqlite:"+path, "sqlite", "file:"+path+"?mode=ro")
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgtest.Start(b)
		fillScale(b, dsn)
		benchCheckScale(b, dsn, "pgx", dsn)
	})
}

func benchCheckScale(b *testing.B, dsn, driver, source string) {
	ctx := context.Background()
	commits, _ := scale()
	s, err := history.Open(ctx, dsn, history.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	floor := readRows(b, driver, source)
	var peak uint64
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		stop := watchHeap(&peak)
		_, r, err := history.CheckStore(ctx, s, "scale", "main", commits, history.DefaultCheck)
		stop()
		if err != nil || r.Verdict != history.Regressed {
			b.Fatalf("%v: %+v", err, r)
		}
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per/float64(floor.Nanoseconds()), "x-read-rows")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// readRows is how long reading the window's p50 rows takes, bytes and
// all, with nothing made of them: the best of 3.
func readRows(b *testing.B, driver, source string) time.Duration {
	db, err := sql.Open(driver, source)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	best := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		rows, err := db.Query(`SELECT v.run_id, v.data FROM run_values v JOIN runs r ON r.id = v.run_id JOIN commits c ON c.id = r.commit_id
			WHERE c.testbed = 'scale' AND c.branch = 'main' AND v.metric <> 'p95' ORDER BY c.seq, c.id, r.id`)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id int64
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				b.Fatal(err)
			}
			n += len(data)
		}
		rows.Close()
		best = min(best, time.Since(start))
	}
	return best
}

// watchHeap samples the Go heap every 10 ms into *peak until stopped.
func watchHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
