package main

import (
	"errors"
	"os"
	"os/exec"
	pathpkg "path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConvertOutputKinds: convert replaces only a regular file, keeping
// its permissions (0644 for a new one), and refuses a symbolic link, a
// FIFO, a directory or a device, leaving it as it was.
func TestConvertOutputKinds(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "src.json", synthTrace(3, 5, 2, nil), formatChrome, false)
	out := pathpkg.Join(t.TempDir(), "new.json")
	if code, _, errs := runCLI("convert", src, out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new OUT: %v, %v; want mode 0644", st.Mode(), err)
	}
	// An existing file keeps its mode.
	if err := os.Chmod(out, 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("convert", src, out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced OUT has mode %v, want 0640 kept", st.Mode())
	}
	link := pathpkg.Join(dir, "link.json")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	fifo := pathpkg.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := pathpkg.Join(dir, "sub.json")
	os.Mkdir(sub, 0o755)
	for _, tc := range []struct{ path, what string }{
		{link, "symbolic link"}, {fifo, "FIFO"}, {sub, "directory"}, {"/dev/null", "device"},
	} {
		before, _ := os.Lstat(tc.path)
		code, _, errs := runCLI("convert", "-to", "json", src, tc.path)
		if code != 2 || !strings.Contains(errs, tc.what) || !strings.Contains(errs, "not a regular file") {
			t.Errorf("convert to a %s: exit %d: %s", tc.what, code, errs)
		}
		after, err := os.Lstat(tc.path)
		if err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v -> %v (%v)", tc.path, before.Mode(), after.Mode(), err)
		}
	}
	noTemporaries(t, dir)
}

// TestConvertFailureCleans: a write that fails leaves OUT as it was and
// no temporary file.
func TestConvertFailureCleans(t *testing.T) {
	t.Run("anonymous", testConvertFailureCleans)
	testNamedTemp = true
	defer func() { testNamedTemp = false }()
	t.Run("named", testConvertFailureCleans)
}

func testConvertFailureCleans(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "src.json", synthTrace(3, 5, 2, nil), formatChrome, false)
	out := pathpkg.Join(dir, "out.json")
	os.WriteFile(out, []byte("old"), 0o600)
	testHookWritten = func() error {
		if testNamedTemp {
			ents, _ := os.ReadDir(dir)
			named := false
			for _, e := range ents {
				named = named || strings.HasPrefix(e.Name(), ".out.json"+tmpMark)
			}
			if !named {
				t.Errorf("no temporary named .out.json%s* while writing: %v", tmpMark, ents)
			}
		}
		return errHookFail
	}
	code, _, errs := runCLI("convert", src, out)
	testHookWritten = nil
	if code != 2 || !strings.Contains(errs, "hook") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("OUT is %.20q, want it untouched", b)
	}
	noTemporaries(t, dir)
}

var errHookFail = errors.New("hook")

const convertKillEnv = "FRAMESCOPE_CONVERT_KILL_CHILD"

// TestConvertKilled: a convert killed by SIGKILL while it writes leaves
// neither OUT nor a temporary file.
func TestConvertKilled(t *testing.T) {
	if args := os.Getenv(convertKillEnv); args != "" {
		a := strings.Split(args, "\n")
		testHookWritten = func() error {
			os.WriteFile(a[2], nil, 0o600) // ready
			time.Sleep(time.Minute)
			return nil
		}
		os.Exit(run([]string{"convert", a[0], a[1]}, os.Stdout, os.Stderr))
	}
	dir, side := t.TempDir(), t.TempDir()
	src := writeFile(t, side, "src.json", synthTrace(3, 50, 2, nil), formatChrome, false)
	out, ready := pathpkg.Join(dir, "out.pftrace"), pathpkg.Join(side, "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestConvertKilled$")
	cmd.Env = append(os.Environ(), convertKillEnv+"="+src+"\n"+out+"\n"+ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never wrote OUT")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	noTemporaries(t, dir)
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("OUT exists after a kill")
	}
}

// noTemporaries fails if dir holds a temporary file of convert.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
