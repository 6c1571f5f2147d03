package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// begin starts a transaction: to read, one snapshot of the history (on
// SQLite a deferred BEGIN, which in WAL mode takes no lock a writer
// waits for; on PostgreSQL REPEATABLE READ, READ ONLY), or to write (on
// SQLite BEGIN IMMEDIATE, as the store's connection string says). On
// PostgreSQL it bounds, for this transaction alone (so that it holds
// through a pooler such as PgBouncer):
//   - lock_timeout: how long a statement waits for another session's
//     lock, such as a row another writer inserted and has not committed;
//   - idle_in_transaction_session_timeout, for a writer: how long the
//     server keeps this session's transaction open while it sends
//     nothing, so that a writer stopped midway (a CI job suspended or
//     cut off) frees its locks for the others.
//
// statement_timeout is left as the server has it: a long read, such as
// `show -last 10000`, is no fault.
func (s *sqlStore) begin(ctx context.Context, write bool) (*sql.Tx, error) {
	if s.d.driver != "pgx" {
		return s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: !write})
	}
	o := &sql.TxOptions{}
	if !write {
		o = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := s.db.BeginTx(ctx, o)
	if err != nil {
		return nil, err
	}
	set := []string{fmt.Sprintf("SET LOCAL lock_timeout = %d", s.wait.Milliseconds())}
	if write {
		set = append(set, fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", s.wait.Milliseconds()))
	}
	for _, q := range set {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

// LockWaitError is a statement that waited for a lock another connection
// held, such as another writer's transaction, up to the limit.
type LockWaitError struct {
	DB    string        // the database, its password left out
	Limit time.Duration // Options.LockWait
	Err   error         // the database's error
}

func (e *LockWaitError) Error() string {
	return fmt.Sprintf("history: %s: waited %v, the limit, for a lock another connection holds "+
		"(another writer's transaction, going on or stopped midway): nothing was written (%v)", e.DB, e.Limit, e.Err)
}

func (e *LockWaitError) Unwrap() error { return e.Err }

// lockWait is err as a *LockWaitError where it is a wait for a lock past
// the limit (SQLite's busy timeout, PostgreSQL's lock_timeout), else err.
func (s *sqlStore) lockWait(err error) error {
	se, code := sqliteError(err)
	var pe *pgconn.PgError
	switch {
	case code&0xff == sqliteBusy:
		return &LockWaitError{DB: s.dsn, Limit: s.wait, Err: se}
	case errors.As(err, &pe) && pe.Code == "55P03": // lock_not_available
		return &LockWaitError{DB: s.dsn, Limit: s.wait, Err: pe}
	}
	return err
}

// explain is an error of Open: a wait for a lock as a *LockWaitError,
// else err, naming the database.
func (s *sqlStore) explain(err error) error {
	if lw := s.lockWait(err); lw != err {
		return lw
	}
	return fmt.Errorf("history: %s: %w", s.dsn, err)
}
