package history

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// A PostgreSQL connection ended midway through an add (here by
// pg_terminate_backend, from a second connection, while the add waits
// to write its values) is reported as the database connection's
// failure, naming the database, its password left out: not as the
// fault of the run being written. Nothing of the add is recorded.
func TestConnectionLostDuringAdd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang ends the test, failed
	defer cancel()
	dsn := strings.Replace(pgtest.Start(t), "postgres://postgres@", "postgres://postgres:secret@", 1) // trust: any password
	w := mustOpen(t, dsn, Options{LockWait: 30 * time.Second})
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	lock, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, `LOCK TABLE run_values IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Add(ctx, Commit{Testbed: "t", Branch: "main", SHA: "c1", Seq: 1}, someRuns("r082"))
		done <- err
	}()
	var pid int
	for pid == 0 {
		err := admin.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO run_values%'`).Scan(&pid)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	err = <-done
	lock.Rollback()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if !strings.Contains(msg, "the connection to the database "+redact(dsn)+" was lost") || strings.Contains(msg, "secret") || strings.Contains(msg, "run r082") {
		t.Errorf("an add whose connection ended: %v\nwant the connection to the database %s named as lost, not the run", err, redact(dsn))
	}
	r := mustOpen(t, dsn, Options{ReadOnly: true})
	if h, err := r.Load(ctx, "t", "main", 10); err == nil {
		t.Errorf("the ended add recorded %d commits", len(h.Commits))
	}
}
