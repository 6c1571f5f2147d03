package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
)

// framescope run adds the frames' limits to a streamed Perfetto trace
// read back whole: the trace processor shows a verdict per frame, and the
// trace reads back as before. A Chrome trace, a gzipped one and one cut
// short and one whose process still runs are left as they are.
func TestRunAppendsLimits(t *testing.T) {
	dir := t.TempDir()
	tr := boundTrace()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.Options{})
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := filepath.Join(dir, "streamed.perfetto-trace")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	before, cut, err := loadTraceCut(p)
	if err != nil || cut != nil {
		t.Fatal(err, cut)
	}
	var note bytes.Buffer
	limitsNote(&note, p, 0, before, nil)
	if note.Len() != 0 {
		t.Errorf("a note for a Perfetto trace: %s", note.String())
	}
	after, _, err := loadTraceCut(p)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Errorf("the trace reads back otherwise after the limits were added: %v", err)
	}
	rows := tpcheck.Check(t, p).MustQuery(`select s.name, count(*) as n from slice s join track t on s.track_id = t.id
		where t.name = 'frame limits' group by s.name order by s.name`)
	if got := rowsText(rows); got != "CPU-bound 2, GPU-bound 7" {
		t.Errorf("verdict slices: %s", got)
	}

	for _, f := range []struct {
		name   string
		format traceFormat
		gz     bool
	}{{"chrome.json", formatChrome, false}, {"gz.perfetto-trace.gz", formatPerfetto, true}} {
		path := writeFile(t, dir, f.name, tr, f.format, f.gz)
		was, _ := os.ReadFile(path)
		note.Reset()
		limitsNote(&note, path, 0, tr, nil)
		if now, _ := os.ReadFile(path); !bytes.Equal(was, now) || !strings.Contains(note.String(), "not an uncompressed Perfetto trace") {
			t.Errorf("%s: changed %v, note %q", f.name, !bytes.Equal(was, now), note.String())
		}
	}
	was, _ := os.ReadFile(p)
	limitsNote(&note, p, 0, tr, &traceCut{})
	if now, _ := os.ReadFile(p); !bytes.Equal(was, now) {
		t.Errorf("a trace cut short was added to")
	}
	note.Reset()
	limitsNote(&note, p, os.Getpid(), tr, nil) // a process still running: this one
	if now, _ := os.ReadFile(p); !bytes.Equal(was, now) || !strings.Contains(note.String(), "still runs") {
		t.Errorf("the trace of a process that still runs: changed %v, note %q", !bytes.Equal(was, now), note.String())
	}
}

func rowsText(rows []map[string]any) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprint(r["name"], " ", r["n"]))
	}
	return strings.Join(parts, ", ")
}

// framescope convert to Perfetto writes the frames' limits once: from a
// trace without them, and from one that has them (read back without them),
// with -render-stages too.
func TestConvertPerfettoLimits(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "src.json", boundTrace(), formatChrome, false)
	once := filepath.Join(dir, "once.perfetto-trace")
	twice := filepath.Join(dir, "twice.perfetto-trace")
	for _, c := range [][]string{{"convert", src, once}, {"convert", "-render-stages", once, twice}} {
		if code, _, errs := runCLI(c...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, errs)
		}
	}
	for _, p := range []string{once, twice} {
		rows := tpcheck.Check(t, p).MustQuery(`select s.name, count(*) as n from slice s join track t on s.track_id = t.id
			where t.name = 'frame limits' group by s.name order by s.name`)
		if got := rowsText(rows); got != "CPU-bound 2, GPU-bound 7" {
			t.Errorf("%s: verdict slices %s", filepath.Base(p), got)
		}
	}
}
