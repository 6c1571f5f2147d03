// Package history is the store behind `framescope history`: per-run zone
// summaries of a project's commits, on a testbed and branch, in a
// database that CI jobs write and `check` reads.
//
//	w, err := history.Open(ctx, "sqlite:ci.db") // or "postgres://user@host/db"
//	added, err := w.Add(ctx, history.Commit{Testbed: "H100", Branch: "main", SHA: sha, Seq: n}, runs)
//	r, err := history.Open(ctx, "sqlite:ci.db", history.Options{ReadOnly: true})
//	h, err := r.Load(ctx, "H100", "main", 500)
//	h, res, err := history.CheckStore(ctx, r, "H100", "main", 30, history.DefaultCheck) // check's verdict
//
// A run is one trace's summaries: for each zone, its p50 and p95 and each
// pipeline statistic it counted (a point each), never its frames, so
// that a history of 10,000 commits of 1,000 zones stays small. Records
// are idempotent by (testbed, branch, commit, run): a run is the digest of
// its trace, and a retried CI job adds nothing twice; a commit recorded
// again with another sequence number is refused, and changes nothing.
//
// One implementation serves SQLite (pure Go: the CLI stays cgo-free) and
// PostgreSQL (a team's shared store, many CI machines writing at once),
// through database/sql. The schema is versioned, and migrated by a
// writer's Open; a reader's Open changes nothing, and needs read access
// alone. A wait for another connection's lock is bounded
// (Options.LockWait).
package history

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Store is a history: what `framescope history` asks of a database.
type Store interface {
	// Add records runs of one commit, in one transaction: those already
	// recorded (by digest) are left as they are. It returns how many it
	// added.
	Add(ctx context.Context, c Commit, runs []Run) (int, error)
	// Load returns the newest last commits of a testbed and branch, in
	// order of their sequence numbers, with their runs' points, read in
	// one snapshot. A testbed and branch of no commit are an error,
	// ErrUnknown, that lists what the history holds.
	Load(ctx context.Context, testbed, branch string, last int) (History, error)
	Close() error
}

// Commit is one commit of a branch, on a testbed: Seq orders the commits
// of a branch (a commit time, or a CI build number).
type Commit struct {
	Testbed, Branch, SHA string
	Seq                  int64
}

// Run is one run of a commit: the digest of its trace, which names it,
// and its points.
type Run struct {
	Digest string
	Path   string // where the trace was, for people
	Points []Point
}

// Point is one zone's value of one metric in a run: "p50" and "p95" of
// its durations (ns), or a pipeline statistic's count per occurrence
// (exact where IsWhole). N is how many times the zone ran.
type Point struct {
	Kind, Track, Name, Metric string
	Value                     float64
	Whole                     uint64
	IsWhole                   bool
	N                         int64
}

// SeriesKey names a series: a zone and one metric of it.
type SeriesKey struct {
	Kind, Track, Name, Metric string
}

func (k SeriesKey) String() string { return k.Kind + ":" + k.Track + "/" + k.Name + " " + k.Metric }

// History is a branch's commits on a testbed, oldest first, with each
// series' values.
type History struct {
	Commits []Commit
	Runs    [][]string // each commit's runs (digests), in the order they were added
	Series  []Series   // by key
}

// Series is one series' values: a value for each run that has the zone.
type Series struct {
	Key    SeriesKey
	Values []Value
}

// Value is one run's value of a series.
type Value struct {
	Commit, Run int // indices into History.Commits and its Runs
	Value       float64
	Whole       uint64
	IsWhole     bool
}

// Limits on what a history holds, checked where it comes in.
const (
	MaxText   = 1024    // bytes of a testbed, branch, track, zone name or path
	MaxSHA    = 128     // bytes of a commit's name
	MaxRuns   = 50      // runs in one Add (as framescope diff takes a side)
	MaxPoints = 1 << 20 // points of one run
	MaxLoad   = 100_000 // commits one Load returns
)

// NameError is a name the history cannot hold: what it names, the name,
// and the rule it breaks (such as "is not UTF-8 text"), which callers
// may count by.
type NameError struct {
	What, Name, Rule string
}

func (e *NameError) Error() string {
	switch {
	case e.Name == "":
		return fmt.Sprintf("history: the %s %s", e.What, e.Rule)
	case len(e.Name) > 64:
		return fmt.Sprintf("history: the %s of %d bytes %s", e.What, len(e.Name), e.Rule)
	}
	return fmt.Sprintf("history: the %s %q %s", e.What, e.Name, e.Rule)
}

func checkText(what, s string, max int) error {
	rule := ""
	switch {
	case s == "":
		rule = "is empty"
	case len(s) > max:
		rule = fmt.Sprintf("is over the limit of %d bytes", max)
	case !utf8.ValidString(s):
		rule = "is not UTF-8 text"
	case strings.ContainsRune(s, 0):
		// UTF-8, but PostgreSQL's text holds no NUL; other control
		// characters it holds, and every output escapes.
		rule = `holds a NUL (\x00), a control character no name in the history may hold`
	default:
		return nil
	}
	return &NameError{What: what, Name: s, Rule: rule}
}

// Check says what is wrong with k, if anything: a *NameError, where one
// of its names is one the history cannot hold.
func (k SeriesKey) Check() error {
	for _, f := range []struct{ what, s string }{
		{"zone's kind", k.Kind}, {"zone's track", k.Track}, {"zone's name", k.Name}, {"metric", k.Metric},
	} {
		if err := checkText(f.what, f.s, MaxText); err != nil {
			return err
		}
	}
	return nil
}

// Check says what is wrong with c, if anything.
func (c Commit) Check() error {
	for _, f := range []struct {
		what, s string
		max     int
	}{{"testbed", c.Testbed, MaxText}, {"branch", c.Branch, MaxText}, {"commit", c.SHA, MaxSHA}} {
		if err := checkText(f.what, f.s, f.max); err != nil {
			return err
		}
		if strings.TrimSpace(f.s) == "" {
			return fmt.Errorf("history: the %s %q is white space alone", f.what, f.s)
		}
		// What names a commit is printed in every report, a line each.
		if strings.IndexFunc(f.s, unicode.IsControl) >= 0 {
			return fmt.Errorf("history: the %s %q holds a control character", f.what, f.s)
		}
	}
	if c.Seq < 0 {
		return fmt.Errorf("history: commit %s: sequence number %d is negative", c.SHA, c.Seq)
	}
	return nil
}

func checkRuns(runs []Run) error {
	if len(runs) > MaxRuns {
		return fmt.Errorf("history: %d runs, over the limit of %d a commit at once", len(runs), MaxRuns)
	}
	for _, r := range runs {
		if err := checkText("run's digest", r.Digest, MaxText); err != nil {
			return err
		}
		if len(r.Path) > MaxText {
			return fmt.Errorf("history: a run's path is %d bytes, over the limit of %d", len(r.Path), MaxText)
		}
		if len(r.Points) > MaxPoints {
			return fmt.Errorf("history: run %s has %d points, over the limit of %d", r.Path, len(r.Points), MaxPoints)
		}
		for _, p := range r.Points {
			if err := (SeriesKey{p.Kind, p.Track, p.Name, p.Metric}).Check(); err != nil {
				return fmt.Errorf("%w (run %s)", err, r.Path)
			}
			if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || p.N < 0 {
				return fmt.Errorf("history: run %s: %s: value %g of %d occurrences", r.Path, SeriesKey{p.Kind, p.Track, p.Name, p.Metric}, p.Value, p.N)
			}
		}
	}
	return nil
}
