package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestLayerEnv: framescope run adds the layer to what the program's
// environment already asks of the loader, its directory and its name
// first (the loader orders layers as it finds them, and the layer must be
// the outermost), and replaces every FRAMESCOPE_ variable but
// FRAMESCOPE_LAYER and the test knobs (FRAMESCOPE_TEST_*) with its own.
func TestLayerEnv(t *testing.T) {
	got := layerEnv([]string{"HOME=/root", "VK_ADD_LAYER_PATH=/vl", "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
		"FRAMESCOPE_OUT=old", "FRAMESCOPE_WINDOW=9", "FRAMESCOPE_LAYER=/l", "FRAMESCOPE_TEST_FIRST_TIMED=1ms"}, "/fs", []string{"FRAMESCOPE_OUT=new"})
	want := []string{"HOME=/root", "VK_ADD_LAYER_PATH=/fs:/vl", "VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile:VK_LAYER_KHRONOS_validation",
		"FRAMESCOPE_LAYER=/l", "FRAMESCOPE_TEST_FIRST_TIMED=1ms", "VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile", "FRAMESCOPE_OUT=new"}
	if !slices.Equal(got, want) {
		t.Errorf("layerEnv:\ngot  %q\nwant %q", got, want)
	}
	got = layerEnv([]string{"VK_LOADER_LAYERS_ENABLE=*validation"}, "/fs", nil)
	want = []string{"VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile,*validation", "VK_ADD_LAYER_PATH=/fs", "VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile"}
	if !slices.Equal(got, want) {
		t.Errorf("layerEnv with VK_LOADER_LAYERS_ENABLE:\ngot  %q\nwant %q", got, want)
	}
}

// fakeLayer is a directory that findLayer takes for a built layer (its
// files there, empty): enough for what run checks before the program.
func fakeLayer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range layerFiles {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runOut runs framescope run -o out on a shell script that leaves a mark
// (a file, returned) when it runs, then does script.
func runOut(t *testing.T, out, script string) (code int, stderr, mark string) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "ran")
	var eout, serr bytes.Buffer
	code = runRun([]string{"-layer", fakeLayer(t), "-o", out, "--", "sh", "-c", "touch '" + mark + "'; " + script}, &eout, &serr)
	return code, serr.String(), mark
}

// -o is touched only when there is a trace to put there: an earlier
// trace stays when the program does not exist or made none (it was
// removed before the program ran).
func TestRunKeepsOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "old.perfetto-trace")
	if err := os.WriteFile(out, []byte("an earlier trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sout, serr bytes.Buffer
	if code := runRun([]string{"-layer", fakeLayer(t), "-o", out, "--", filepath.Join(t.TempDir(), "no-such-program")}, &sout, &serr); code != 2 {
		t.Errorf("a program that does not exist: exit %d, want 2:\n%s", code, serr.String())
	}
	if code, stderr, _ := runOut(t, out, "exit 1"); code != 1 || !strings.Contains(stderr, "exited with status 1") {
		t.Errorf("a program that exits 1: exit %d, want 1 and its end said:\n%s", code, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "an earlier trace" {
		t.Errorf("-o after the runs: %q, %v; want the earlier trace as it was", b, err)
	}
}

// An -o that cannot take the trace is refused, exit 2, before the
// program runs: a directory (it became a regular file), a named pipe (a
// device node was replaced alike), a place no one can write (the whole
// program ran, then "no trace").
func TestRunRefusesOut(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, says string }{
		{dir, "is a directory"},
		{fifo, "is not a regular file"},
		{"/proc/framescope-test.perfetto-trace", "cannot take the trace"},
	} {
		code, stderr, mark := runOut(t, c.out, "true")
		if code != 2 || !strings.Contains(stderr, c.says) {
			t.Errorf("-o %s: exit %d, want 2 and %q:\n%s", c.out, code, c.says, stderr)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Errorf("-o %s: the program ran", c.out)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("the directory given as -o: %v, %v", st, err)
	}
	if st, err := os.Stat(fifo); err != nil || st.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the named pipe given as -o: %v, %v", st, err)
	}
}

// run -h names each flag's argument as a word a user types (Go's flag
// package takes a back-quoted word of the usage for it: it showed
// "-layer make layer").
func TestRunHelp(t *testing.T) {
	var sout, serr bytes.Buffer
	runRun([]string{"-h"}, &sout, &serr)
	for _, want := range []string{"-layer DIR", "-o FILE"} {
		if !strings.Contains(serr.String(), want) {
			t.Errorf("run -h has no %q:\n%s", want, serr.String())
		}
	}
}

// A -live address the layer could not listen on is refused, exit 2,
// before the program runs (before, the program ran without a live view
// and the layer said why on its way).
func TestRunRefusesLive(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct{ addr, says string }{
		{"bad", "missing port"},
		{"127.0.0.1:99999", "from 0 to 65535"},
		{taken.Addr().String(), "in use"},
	} {
		mark := filepath.Join(t.TempDir(), "ran")
		var sout, serr bytes.Buffer
		code := runRun([]string{"-layer", fakeLayer(t), "-live", c.addr, "--", "sh", "-c", "touch '" + mark + "'"}, &sout, &serr)
		if code != 2 || !strings.Contains(serr.String(), c.says) {
			t.Errorf("-live %s: exit %d, want 2 and %q:\n%s", c.addr, code, c.says, serr.String())
		}
		if _, err := os.Stat(mark); err == nil {
			t.Errorf("-live %s: the program ran", c.addr)
		}
	}
}

// An -o that is a link to a trace not written yet names the link's
// target, which the trace makes (before, the layer refused the link at
// its end and left the trace beside it); links in a loop are refused.
// An -o that is where this command's output goes (a shell's
// `> f` with -o /dev/stdout, or -o f itself) is refused: the trace would
// replace the program's output.
func TestRunOutLinksAndOutput(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.perfetto-trace")
	link := filepath.Join(dir, "link.perfetto-trace")
	if err := os.Symlink("real.perfetto-trace", link); err != nil {
		t.Fatal(err)
	}
	if path, _, err := checkOut(link); err != nil || path != target {
		t.Errorf("-o a link to a file not written yet: %q, %v; want %q", path, err, target)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if _, _, err := checkOut(loop); err == nil || !strings.Contains(err.Error(), "links") {
		t.Errorf("-o a link to itself: %v, want refused", err)
	}

	out := filepath.Join(dir, "out.txt")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = saved }()
	if _, _, err := checkOut(out); err == nil || !strings.Contains(err.Error(), "output goes") {
		t.Errorf("-o %s, this command's output: %v, want refused", out, err)
	}
}
