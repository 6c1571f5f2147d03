package history

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
)

func (s *sqlStore) Load(ctx context.Context, testbed, branch string, last int) (History, error) {
	if last <= 0 || last > MaxLoad {
		return History{}, fmt.Errorf("history: %d commits asked for: from 1 to %d", last, MaxLoad)
	}
	h, err := s.load(ctx, testbed, branch, last)
	if err == nil {
		err = s.stamp.unchanged()
	}
	return h, s.connLost(s.lockWait(err))
}

// load reads the history in one transaction, writers going on beside it;
// a testbed and branch of no commit are an error naming what there is.
func (s *sqlStore) load(ctx context.Context, testbed, branch string, last int) (History, error) {
	var h History
	tx, err := s.begin(ctx, false)
	if err != nil {
		return h, fmt.Errorf("history: %w", err)
	}
	defer tx.Rollback()
	a := s.d.arg
	rows, err := tx.QueryContext(ctx, `SELECT id, sha, seq FROM commits WHERE testbed = `+a(1)+` AND branch = `+a(2)+`
		ORDER BY seq DESC, id DESC LIMIT `+a(3), testbed, branch, last)
	if err != nil {
		return h, fmt.Errorf("history: %w", err)
	}
	var ids []int64
	for rows.Next() {
		c := Commit{Testbed: testbed, Branch: branch}
		var id int64
		if err := rows.Scan(&id, &c.SHA, &c.Seq); err != nil {
			rows.Close()
			return h, fmt.Errorf("history: %w", err)
		}
		ids = append(ids, id)
		h.Commits = append(h.Commits, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("history: %w", err)
	}
	slices.Reverse(ids)
	slices.Reverse(h.Commits)
	if len(ids) == 0 {
		return h, s.unknown(ctx, tx, testbed, branch)
	}
	if err := s.loadPoints(ctx, tx, &h, ids); err != nil {
		return h, fmt.Errorf("history: %w", err)
	}
	return h, nil
}

// loadPoints reads the runs and points of the commits ids (h.Commits'
// ids, in order) into h.
func (s *sqlStore) loadPoints(ctx context.Context, tx *sql.Tx, h *History, ids []int64) error {
	a := s.d.arg
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	h.Runs = make([][]string, len(ids))
	type runAt struct{ commit, run int }
	runs := map[int64]runAt{}
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.commit_id, r.digest FROM runs r JOIN commits c ON c.id = r.commit_id
		WHERE c.testbed = `+a(1)+` AND c.branch = `+a(2)+` AND c.seq >= `+a(3)+` ORDER BY r.id`,
		h.Commits[0].Testbed, h.Commits[0].Branch, h.Commits[0].Seq)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, commit int64
		var digest string
		if err := rows.Scan(&id, &commit, &digest); err != nil {
			rows.Close()
			return err
		}
		ci, ok := at[commit]
		if !ok {
			continue // a commit of the same first seq past the window
		}
		runs[id] = runAt{ci, len(h.Runs[ci])}
		h.Runs[ci] = append(h.Runs[ci], digest)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT p.run_id, s.kind, s.track, s.name, s.metric, p.value, p.whole
		FROM points p JOIN series s ON s.id = p.series_id JOIN runs r ON r.id = p.run_id JOIN commits c ON c.id = r.commit_id
		WHERE c.testbed = `+a(1)+` AND c.branch = `+a(2)+` AND c.seq >= `+a(3),
		h.Commits[0].Testbed, h.Commits[0].Branch, h.Commits[0].Seq)
	if err != nil {
		return err
	}
	defer rows.Close()
	bySeries := map[SeriesKey]int{}
	for rows.Next() {
		var run int64
		var k SeriesKey
		var v Value
		var whole sql.NullString
		if err := rows.Scan(&run, &k.Kind, &k.Track, &k.Name, &k.Metric, &v.Value, &whole); err != nil {
			return err
		}
		ra, ok := runs[run]
		if !ok {
			continue
		}
		v.Commit, v.Run = ra.commit, ra.run
		if whole.Valid {
			if v.Whole, err = strconv.ParseUint(whole.String, 10, 64); err != nil {
				return fmt.Errorf("series %s: a whole count %q: %w", k, whole.String, err)
			}
			v.IsWhole = true
		}
		i, ok := bySeries[k]
		if !ok {
			i = len(h.Series)
			bySeries[k] = i
			h.Series = append(h.Series, Series{Key: k})
		}
		h.Series[i].Values = append(h.Series[i].Values, v)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.SortFunc(h.Series, func(x, y Series) int { return cmp.Compare(x.Key.String(), y.Key.String()) })
	for _, sr := range h.Series {
		slices.SortFunc(sr.Values, func(x, y Value) int {
			return cmp.Or(cmp.Compare(x.Commit, y.Commit), cmp.Compare(x.Run, y.Run))
		})
	}
	return nil
}
