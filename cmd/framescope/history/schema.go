package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// migrations are the schema's versions, in order: migration i takes the
// schema from version i to i+1, by its SQL, then its step in Go where it
// has one. A database at a version newer than this build knows is
// refused, not written. {{serial}} is the dialect's id column, {{blob}}
// its bytes' type.
var migrations = []struct {
	sql  string
	step func(ctx context.Context, tx *sql.Tx, s *sqlStore) error
}{
	// 1: commits of a branch on a testbed, their runs, the series (a zone
	// and a metric) and the points (a run's value of a series). A whole
	// count is kept as decimal text: a pipeline statistic may pass 2^63.
	{sql: `CREATE TABLE commits (
		id {{serial}},
		testbed TEXT NOT NULL,
		branch TEXT NOT NULL,
		sha TEXT NOT NULL,
		seq BIGINT NOT NULL,
		UNIQUE (testbed, branch, sha)
	);
	CREATE INDEX commits_by_seq ON commits (testbed, branch, seq);
	CREATE TABLE runs (
		id {{serial}},
		commit_id BIGINT NOT NULL REFERENCES commits (id),
		digest TEXT NOT NULL,
		path TEXT NOT NULL,
		UNIQUE (commit_id, digest)
	);
	CREATE TABLE series (
		id {{serial}},
		kind TEXT NOT NULL,
		track TEXT NOT NULL,
		name TEXT NOT NULL,
		metric TEXT NOT NULL,
		UNIQUE (kind, track, name, metric)
	);
	CREATE TABLE points (
		run_id BIGINT NOT NULL REFERENCES runs (id),
		series_id BIGINT NOT NULL REFERENCES series (id),
		value DOUBLE PRECISION NOT NULL,
		whole TEXT,
		n BIGINT NOT NULL,
		PRIMARY KEY (run_id, series_id)
	)`},
	// 2: a run's points of one metric in one row, packed (packed.go): a
	// row a point was read at some microseconds a point, a minute for a
	// check of 10,000 commits of 1,000 zones. The points move, and their
	// table goes.
	{sql: `CREATE TABLE run_values (
		run_id BIGINT NOT NULL REFERENCES runs (id),
		metric TEXT NOT NULL,
		data {{blob}} NOT NULL,
		PRIMARY KEY (run_id, metric)
	)`, step: packPoints},
}

// Version is the schema version this build writes.
var Version = len(migrations)

// migrate brings a writer's schema to Version, in one transaction (a
// migration half done is none), and refuses a newer one. A schema at
// Version is left as it is: a writer then needs no right to make tables.
func (s *sqlStore) migrate(ctx context.Context) error {
	tx, err := s.begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return err
		}
	}
	v, ok, err := s.version(ctx, tx)
	switch {
	case err != nil:
		return err
	case v > Version:
		return fmt.Errorf("the schema is at version %d; this framescope knows up to %d: use a newer one", v, Version)
	case ok && v == Version:
		return tx.Commit()
	case !ok:
		if _, err := tx.ExecContext(ctx, `CREATE TABLE framescope_schema (version BIGINT NOT NULL)`); err != nil {
			return err
		}
	}
	for ; v < Version; v++ {
		if err := s.migrateTo(ctx, tx, v+1); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM framescope_schema`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO framescope_schema (version) VALUES (`+s.d.arg(1)+`)`, v); err != nil {
		return err
	}
	return tx.Commit()
}

// migrateTo takes the schema from version v-1 to v.
func (s *sqlStore) migrateTo(ctx context.Context, tx *sql.Tx, v int) error {
	m := migrations[v-1]
	for _, stmt := range strings.Split(m.sql, ";") {
		stmt = strings.NewReplacer("{{serial}}", s.d.serial, "{{blob}}", s.d.blob).Replace(stmt)
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if m.step == nil {
		return nil
	}
	return m.step(ctx, tx, s)
}

// checkSchema makes sure that a history to read is there, at Version:
// a reader migrates nothing, so another version is an error that says
// what to do.
func (s *sqlStore) checkSchema(ctx context.Context) error {
	tx, err := s.begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, ok, err := s.version(ctx, tx)
	switch {
	case err != nil:
		return err
	case !ok:
		return errors.New("it holds no framescope history (check and show make none; history add does)")
	case v > Version:
		return fmt.Errorf("the history's schema is at version %d, newer than this framescope's (%d): read it with a newer framescope", v, Version)
	case v < Version:
		return fmt.Errorf("the history's schema is at version %d, older than this framescope's (%d): "+
			"history add with this framescope migrates it (check and show never do), or read it with the framescope that wrote it", v, Version)
	}
	return nil
}

// version is the schema's version; ok is false where the database holds
// no framescope_schema table.
func (s *sqlStore) version(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (v int, ok bool, err error) {
	if err := q.QueryRowContext(ctx, s.d.hasSchema).Scan(&ok); err != nil || !ok {
		return 0, false, err
	}
	switch err := q.QueryRowContext(ctx, `SELECT version FROM framescope_schema`).Scan(&v); err {
	case nil, sql.ErrNoRows: // none: made, nothing migrated yet
		return v, true, nil
	default:
		return 0, true, err
	}
}
