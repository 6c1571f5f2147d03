package perfetto

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
)

const killChildEnv = "FRAMESCOPE_PERFETTO_KILL_CHILD"

// killChild is the helper process of TestKilledWriter: it writes frames to
// the file named by killChildEnv until it is killed (or a minute passes).
func killChild(path string) {
	f, err := os.Create(path)
	if err != nil {
		os.Exit(3)
	}
	w := NewWriter(f, Options{FlushBytes: 4 << 10}) // flushes inside batches too
	g := benchspans.New(9)
	b := g.Batch(nil)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		g.Batch(b)
		g.Frame(b)
		b.Drops.Evicted++
		if err := w.Write(b); err != nil {
			os.Exit(4)
		}
	}
	os.Exit(0)
}

// TestKilledWriter kills a process in the middle of writing a trace and
// checks that what it left reads back, in Read and in the trace processor.
func TestKilledWriter(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		killChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "killed.pftrace")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has written a few hundred KiB, mid-stream.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 300<<10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the writing process wrote too little in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the writing process was not killed by SIGKILL: %v", err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Read(bytes.NewReader(data))
	var cut *CutError
	if err != nil && !errors.As(err, &cut) {
		t.Fatalf("Read of the killed writer's trace: %v", err)
	}
	if cut != nil {
		// The writer hands the file whole batches (and whole packets when
		// a batch passes FlushBytes), but Linux may cut a write(2) to a
		// regular file short when SIGKILL arrives during it (the
		// page-by-page copy stops at a fatal signal): Read keeps the
		// batches before the cut.
		t.Logf("%v", cut)
		if cut.Size != int64(len(data)) || !cut.Marked || cut.Batches == 0 {
			t.Errorf("the cut of a trace of %d bytes: %+v", len(data), *cut)
		}
	}
	if len(tr.Spans) < 1000 || len(tr.Frames) < 10 {
		t.Fatalf("read back %d spans and %d frames from %d bytes", len(tr.Spans), len(tr.Frames), len(data))
	}
	if tr.Drops.Evicted != uint64(len(tr.Frames)) {
		t.Errorf("%d frames came back with %d evicted, one a batch", len(tr.Frames), tr.Drops.Evicted)
	}
	checkNesting(t, tr)
	checkKilledInProcessor(t, path, data, tr, cut)
}

// checkKilledInProcessor loads the killed writer's trace into the trace
// processor: it takes the file as it is without a complaint, with every
// span Read found ended, and those of the batch in progress at the cut
// besides; cut to where Read stopped, it has Read's spans exactly.
func checkKilledInProcessor(t *testing.T, path string, data []byte, tr *timeline.Trace, cut *CutError) {
	const ended = "select count(*) as n from slice where dur >= 0 and name != 'framescope dropped'"
	s := tpcheck.Check(t, path)
	if r := s.MustQuery(quietStats); len(r) > 0 {
		t.Errorf("the trace processor counted problems: %v", r)
	}
	n := s.MustQuery(ended)[0]["n"].(int64)
	if n < int64(len(tr.Spans)) || (cut == nil && n != int64(len(tr.Spans))) {
		t.Errorf("the trace processor has %d ended slices, Read has %d spans (cut: %v)", n, len(tr.Spans), cut)
	}
	if cut == nil {
		return
	}
	whole := filepath.Join(t.TempDir(), "whole.pftrace")
	if err := os.WriteFile(whole, data[:cut.Read], 0o644); err != nil {
		t.Fatal(err)
	}
	if n := tpcheck.Check(t, whole).MustQuery(ended)[0]["n"].(int64); n != int64(len(tr.Spans)) {
		t.Errorf("up to the last whole batch, the trace processor has %d ended slices, Read has %d spans", n, len(tr.Spans))
	}
}

// checkNesting checks that spans of each track nest properly at the depth
// they claim.
func checkNesting(t *testing.T, tr *timeline.Trace) {
	t.Helper()
	byTrack := map[timeline.TrackID][]timeline.Span{}
	for _, s := range tr.Spans {
		byTrack[s.Track] = append(byTrack[s.Track], s)
	}
	for id, spans := range byTrack {
		var stack []timeline.Span
		for _, s := range spans { // Read returns a track's spans in begin order
			for len(stack) > 0 && stack[len(stack)-1].End <= s.Start && !(stack[len(stack)-1].End == s.Start && s.Start == s.End && int(s.Depth) == len(stack)) {
				stack = stack[:len(stack)-1]
			}
			if int(s.Depth) != len(stack) || (len(stack) > 0 && s.End > stack[len(stack)-1].End) {
				t.Fatalf("track %d: span %+v does not nest at its depth (stack %d)", id, s, len(stack))
			}
			stack = append(stack, s)
		}
	}
}
