package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// sqlStore is the Store of a SQL database.
type sqlStore struct {
	db       *sql.DB
	d        dialect
	dsn      string        // for messages: the password left out
	readOnly bool          // Options.ReadOnly
	wait     time.Duration // Options.LockWait
	stamp    *fileStamp    // a SQLite file read without locks: what it was at Open
}

func (s *sqlStore) Close() error { return s.db.Close() }

// ErrConflict is a commit recorded before with other data.
var ErrConflict = errors.New("history: a commit recorded before with other data")

// rowsPerInsert bounds the rows of one INSERT of series (PostgreSQL
// takes at most 65,535 arguments a statement; SQLite 32,766).
const rowsPerInsert = 1000

func (s *sqlStore) Add(ctx context.Context, c Commit, runs []Run) (int, error) {
	if s.readOnly {
		return 0, fmt.Errorf("history: %s is open to read only", s.dsn)
	}
	if err := c.Check(); err != nil {
		return 0, err
	}
	if err := checkRuns(runs); err != nil {
		return 0, err
	}
	n, err := s.add(ctx, c, runs)
	return n, s.connLost(s.lockWait(err))
}

// add records runs of c in one transaction.
func (s *sqlStore) add(ctx context.Context, c Commit, runs []Run) (int, error) {
	tx, err := s.begin(ctx, true)
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	defer tx.Rollback()
	id, err := s.commit(ctx, tx, c)
	if err != nil {
		return 0, err
	}
	series, err := s.series(ctx, tx, runs)
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	added := 0
	for _, r := range runs {
		ok, err := s.run(ctx, tx, id, r, series)
		if err != nil {
			return 0, fmt.Errorf("history: run %s: %w", r.Path, err)
		}
		if ok {
			added++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	return added, nil
}

// commit returns c's id, recording it where it is new; one recorded with
// another sequence number is a conflict.
func (s *sqlStore) commit(ctx context.Context, tx *sql.Tx, c Commit) (int64, error) {
	a := s.d.arg
	_, err := tx.ExecContext(ctx, `INSERT INTO commits (testbed, branch, sha, seq) VALUES (`+a(1)+`, `+a(2)+`, `+a(3)+`, `+a(4)+`)
		ON CONFLICT (testbed, branch, sha) DO NOTHING`, c.Testbed, c.Branch, c.SHA, c.Seq)
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	var id, seq int64
	err = tx.QueryRowContext(ctx, `SELECT id, seq FROM commits WHERE testbed = `+a(1)+` AND branch = `+a(2)+` AND sha = `+a(3),
		c.Testbed, c.Branch, c.SHA).Scan(&id, &seq)
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	if seq != c.Seq {
		return 0, fmt.Errorf("%w: commit %s of branch %s on testbed %q is recorded with sequence number %d, not %d: nothing added",
			ErrConflict, c.SHA, c.Branch, c.Testbed, seq, c.Seq)
	}
	return id, nil
}

// series records the series the runs' points name, in key order (so
// that writers at once take their rows in one order), and returns every
// series' id by key.
func (s *sqlStore) series(ctx context.Context, tx *sql.Tx, runs []Run) (map[SeriesKey]int64, error) {
	keys := map[SeriesKey]bool{}
	for _, r := range runs {
		for _, p := range r.Points {
			keys[SeriesKey{p.Kind, p.Track, p.Name, p.Metric}] = true
		}
	}
	ids, err := s.seriesIDs(ctx, tx)
	if err != nil {
		return nil, err
	}
	var missing []SeriesKey
	for k := range keys {
		if _, ok := ids[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	slices.SortFunc(missing, func(x, y SeriesKey) int { return cmp.Compare(x.String(), y.String()) })
	for len(missing) > 0 {
		n := min(len(missing), rowsPerInsert)
		var q strings.Builder
		args := make([]any, 0, 4*n)
		q.WriteString(`INSERT INTO series (kind, track, name, metric) VALUES `)
		for i, k := range missing[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "(%s, %s, %s, %s)", s.d.arg(4*i+1), s.d.arg(4*i+2), s.d.arg(4*i+3), s.d.arg(4*i+4))
			args = append(args, k.Kind, k.Track, k.Name, k.Metric)
		}
		q.WriteString(` ON CONFLICT (kind, track, name, metric) DO NOTHING`)
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return nil, err
		}
		missing = missing[n:]
	}
	return s.seriesIDs(ctx, tx)
}

func (s *sqlStore) seriesIDs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[SeriesKey]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, track, name, metric FROM series`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[SeriesKey]int64{}
	for rows.Next() {
		var k SeriesKey
		var id int64
		if err := rows.Scan(&id, &k.Kind, &k.Track, &k.Name, &k.Metric); err != nil {
			return nil, err
		}
		ids[k] = id
	}
	return ids, rows.Err()
}

// run records r under commit id, and reports whether it was new.
func (s *sqlStore) run(ctx context.Context, tx *sql.Tx, commit int64, r Run, series map[SeriesKey]int64) (bool, error) {
	a := s.d.arg
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO runs (commit_id, digest, path) VALUES (`+a(1)+`, `+a(2)+`, `+a(3)+`)
		ON CONFLICT (commit_id, digest) DO NOTHING RETURNING id`, commit, r.Digest, r.Path).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // recorded before: a retried job
	}
	if err != nil {
		return false, err
	}
	byMetric := map[string][]packedPoint{}
	seen := make(map[int64]bool, len(r.Points))
	for _, p := range r.Points {
		k := SeriesKey{p.Kind, p.Track, p.Name, p.Metric}
		sid := series[k]
		if seen[sid] {
			return false, fmt.Errorf("two points of series %s", k)
		}
		seen[sid] = true
		byMetric[p.Metric] = append(byMetric[p.Metric], packedPoint{series: sid, value: p.Value, n: p.N, whole: p.Whole, isWhole: p.IsWhole})
	}
	if err := s.insertValues(ctx, tx, id, byMetric); err != nil {
		return false, err
	}
	return true, nil
}
