package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are the schema's versions, in order: migration i takes the
// schema from version i to i+1. A database at a version newer than this
// build knows is refused, not written. {{serial}} is the dialect's id
// column.
var migrations = []string{
	// 1: commits of a branch on a testbed, their runs, the series (a zone
	// and a metric) and the points (a run's value of a series). A whole
	// count is kept as decimal text: a pipeline statistic may pass 2^63.
	`CREATE TABLE commits (
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
	)`,
}

// Version is the schema version this build writes.
var Version = len(migrations)

// migrate brings the schema to Version, in one transaction (a
// migration half done is none), and refuses a newer one.
func (s *sqlStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS framescope_schema (version BIGINT NOT NULL)`); err != nil {
		return err
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM framescope_schema`).Scan(&v); err {
	case nil:
	case sql.ErrNoRows:
		if _, err := tx.ExecContext(ctx, `INSERT INTO framescope_schema (version) VALUES (0)`); err != nil {
			return err
		}
	default:
		return err
	}
	if v > Version {
		return fmt.Errorf("the schema is at version %d; this framescope knows up to %d: use a newer one", v, Version)
	}
	for ; v < Version; v++ {
		for _, stmt := range strings.Split(migrations[v], ";") {
			stmt = strings.ReplaceAll(stmt, "{{serial}}", s.d.serial)
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE framescope_schema SET version = `+s.d.arg(1), v); err != nil {
		return err
	}
	return tx.Commit()
}
