package history

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
)

func (s *sqlStore) Load(ctx context.Context, testbed, branch string, last int) (History, error) {
	var h History
	err := s.read(ctx, testbed, branch, last, &h, func(tx *sql.Tx, ids []int64) error {
		rows, err := s.pointsOf(ctx, tx, &h, ids, nil)
		if err != nil {
			return err
		}
		sids, err := rows.counted()
		if err != nil {
			return err
		}
		for _, id := range sids {
			h.Series = append(h.Series, Series{Key: rows.keys[id], Values: make([]Value, 0, rows.count[id])})
		}
		rows.each(sids, loadChunk, nil, nil, func(j int, at runAt, p packedPoint) {
			h.Series[j].Values = append(h.Series[j].Values, p.valueAt(at))
		})
		sortSeries(h.Series)
		return nil
	})
	return h, err
}

// read reads the window of the newest last commits of testbed's branch
// into h, and calls f in the same transaction, with the commits' ids;
// its errors come back as Load's do.
func (s *sqlStore) read(ctx context.Context, testbed, branch string, last int, h *History, f func(tx *sql.Tx, ids []int64) error) error {
	if last <= 0 || last > MaxLoad {
		return fmt.Errorf("history: %d commits asked for: from 1 to %d", last, MaxLoad)
	}
	err := s.load(ctx, testbed, branch, last, h, f)
	if err == nil {
		err = s.stamp.unchanged()
	}
	return s.connLost(s.lockWait(err))
}

// load reads the window into h in one transaction, writers going on
// beside it, and calls f; a testbed and branch of no commit are an error
// naming what there is.
func (s *sqlStore) load(ctx context.Context, testbed, branch string, last int, h *History, f func(tx *sql.Tx, ids []int64) error) error {
	tx, err := s.begin(ctx, false)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer tx.Rollback()
	a := s.d.arg
	rows, err := tx.QueryContext(ctx, `SELECT id, sha, seq FROM commits WHERE testbed = `+a(1)+` AND branch = `+a(2)+`
		ORDER BY seq DESC, id DESC LIMIT `+a(3), testbed, branch, last)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	var ids []int64
	for rows.Next() {
		c := Commit{Testbed: testbed, Branch: branch}
		var id int64
		if err := rows.Scan(&id, &c.SHA, &c.Seq); err != nil {
			rows.Close()
			return fmt.Errorf("history: %w", err)
		}
		ids = append(ids, id)
		h.Commits = append(h.Commits, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	slices.Reverse(ids)
	slices.Reverse(h.Commits)
	if len(ids) == 0 {
		return s.unknown(ctx, tx, testbed, branch)
	}
	if err := f(tx, ids); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// windowRows are the rows of run_values of a window's runs, read, with
// each series' count of values in them and its key.
type windowRows struct {
	rows  []keptRow
	count map[int64]int
	keys  map[int64]SeriesKey
}

// keptRow is a row of run_values of a run in the window.
type keptRow struct {
	at   runAt
	data []byte
}

// pointsOf reads the runs of the commits ids (h.Commits', in order) into
// h, and their rows of values but those of the metrics skip names.
func (s *sqlStore) pointsOf(ctx context.Context, tx *sql.Tx, h *History, ids []int64, skip []string) (*windowRows, error) {
	runs, err := s.loadRuns(ctx, tx, h, ids)
	if err != nil {
		return nil, err
	}
	w := &windowRows{count: map[int64]int{}}
	if w.keys, err = s.seriesKeys(ctx, tx); err != nil {
		return nil, err
	}
	a := s.d.arg
	q := `SELECT v.run_id, v.data FROM run_values v JOIN runs r ON r.id = v.run_id JOIN commits c ON c.id = r.commit_id
		WHERE c.testbed = ` + a(1) + ` AND c.branch = ` + a(2) + ` AND c.seq >= ` + a(3)
	args := []any{h.Commits[0].Testbed, h.Commits[0].Branch, h.Commits[0].Seq}
	for _, m := range skip {
		args = append(args, m)
		q += ` AND v.metric <> ` + a(len(args))
	}
	q += ` ORDER BY c.seq, c.id, r.id` // the values in order: no sort
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var run int64
		var data []byte
		if err := rows.Scan(&run, &data); err != nil {
			return nil, err
		}
		ra, ok := runs[run]
		if !ok {
			continue // a commit of the same first seq past the window
		}
		if err := unpack(data, func(p packedPoint) { w.count[p.series]++ }); err != nil {
			return nil, fmt.Errorf("run %s of commit %s: %w", h.Runs[ra.commit][ra.run], h.Commits[ra.commit].SHA, err)
		}
		w.rows = append(w.rows, keptRow{ra, data})
	}
	return w, rows.Err()
}

// counted is the ids of the series the rows hold, in order.
func (w *windowRows) counted() ([]int64, error) {
	sids := make([]int64, 0, len(w.count))
	for id := range w.count {
		if _, ok := w.keys[id]; !ok {
			return nil, fmt.Errorf("%w: a point of a series the history does not name (id %d)", errPacked, id)
		}
		sids = append(sids, id)
	}
	slices.Sort(sids)
	return sids, nil
}

// loadChunk is how many series each reads at once.
const loadChunk = 32

// each calls point with every point of the series sids (ascending), row
// by row, chunk series at a time: appending to thousands of slices at
// once, a value to each in turn, missed the cache at every value. start
// and done, where set, are called before and after each chunk of series
// sids[lo:hi]. j is the point's series' index in sids; points of other
// series are passed over.
func (w *windowRows) each(sids []int64, chunk int, start, done func(lo, hi int), point func(j int, at runAt, p packedPoint)) {
	rs := make([]packedReader, len(w.rows))
	for i, r := range w.rows {
		rs[i], _ = newPackedReader(r.data) // whole: read in pointsOf
	}
	for lo := 0; lo < len(sids); lo += chunk {
		hi := min(lo+chunk, len(sids))
		if start != nil {
			start(lo, hi)
		}
		for i := range rs {
			for j := lo; ; {
				p, ok, _ := rs[i].next(sids[hi-1])
				if !ok {
					break
				}
				for sids[j] < p.series {
					j++
				}
				if sids[j] == p.series {
					point(j, w.rows[i].at, p)
				}
			}
		}
		if done != nil {
			done(lo, hi)
		}
	}
}

// valueAt is p as a Value of the run at at.
func (p packedPoint) valueAt(at runAt) Value {
	return Value{Commit: at.commit, Run: at.run, Value: p.value, Whole: p.whole, IsWhole: p.isWhole}
}

// sortSeries puts series in order of their keys, and each one's values
// in order of commit and run.
func sortSeries(series []Series) {
	slices.SortFunc(series, func(x, y Series) int { return cmp.Compare(x.Key.String(), y.Key.String()) })
	for _, sr := range series {
		if !slices.IsSortedFunc(sr.Values, byCommitRun) { // the rows come in order of commits
			slices.SortFunc(sr.Values, byCommitRun)
		}
	}
}

func byCommitRun(x, y Value) int {
	return cmp.Or(cmp.Compare(x.Commit, y.Commit), cmp.Compare(x.Run, y.Run))
}

// runAt is a run's place in a History: its commit's index, and its own
// among the commit's runs.
type runAt struct{ commit, run int }

// loadRuns reads the runs of the commits ids into h.Runs, and returns
// each one's place by its id.
func (s *sqlStore) loadRuns(ctx context.Context, tx *sql.Tx, h *History, ids []int64) (map[int64]runAt, error) {
	a := s.d.arg
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	h.Runs = make([][]string, len(ids))
	runs := map[int64]runAt{}
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.commit_id, r.digest FROM runs r JOIN commits c ON c.id = r.commit_id
		WHERE c.testbed = `+a(1)+` AND c.branch = `+a(2)+` AND c.seq >= `+a(3)+` ORDER BY r.id`,
		h.Commits[0].Testbed, h.Commits[0].Branch, h.Commits[0].Seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, commit int64
		var digest string
		if err := rows.Scan(&id, &commit, &digest); err != nil {
			return nil, err
		}
		ci, ok := at[commit]
		if !ok {
			continue // a commit of the same first seq past the window
		}
		runs[id] = runAt{ci, len(h.Runs[ci])}
		h.Runs[ci] = append(h.Runs[ci], digest)
	}
	return runs, rows.Err()
}

// seriesKeys is every series' key by its id.
func (s *sqlStore) seriesKeys(ctx context.Context, tx *sql.Tx) (map[int64]SeriesKey, error) {
	ids, err := s.seriesIDs(ctx, tx)
	if err != nil {
		return nil, err
	}
	keys := make(map[int64]SeriesKey, len(ids))
	for k, id := range ids {
		keys[id] = k
	}
	return keys, nil
}
