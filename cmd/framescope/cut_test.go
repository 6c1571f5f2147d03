package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/benchspans"
)

// cutTrace writes three batches of a frame each with the library's
// writer, as the layer streams them, and cuts the file inside the third,
// as a writer killed mid-write leaves it. It returns the cut file, and
// where the second batch ends and the cut is.
func cutTrace(t testing.TB) (path string, end, cut int) {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.Options{})
	g := benchspans.New(3)
	b := g.Batch(nil)
	for i := range 3 {
		g.Batch(b)
		g.Frame(b)
		b.Drops.Evicted++
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			end = buf.Len()
		}
	}
	cut = end + (buf.Len()-end)/2
	path = filepath.Join(t.TempDir(), "cut.pftrace")
	if err := os.WriteFile(path, buf.Bytes()[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	return path, end, cut
}

// TestStatsCutTrace: stats reads a trace cut short up to its last whole
// batch, exits 0, and says where it was cut and how much reads back, in
// its text, Markdown and JSON.
func TestStatsCutTrace(t *testing.T) {
	p, end, cut := cutTrace(t)
	line := fmt.Sprintf("the trace was cut short at byte %d: the last %d bytes (a batch in progress, its content unknown) are not read; it reads back %d bytes, up to its last whole batch (2 batches), to frame 2",
		cut, cut-end, end)
	for _, args := range [][]string{{"stats", p}, {"stats", "--markdown", p}} {
		code, out, errs := runCLI(args...)
		if code != 0 || !strings.Contains(out, line) || !strings.Contains(out, "dropped: 2") {
			t.Errorf("%v: exit %d, stderr %q, output lacks %q or the drops of 2 batches:\n%s", args, code, errs, line, out)
		}
	}
	code, out, errs := runCLI("stats", "--json", p)
	var r statsReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("--json: exit %d, %v: %s", code, err, errs)
	}
	want := traceCut{Path: p, Bytes: int64(cut), ReadBytes: int64(end), LostBytes: int64(cut - end), Batches: 2, UpTo: "batch", LastFrame: 2}
	if r.Cut == nil || *r.Cut != want || r.Frames.Count != 2 || r.Drops.Evicted != 2 {
		t.Errorf("--json: cut %+v, %d frames, %d evicted; want %+v, 2 frames, 2 evicted", r.Cut, r.Frames.Count, r.Drops.Evicted, want)
	}
}

// TestCommandsSayCut: convert, diff and benchfmt read a trace cut short
// and say so on standard error (diff in its JSON too); what convert
// wrote is whole.
func TestCommandsSayCut(t *testing.T) {
	p, _, cut := cutTrace(t)
	out := filepath.Join(t.TempDir(), "out.json")
	say := fmt.Sprintf("cut short at byte %d", cut)
	for _, args := range [][]string{{"convert", p, out}, {"diff", p, p}, {"benchfmt", p}} {
		code, _, errs := runCLI(args...)
		if code == exitBadInput || !strings.Contains(errs, say) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	code, outs, _ := runCLI("diff", "--json", p, p)
	if code == exitBadInput || strings.Count(outs, `"whole_batches": 2`) != 2 {
		t.Errorf("diff --json: exit %d, no cut for each side:\n%s", code, outs)
	}
	if code, _, errs := runCLI("stats", out); code != 0 || errs != "" {
		t.Errorf("stats of the converted trace: exit %d, %s", code, errs)
	}
}
