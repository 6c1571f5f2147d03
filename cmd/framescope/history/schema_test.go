package history

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// eachDB runs f on a fresh SQLite file and on a fresh PostgreSQL
// database (a server of the test's own), with the driver's name and
// source, for a raw connection beside the store's.
func eachDB(t *testing.T, f func(t *testing.T, dsn, driver, source string)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "h.db")
		f(t, "sqlite:"+path, "sqlite", "file:"+path)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Start(t)
		f(t, dsn, "pgx", dsn)
	})
}

// rawDB is a connection of the test's own to a store's database.
func rawDB(t *testing.T, driver, source string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Only a writer migrates: a reader of a history at an older schema
// version is refused, naming both versions and saying what to do, and
// leaves it as it is; a writer migrates it, and readers then read it.
// A newer version is refused to readers and writers alike.
func TestSchemaVersions(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn, driver, source string) {
		ctx := context.Background()
		raw := rawDB(t, driver, source)
		// A history of version 0: its version table, nothing else.
		exec(t, raw, `CREATE TABLE framescope_schema (version BIGINT NOT NULL)`, `INSERT INTO framescope_schema VALUES (0)`)
		_, err := Open(ctx, dsn, Options{ReadOnly: true})
		if err == nil || !strings.Contains(err.Error(), "schema is at version 0, older than this framescope's (1)") ||
			!strings.Contains(err.Error(), "history add with this framescope migrates it") {
			t.Fatalf("a reader of a version 0 history: %v", err)
		}
		var v int
		if err := raw.QueryRow(`SELECT version FROM framescope_schema`).Scan(&v); err != nil || v != 0 {
			t.Fatalf("after a reader the schema is at version %d (%v), want 0: a reader migrated it", v, err)
		}
		w, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatalf("a writer of a version 0 history: %v", err)
		}
		w.Close()
		r, err := Open(ctx, dsn, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("a reader after the writer migrated: %v", err)
		}
		r.Close()
		exec(t, raw, `UPDATE framescope_schema SET version = 99`)
		for _, o := range []Options{{ReadOnly: true}, {}} {
			if _, err := Open(ctx, dsn, o); err == nil || !strings.Contains(err.Error(), "version 99") {
				t.Errorf("%+v: a schema at version 99 opened: %v", o, err)
			}
		}
	})
}

// A reader makes no database: a SQLite file that is not there, or a
// PostgreSQL database without a history, is an error that says so, and
// is left as it was.
func TestReaderMakesNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn, driver, source string) {
		_, err := Open(context.Background(), dsn, Options{ReadOnly: true})
		want := "it holds no framescope history"
		if driver == "sqlite" {
			want = "h.db: no such file"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a reader of no history: %v, want %q", err, want)
		}
		if driver == "sqlite" {
			if _, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the reader made the file: %v", err)
			}
			return
		}
		var tables int
		err = rawDB(t, driver, source).QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables)
		if err != nil || tables != 0 {
			t.Errorf("after the reader the database has %d tables (%v), want 0", tables, err)
		}
	})
}
