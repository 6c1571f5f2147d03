package tpcheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The one processor of this test binary, shared by every Session. A
// Session whose trace is not the one loaded is loaded again on its next
// query, so sessions of parallel tests stay correct.
var (
	mu       sync.Mutex
	proc     processor
	eng      *nodeEngine
	loadedID uint64
	nextID   uint64
)

// Session is one trace file loaded into the trace processor.
type Session struct {
	tb   testing.TB
	path string
	id   uint64
}

// Load loads the trace file at path into the trace processor. It skips the
// test when no trace processor is installed (see the package comment), and
// fails it when the processor cannot be started or rejects the file.
func Load(tb testing.TB, path string) *Session {
	tb.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatalf("tpcheck: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if err := start(); err != nil {
		if errors.Is(err, errNotFound) && os.Getenv(EnvRequire) != "1" {
			tb.Skipf("tpcheck: %v", err)
		}
		tb.Fatalf("tpcheck: %v", err)
	}
	nextID++
	s := &Session{tb: tb, path: abs, id: nextID}
	if err := s.loadLocked(); err != nil {
		tb.Fatalf("tpcheck: loading %s into the trace processor (%s): %v", path, proc, err)
	}
	return s
}

// start starts the processor if it is not running; mu is held.
func start() error {
	if eng != nil && eng.err == nil {
		return nil
	}
	p, err := locate()
	if err != nil {
		return err
	}
	e, err := startNode(p)
	if err != nil {
		return fmt.Errorf("starting the trace processor (%s): %w", p, err)
	}
	proc, eng, loadedID = p, e, 0
	return nil
}

func (s *Session) loadLocked() error {
	if err := start(); err != nil {
		return err
	}
	loadedID = 0
	if err := eng.load(s.path); err != nil {
		return err
	}
	loadedID = s.id
	return nil
}

// Result runs sql on the trace and returns its columns and rows.
func (s *Session) Result(sql string) (Result, error) {
	mu.Lock()
	defer mu.Unlock()
	if loadedID != s.id || eng == nil || eng.err != nil {
		if err := s.loadLocked(); err != nil {
			return Result{}, fmt.Errorf("reloading %s: %w", s.path, err)
		}
	}
	return eng.query(sql)
}

// Query runs sql on the trace and returns one map per row, from column name
// to value: nil (NULL), int64, float64, string or []byte.
func (s *Session) Query(sql string) ([]map[string]any, error) {
	r, err := s.Result(sql)
	if err != nil {
		return nil, err
	}
	return r.Maps(), nil
}

// MustQuery is Query that fails the test on error.
func (s *Session) MustQuery(sql string) []map[string]any {
	s.tb.Helper()
	rows, err := s.Query(sql)
	if err != nil {
		s.tb.Fatalf("tpcheck: %s: %v\nquery: %s", s.path, err, sql)
	}
	return rows
}

// StatsSQL selects the import problems that Check fails on.
const StatsSQL = `select name, idx, severity, value from stats where severity in ('error', 'data_loss') and value > 0`

// Check loads the trace at path and fails the test if the trace processor
// counted any error or data loss while importing it, naming each stat. It
// returns the session for further queries.
func Check(tb testing.TB, path string) *Session {
	tb.Helper()
	s := Load(tb, path)
	rows := s.MustQuery(StatsSQL)
	if len(rows) > 0 {
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "\n  %v[%v] %v = %v", r["name"], r["idx"], r["severity"], r["value"])
		}
		tb.Errorf("tpcheck: %s: the trace processor reported problems importing it:%s", path, b.String())
	}
	return s
}
