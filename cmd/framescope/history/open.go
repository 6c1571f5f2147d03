package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
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
	blob   string // a column of bytes' type
	// lock, where set, serializes migrations across processes, inside
	// their transaction.
	lock string
	// hasSchema is a query of one boolean: whether framescope_schema is
	// there.
	hasSchema string
}

var (
	sqlite = dialect{name: "SQLite", driver: "sqlite", serial: "INTEGER PRIMARY KEY", blob: "BLOB",
		hasSchema: `SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'framescope_schema'`}
	postgres = dialect{name: "PostgreSQL", driver: "pgx", serial: "BIGSERIAL PRIMARY KEY", blob: "BYTEA",
		lock:      "SELECT pg_advisory_xact_lock(7305184922)", // any fixed key: the history's
		hasSchema: `SELECT to_regclass('framescope_schema') IS NOT NULL`}
)

// arg is the placeholder of argument i (from 1).
func (d dialect) arg(i int) string {
	if d.driver == "pgx" {
		return fmt.Sprintf("$%d", i)
	}
	return "?"
}

// Options configure Open. The zero value opens a history to write, as
// `history add` does.
type Options struct {
	// ReadOnly opens a history to read it (`check`, `show`): it must be
	// there, at this build's schema version; nothing is made, migrated
	// or written, so read access is all it needs.
	ReadOnly bool
	// LockWait bounds each wait for a lock another connection holds
	// (0: DefaultLockWait); a wait past it ends the statement with a
	// *LockWaitError.
	LockWait time.Duration
}

// DefaultLockWait is how long a statement waits for another
// connection's lock: a writer for another writer's transaction to end.
const DefaultLockWait = 30 * time.Second

// Open opens the history a DSN names: "sqlite:PATH" (a file) or a
// PostgreSQL URL ("postgres://" or "postgresql://"; what speaks its
// protocol, such as CockroachDB, too).
//
// To write (the zero Options), a SQLite file is made where missing and
// put in WAL mode, so that readers never hold up a writer, and the schema
// is made or migrated. To read (Options.ReadOnly), the database must hold
// a history at this build's schema version: a missing file, a database
// without one and another version are errors that say which and what to
// do; a SQLite file is opened read-only, so a read-only file or directory
// will do. A database that does not answer within 10 s is an error that
// says so. Options are optional, so that a call written before them
// still builds and still opens to write; a second is an error.
func Open(ctx context.Context, dsn string, opts ...Options) (Store, error) {
	var o Options
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		return nil, fmt.Errorf("history: Open takes one Options, not %d", len(opts))
	}
	d, path, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if o.LockWait <= 0 {
		o.LockWait = DefaultLockWait
	}
	s := &sqlStore{d: d, dsn: redact(dsn), readOnly: o.ReadOnly, wait: o.LockWait}
	switch {
	case d.driver == "pgx":
		err = s.connect(ctx, dsn)
	case o.ReadOnly:
		err = s.openSQLiteToRead(ctx, path)
	default:
		err = checkDir(path)
		if err == nil {
			err = s.connect(ctx, sqliteSource(path, sqliteWrite, o.LockWait))
		}
	}
	if err == nil && o.ReadOnly {
		err = s.checkSchema(ctx)
	} else if err == nil {
		err = s.migrate(ctx)
	}
	if err != nil {
		if s.db != nil {
			s.db.Close()
		}
		return nil, s.explain(err)
	}
	return s, nil
}

// connect opens the driver's source and makes sure the database answers.
func (s *sqlStore) connect(ctx context.Context, source string) error {
	db, err := sql.Open(s.d.driver, source)
	if err != nil {
		return err
	}
	if s.d.driver == "sqlite" {
		db.SetMaxOpenConns(1) // one writer a process: SQLite has one at a time anyway
	}
	s.db = db
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		return fmt.Errorf("does not answer: %w", err)
	}
	return nil
}

// checkDir says whether the directory of the file at path is there: a
// writer makes the file, not its directories, and SQLite would call a
// missing one "out of memory".
func checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist (history add makes the file, not its directories)", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// parseDSN returns the dialect a DSN names, and for SQLite the file's
// path.
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
		return sqlite, path, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			return dialect{}, "", fmt.Errorf("history: %s: %w", redact(dsn), err)
		}
		return postgres, "", nil
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
