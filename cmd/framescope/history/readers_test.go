//go:build unix

package history_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
	"github.com/framescope/framescope/internal/testkit/pgtest"
)

// readDirEnv names, in the process TestReaderNeedsReadAccessOnly starts
// as user nobody, the folder of the histories it reads.
const readDirEnv = "FRAMESCOPE_TEST_READ_ONLY_DIR"

// A reader needs read access alone: a SQLite file it cannot write, in a
// folder it cannot write (ro) or in one it can (rw), and a PostgreSQL
// role granted SELECT alone, each read the history; an add through the
// reader is refused, and the file is as it was. A reader of another
// user's file leaves no -wal or -shm file beside it, which that user's
// add could not write.
func TestReaderNeedsReadAccessOnly(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := os.Getenv(readDirEnv)
		if dir == "" {
			dir = readOnlyHistories(t)
			if os.Geteuid() == 0 { // file modes do not bind root
				asNobody(t, "^TestReaderNeedsReadAccessOnly$/^sqlite$", readDirEnv+"="+dir)
				return
			}
		}
		for _, sub := range []string{"ro", "rw"} {
			path := filepath.Join(dir, sub, "h.db")
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				f.Close()
				t.Fatalf("%s can be written: the test would test nothing", path)
			}
			before := digest(t, path)
			readOnly(t, "sqlite:"+path)
			if digest(t, path) != before {
				t.Errorf("%s: the reader changed the file", sub)
			}
			for _, beside := range []string{path + "-wal", path + "-shm"} {
				if _, err := os.Stat(beside); err == nil && os.Getenv(readDirEnv) != "" {
					t.Errorf("a reader of another user's file left %s", beside)
				}
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(readDirEnv) != "" {
			t.Skip("the process that reads the SQLite files")
		}
		dsn := pgtest.Start(t)
		addSome(t, dsn)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{`CREATE ROLE reader LOGIN`, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		readOnly(t, strings.Replace(dsn, "postgres://postgres@", "postgres://reader@", 1))
	})
}

// addSome records 3 commits of testbed t, branch main.
func addSome(t *testing.T, dsn string) {
	t.Helper()
	s, err := history.Open(context.Background(), dsn, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 3 {
		c := history.Commit{Testbed: "t", Branch: "main", SHA: fmt.Sprintf("c%d", i), Seq: int64(i)}
		if _, err := s.Add(context.Background(), c, []history.Run{run(rng, c.SHA, 3)}); err != nil {
			t.Fatal(err)
		}
	}
}

// readOnly opens the history addSome made to read, reads it, and tries
// to add to it.
func readOnly(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	s, err := history.Open(ctx, dsn, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader: %v", err)
	}
	defer s.Close()
	if h, err := s.Load(ctx, "t", "main", 10); err != nil || len(h.Commits) != 3 || len(h.Series) != 7 {
		t.Fatalf("a reader read %d commits, %d series (%v), want 3 and 7", len(h.Commits), len(h.Series), err)
	}
	c := history.Commit{Testbed: "t", Branch: "main", SHA: "new", Seq: 9}
	if _, err := s.Add(ctx, c, []history.Run{run(rand.New(rand.NewPCG(1, 1)), "new", 1)}); err == nil {
		t.Errorf("an add through a reader went through")
	}
}

// readOnlyHistories makes two histories, each a file no one may write:
// ro/h.db in a folder no one may write, rw/h.db in one anyone may. Their
// parent lets anyone in (t.TempDir's parents let no one else in).
func readOnlyHistories(t *testing.T) string {
	root, err := os.MkdirTemp("", "framescope-history-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(filepath.Join(root, "ro"), 0o755)
		os.RemoveAll(root)
	})
	for _, sub := range []string{"ro", "rw"} {
		dir := filepath.Join(root, sub)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		addSome(t, "sqlite:"+filepath.Join(dir, "h.db"))
		if err := os.Chmod(filepath.Join(dir, "h.db"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for path, mode := range map[string]fs.FileMode{root: 0o755, filepath.Join(root, "ro"): 0o555, filepath.Join(root, "rw"): 0o777} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// asNobody runs the tests pattern names again, as user nobody, in a copy
// of this test binary that nobody may run, with env added; it fails where
// they fail or none passed.
func asNobody(t *testing.T, pattern, env string) {
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("running as root, the test needs user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "framescope-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "history.test")
	copySelf(t, bin)
	cmd := exec.Command(bin, "-test.run="+pattern, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+strings.NewReplacer("^", "", "$", "").Replace(pattern)) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

// copySelf copies this test binary to path.
func copySelf(t *testing.T, path string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func digest(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
