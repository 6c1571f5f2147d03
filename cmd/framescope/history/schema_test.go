package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
		if err == nil || !strings.Contains(err.Error(), "schema is at version 0, older than this framescope's (2)") ||
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

// A history of version 1, its points a row each, is migrated by a writer
// to packed rows: every value comes back as it was (an exact count past
// 2^63 exact), and the table of points is gone.
func TestMigratePointsToPacked(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn, driver, source string) {
		ctx := context.Background()
		raw := rawDB(t, driver, source)
		serial := map[string]string{"sqlite": "INTEGER PRIMARY KEY", "pgx": "BIGSERIAL PRIMARY KEY"}[driver]
		for _, stmt := range strings.Split(migrations[0].sql, ";") {
			exec(t, raw, strings.ReplaceAll(stmt, "{{serial}}", serial))
		}
		exec(t, raw, `CREATE TABLE framescope_schema (version BIGINT NOT NULL)`, `INSERT INTO framescope_schema VALUES (1)`,
			`INSERT INTO commits (id, testbed, branch, sha, seq) VALUES (1, 't', 'main', 'c1', 1), (2, 't', 'main', 'c2', 2)`,
			`INSERT INTO runs (id, commit_id, digest, path) VALUES (1, 1, 'r1', 'a'), (2, 2, 'r2', 'b'), (3, 2, 'r3', 'c')`,
			`INSERT INTO series (id, kind, track, name, metric) VALUES (1, 'gpu', 'q', 'z', 'p50'), (2, 'gpu', 'q', 'z', 'p95'),
				(3, 'gpu', 'q', 'z', 'vertex_shader_invocations')`,
			`INSERT INTO points (run_id, series_id, value, whole, n) VALUES (1, 1, 10, NULL, 5), (1, 2, 12, NULL, 5),
				(1, 3, 1e19, '18446744073709551615', 5), (2, 1, 11, NULL, 6), (3, 1, 13, NULL, 7), (3, 3, 4, '4', 7)`)
		w := mustOpen(t, dsn, Options{})
		h, err := w.Load(ctx, "t", "main", 10)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, sr := range h.Series {
			got += sr.Key.String() + ":"
			for _, v := range sr.Values {
				got += fmt.Sprintf(" %d.%d=%g", v.Commit, v.Run, v.Value)
				if v.IsWhole {
					got += fmt.Sprintf("(%d)", v.Whole)
				}
			}
			got += "\n"
		}
		want := "gpu:q/z p50: 0.0=10 1.0=11 1.1=13\ngpu:q/z p95: 0.0=12\n" +
			"gpu:q/z vertex_shader_invocations: 0.0=1e+19(18446744073709551615) 1.1=4(4)\n"
		if got != want || fmt.Sprint(h.Runs) != "[[r1] [r2 r3]]" {
			t.Errorf("after the migration:\n%s%v\nwant:\n%s[[r1] [r2 r3]]", got, h.Runs, want)
		}
		var v int
		if err := raw.QueryRow(`SELECT version FROM framescope_schema`).Scan(&v); err != nil || v != Version {
			t.Errorf("schema at version %d (%v), want %d", v, err, Version)
		}
		if _, err := raw.Exec(`SELECT count(*) FROM points`); err == nil {
			t.Error("the table of points is still there")
		}
	})
}
