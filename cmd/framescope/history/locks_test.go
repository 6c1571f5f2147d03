package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/pgtest"
)

func mustOpen(t *testing.T, dsn string, o Options) *sqlStore {
	t.Helper()
	s, err := Open(context.Background(), dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*sqlStore)
}

// someRuns are two runs of a few zones, named for sha.
func someRuns(sha string) []Run {
	var runs []Run
	for r := range 2 {
		run := Run{Digest: fmt.Sprintf("%s-%d", sha, r), Path: sha}
		for z := range 5 {
			run.Points = append(run.Points, Point{Kind: "gpu", Track: "q", Name: fmt.Sprintf("z%d", z), Metric: "p50", Value: float64(1000 + z + r), N: 10})
		}
		runs = append(runs, run)
	}
	return runs
}

func addCommit(t *testing.T, s *sqlStore, sha string, seq int64) {
	t.Helper()
	if _, err := s.Add(context.Background(), Commit{Testbed: "t", Branch: "main", SHA: sha, Seq: seq}, someRuns(sha)); err != nil {
		t.Fatalf("adding %s: %v", sha, err)
	}
}

// A reader holding its transaction open, as Load does while it reads,
// holds up no writer: the add goes through, and the reader's snapshot
// stays as it was.
func TestReaderDoesNotHoldUpWriter(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn, _, _ string) {
		ctx := context.Background()
		w := mustOpen(t, dsn, Options{})
		addCommit(t, w, "c0", 0)
		r := mustOpen(t, dsn, Options{ReadOnly: true})
		tx, err := r.begin(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		count := func() (n int) {
			t.Helper()
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM commits`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(); n != 1 {
			t.Fatalf("the reader sees %d commits, want 1", n)
		}
		addCommit(t, w, "c1", 1)
		if n := count(); n != 1 {
			t.Errorf("the reader's snapshot changed under it: %d commits, want 1", n)
		}
		tx.Rollback()
		if h, err := r.Load(ctx, "t", "main", 10); err != nil || len(h.Commits) != 2 {
			t.Errorf("a read after the add: %d commits (%v), want 2", len(h.Commits), err)
		}
	})
}

// A writer waits for another's lock up to its limit, then ends with an
// error that names the wait and the limit; once the other's transaction
// ends, the same add goes through. The other is a connection of its own
// whose transaction stays open: on SQLite it holds the write lock, on
// PostgreSQL a commit row the add inserts too.
func TestLockWaitBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn, driver, source string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang ends the test, failed
		defer cancel()
		w := mustOpen(t, dsn, Options{LockWait: time.Second})
		addCommit(t, w, "c0", 0)
		other, err := rawDB(t, driver, source).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		hold := []string{"BEGIN IMMEDIATE"}
		if driver == "pgx" {
			hold = []string{"BEGIN", `INSERT INTO commits (testbed, branch, sha, seq) VALUES ('t', 'main', 'c1', 1)`}
		}
		for _, q := range hold {
			if _, err := other.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		start := time.Now()
		_, err = w.Add(ctx, Commit{Testbed: "t", Branch: "main", SHA: "c1", Seq: 1}, someRuns("c1"))
		took := time.Since(start)
		var lw *LockWaitError
		if !errors.As(err, &lw) || lw.Limit != time.Second || !strings.Contains(err.Error(), "waited 1s, the limit, for a lock another connection holds") {
			t.Fatalf("an add behind another's open transaction, after %v: %v", took, err)
		}
		if took > 30*time.Second {
			t.Errorf("the add ended after %v, its limit 1s", took)
		}
		t.Logf("after %v: %v", took, err)
		if _, err := other.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if n, err := w.Add(ctx, Commit{Testbed: "t", Branch: "main", SHA: "c1", Seq: 1}, someRuns("c1")); err != nil || n != 2 {
			t.Fatalf("the add once the other's transaction ended: %d runs, %v", n, err)
		}
	})
}

// On PostgreSQL, a writer stopped midway, its transaction open and idle,
// is ended by the server after its limit, which frees its locks: the
// add that waited behind it goes through, and the stopped one's
// transaction commits nothing.
func TestStoppedWriterFreesLocks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang ends the test, failed
	defer cancel()
	dsn := pgtest.Start(t)
	stopped := mustOpen(t, dsn, Options{LockWait: time.Second})
	addCommit(t, stopped, "c0", 0)
	tx, err := stopped.begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	c1 := Commit{Testbed: "t", Branch: "main", SHA: "c1", Seq: 1}
	if _, err := stopped.commit(ctx, tx, c1); err != nil {
		t.Fatal(err)
	}
	// The stopped writer sends nothing more.
	w := mustOpen(t, dsn, Options{})
	if n, err := w.Add(ctx, c1, someRuns("c1")); err != nil || n != 2 {
		t.Fatalf("an add behind a stopped writer: %d runs, %v", n, err)
	}
	if err := tx.Commit(); err == nil {
		t.Errorf("the stopped writer's transaction committed after the server ended it")
	}
}

// A SQLite file read without locks (in a directory the reader cannot
// write) that a writer changed meanwhile is an error, not a read of
// parts of two versions.
func TestUnlockedReaderSeesChange(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	w := mustOpen(t, "sqlite:"+path, Options{})
	addCommit(t, w, "c0", 0)
	w.Close()
	r := &sqlStore{d: sqlite, dsn: "sqlite:" + path, readOnly: true, wait: time.Second}
	if err := r.openImmutable(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, err := r.Load(ctx, "t", "main", 10); err != nil || len(h.Commits) != 1 {
		t.Fatalf("the file as it was: %d commits, %v", len(h.Commits), err)
	}
	w = mustOpen(t, "sqlite:"+path, Options{})
	for i := range 20 {
		addCommit(t, w, fmt.Sprintf("c%d", i+1), int64(i+1))
	}
	w.Close() // the last connection: the file takes in its WAL
	if _, err := r.Load(ctx, "t", "main", 10); err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("a read of the changed file: %v", err)
	}
}
