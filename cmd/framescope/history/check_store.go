package history

import (
	"context"
	"database/sql"
	"slices"
)

// CheckStore checks the newest last commits of testbed's branch in s:
// Check of what s.Load reads, in one snapshot. The History it returns
// holds the window's commits and runs, and the series of its findings
// alone, all they name. A store of this package's is read without
// holding every value: the series a few at a time, each reduced to what
// the check reads (a mean a commit), so that a check of 10,000 commits of
// 1,000 zones reads in seconds and holds some hundreds of MB.
func CheckStore(ctx context.Context, s Store, testbed, branch string, last int, o CheckOptions) (History, CheckResult, error) {
	if err := o.check(); err != nil {
		return History{}, CheckResult{}, err
	}
	ss, ok := s.(*sqlStore)
	if !ok {
		h, err := s.Load(ctx, testbed, branch, last)
		if err != nil {
			return h, CheckResult{}, err
		}
		r, err := Check(h, o)
		h.Series = foundOnly(h.Series, r)
		return h, r, err
	}
	var h History
	var r CheckResult
	err := ss.read(ctx, testbed, branch, last, &h, func(tx *sql.Tx, ids []int64) (err error) {
		r, err = ss.check(ctx, tx, &h, ids, o)
		return err
	})
	return h, r, err
}

// check is CheckStore's within read's transaction.
func (s *sqlStore) check(ctx context.Context, tx *sql.Tx, h *History, ids []int64, o CheckOptions) (CheckResult, error) {
	var skip []string
	if !o.Tails {
		skip = []string{"p95"}
	}
	w, err := s.pointsOf(ctx, tx, h, ids, skip)
	if err != nil {
		return CheckResult{}, err
	}
	if len(h.Commits) < o.MinCommits {
		return CheckResult{Verdict: TooShort}, nil
	}
	sids, err := w.counted()
	if err != nil {
		return CheckResult{}, err
	}
	sids = slices.DeleteFunc(sids, func(id int64) bool { read, _ := checked(w.keys[id].Metric, o); return !read })
	var g gathered
	accs := make([]seriesAcc, loadChunk)
	start := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			_, work := checked(w.keys[sids[j]].Metric, o)
			accs[j-lo].reset(w.keys[sids[j]], work, len(h.Commits))
		}
	}
	done := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			g.take(&accs[j-lo], o)
		}
	}
	w.each(sids, loadChunk, start, done, func(j int, at runAt, p packedPoint) {
		accs[j%loadChunk].add(at.commit, p.value, p.whole, p.isWhole)
	})
	r := g.result(len(h.Commits), o)
	h.Series = w.found(sids, r)
	return r, nil
}

// found is the series of r's findings, with their values.
func (w *windowRows) found(sids []int64, r CheckResult) []Series {
	named := map[SeriesKey]bool{}
	for _, f := range r.Findings {
		named[f.Series] = true
	}
	var series []Series
	sids = slices.DeleteFunc(slices.Clone(sids), func(id int64) bool { return !named[w.keys[id]] })
	for _, id := range sids {
		series = append(series, Series{Key: w.keys[id], Values: make([]Value, 0, w.count[id])})
	}
	w.each(sids, max(len(sids), 1), nil, nil, func(j int, ra runAt, p packedPoint) {
		series[j].Values = append(series[j].Values, p.valueAt(ra))
	})
	sortSeries(series)
	return series
}

// foundOnly is the series of r's findings, of series.
func foundOnly(series []Series, r CheckResult) []Series {
	return slices.DeleteFunc(series, func(sr Series) bool {
		return !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Series == sr.Key })
	})
}
