package history

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx": PostgreSQL, and what speaks its protocol
	_ "modernc.org/sqlite"             // "sqlite": pure Go
)

// dialect is what differs between the databases the store speaks to.
type dialect struct {
	name   string
	driver string
	serial string // an id column's type
	// lock, where set, serializes migrations across processes, inside
	// their transaction.
	lock string
}

var (
	sqlite   = dialect{name: "SQLite", driver: "sqlite", serial: "INTEGER PRIMARY KEY"}
	postgres = dialect{name: "PostgreSQL", driver: "pgx", serial: "BIGSERIAL PRIMARY KEY",
		lock: "SELECT pg_advisory_xact_lock(7305184922)"} // any fixed key: the history's
)

// arg is the placeholder of argument i (from 1).
func (d dialect) arg(i int) string {
	if d.driver == "pgx" {
		return fmt.Sprintf("$%d", i)
	}
	return "?"
}

// Open opens the history a DSN names, making or migrating its schema:
// "sqlite:PATH" (a file, made if missing, in WAL mode so that readers and
// a writer go on at once, writers waiting their turn up to 30 s), or a
// PostgreSQL URL ("postgres://" or "postgresql://"; what speaks its
// protocol, such as CockroachDB, too). A database that does not answer
// within 10 s is an error that says so.
func Open(ctx context.Context, dsn string) (Store, error) {
	d, source, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(d.driver, source)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", redact(dsn), err)
	}
	if d.driver == "sqlite" {
		db.SetMaxOpenConns(1) // one writer a process: SQLite has one at a time anyway
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("history: %s does not answer: %w", redact(dsn), err)
	}
	s := &sqlStore{db: db, d: d}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("history: %s: %w", redact(dsn), err)
	}
	return s, nil
}

func parseDSN(dsn string) (dialect, string, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" || strings.ContainsAny(path, "?#") {
			return dialect{}, "", fmt.Errorf("history: %q: sqlite:PATH names a file (no ? or #)", dsn)
		}
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return dialect{}, "", fmt.Errorf("history: %q: %s is not a file", dsn, path)
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(30000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate") // a writer takes the lock at BEGIN, not midway
		return sqlite, "file:" + path + "?" + q.Encode(), nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			return dialect{}, "", fmt.Errorf("history: %s: %w", redact(dsn), err)
		}
		return postgres, dsn, nil
	}
	return dialect{}, "", fmt.Errorf("history: %q: a database is sqlite:PATH, or a postgres:// URL", redact(dsn))
}

// redact leaves a URL's password out of messages.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
