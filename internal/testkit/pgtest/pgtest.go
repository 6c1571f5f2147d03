// Package pgtest starts a PostgreSQL server of a test's own: a fresh data
// directory in a temporary folder (initdb), listening on a local socket
// only, stopped and removed at the test's end. It runs the server as the
// "postgres" user when the test runs as root (PostgreSQL refuses root).
//
//	dsn := pgtest.Start(t) // "postgres://postgres@/framescope?host=/tmp/..."
//
// Without PostgreSQL's server programs the test is skipped, saying why,
// or fails where FRAMESCOPE_REQUIRE_POSTGRES=1 (make test, whose set-up
// installs them).
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// binDirs are where Debian puts the server's programs.
var binDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// Required reports whether PostgreSQL must be there (make test).
func Required() bool { return os.Getenv("FRAMESCOPE_REQUIRE_POSTGRES") == "1" }

func bin() (string, bool) {
	for _, d := range binDirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, true
		}
	}
	return "", false
}

// Start starts a server with a database "framescope" and returns its DSN.
func Start(t testing.TB) string {
	t.Helper()
	dir, ok := bin()
	if !ok {
		msg := "PostgreSQL's server is not installed (apt-get install postgresql; scripts/deps.sh does)"
		if Required() {
			t.Fatal(msg + " and FRAMESCOPE_REQUIRE_POSTGRES=1")
		}
		t.Skip(msg)
	}
	// Not t.TempDir: its parents are the test's alone (0700), which the
	// server's user could not enter.
	root, err := os.MkdirTemp("", "framescope-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	as := asUser(t, root)
	data, sock := filepath.Join(root, "data"), root
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, args[0]), args[1:]...)
		if as != nil {
			cmd = exec.Command("runuser", append([]string{"-u", as.Username, "--", filepath.Join(dir, args[0])}, args[1:]...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	run("pg_ctl", "-D", data, "-w", "-s", "-l", filepath.Join(root, "log"), "-o",
		fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c max_connections=64", sock), "start")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(dir, "pg_ctl"), "-D", data, "-w", "-s", "-m", "fast", "stop")
		if as != nil {
			cmd = exec.Command("runuser", "-u", as.Username, "--", filepath.Join(dir, "pg_ctl"), "-D", data, "-w", "-s", "-m", "fast", "stop")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("stopping PostgreSQL: %v\n%s", err, out)
		}
	})
	run("createdb", "-h", sock, "-U", "postgres", "framescope")
	return "postgres://postgres@/framescope?host=" + sock
}

// asUser gives root to the "postgres" user, where the test runs as root,
// and returns that user (nil: run as ourselves).
func asUser(t testing.TB, root string) *user.User {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, PostgreSQL needs its own user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(root, uid, gid); err != nil {
		t.Fatal(err)
	}
	return u
}
