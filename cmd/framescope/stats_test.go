package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	pathpkg "path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

func textFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := pathpkg.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStatsOutputs(t *testing.T) {
	dir := t.TempDir()
	tr := synthTrace(5, 50, 3, nil)
	tr.Drops = timeline.Drops{QueryLimit: 2, Evicted: 1}
	p := writeFile(t, dir, "t.pftrace", tr, formatPerfetto, false)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"stats", p}, []string{"z0", "frames: 50", "dropped: 3"}},
		{[]string{"stats", "--markdown", p}, []string{"| gpu | `z1` |", "**50 frames**"}},
		{[]string{"stats", "--frames", p}, []string{"frame", " 50  "}},
		{[]string{"stats", "--markdown", "--frames", p}, []string{"| 50 | "}},
		{[]string{"stats", p, "--json"}, []string{`"zone": "z2"`, `"count": 50`}},
	}
	for _, tc := range tests {
		code, out, errs := runCLI(tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
	for _, args := range [][]string{{"stats"}, {"stats", "--json", "--markdown", p}, {"stats", dir + "/missing"}, {"stats", "--bogus", p}} {
		if code, _, _ := runCLI(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestStatsValues checks the statistics against the synthetic trace.
func TestStatsValues(t *testing.T) {
	tr := synthTrace(6, 30, 2, nil)
	r := computeStats(tr)
	byZone := map[string]zoneStats{}
	for _, z := range r.Zones {
		byZone[z.Kind+":"+z.Zone] = z
	}
	if len(byZone) != 4 || byZone["gpu:z0"].Count != 30 || byZone["cpu:record"].Count != 30 {
		t.Fatalf("zones: %+v", r.Zones)
	}
	var maxZ1 int64
	for _, s := range tr.Spans {
		if tr.Name(s.Name) == "z1" {
			maxZ1 = max(maxZ1, s.Dur())
		}
	}
	if byZone["gpu:z1"].MaxNs != maxZ1 {
		t.Errorf("z1 max %d, want %d", byZone["gpu:z1"].MaxNs, maxZ1)
	}
	if r.Frames.Count != 30 {
		t.Fatalf("%d frames", r.Frames.Count)
	}
	f := r.Frames.Each[4]
	var gpu, cpu int64
	for _, s := range tr.Spans {
		if s.Frame == 5 && s.Depth == 0 {
			if s.Track == 2 {
				gpu += s.Dur()
			} else {
				cpu += s.Dur()
			}
		}
	}
	if f.Frame != 5 || f.GPUNs != gpu || f.CPUNs != cpu {
		t.Errorf("frame 5 totals %+v, want gpu %d cpu %d", f, gpu, cpu)
	}
}

// TestRoundTripStats converts Perfetto -> Chrome JSON -> Perfetto and
// checks that stats --json says the same of all three.
func TestRoundTripStats(t *testing.T) {
	dir := t.TempDir()
	pf := writeFile(t, dir, "a.perfetto-trace", synthTrace(7, 40, 3, nil), formatPerfetto, false)
	js := pathpkg.Join(dir, "b.json")
	back := pathpkg.Join(dir, "c.pftrace")
	for _, args := range [][]string{{"convert", pf, js}, {"convert", js, back}} {
		if code, _, errs := runCLI(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	var outs []string
	for _, p := range []string{pf, js, back} {
		code, out, errs := runCLI("stats", "--json", p)
		if code != 0 {
			t.Fatalf("stats %s: %s", p, errs)
		}
		var r statsReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Errorf("stats differ:\nperfetto:\n%.600s\nchrome:\n%.600s\nback:\n%.600s", outs[0], outs[1], outs[2])
	}
}

// TestStatsHugeSpans: two spans of 5e15 µs of one frame, on two threads,
// give a positive mean and a saturated frame total, not an int64 that
// wrapped negative.
func TestStatsHugeSpans(t *testing.T) {
	p := textFile(t, t.TempDir(), "huge.json", `[
{"ph":"X","pid":1,"tid":1,"ts":0,"dur":5e15,"name":"a","args":{"frame":1}},
{"ph":"X","pid":1,"tid":2,"ts":0,"dur":5e15,"name":"a","args":{"frame":1}}]`)
	code, out, errs := runCLI("stats", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r statsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Zones) != 1 || r.Zones[0].MeanNs != 5e18 {
		t.Errorf("zones %+v, want one of mean 5e18 ns", r.Zones)
	}
	if len(r.Frames.Each) != 1 || r.Frames.Each[0].CPUNs != math.MaxInt64 || r.Frames.CPU.MeanNs <= 0 {
		t.Errorf("frames %+v, want frame 1 of CPU time saturated at MaxInt64", r.Frames)
	}
	code, out, _ = runCLI("stats", p)
	if code != 0 || !strings.Contains(out, "9223372036.855s") || strings.Contains(out, "-9") {
		t.Errorf("exit %d, text output:\n%s", code, out)
	}
}

// stats prints each book of a trace's ledger against its drops, in
// text and JSON, marks one that does not balance, and says when a trace
// has no books.
func TestStatsLedger(t *testing.T) {
	base := &timeline.Trace{Names: []string{"", "z"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q"}},
		Spans: []timeline.Span{{Track: 1, Name: 1, Start: 10, End: 20}}}
	for _, c := range []struct {
		name   string
		ledger timeline.Ledger
		drops  timeline.Drops
		want   []string
		bal    bool
	}{
		{"balanced", timeline.Ledger{Zones: timeline.Book{Issued: 5, Delivered: 1, Evicted: 1}}, timeline.Drops{NoFrame: 3, Evicted: 1},
			[]string{"ledger zones: 5 issued = 1 delivered (1 in this trace) + 0 open + 4 lost (no_frame 3, evicted 1)"}, true},
		{"one short", timeline.Ledger{Zones: timeline.Book{Issued: 6, Delivered: 1}}, timeline.Drops{NoFrame: 3},
			[]string{"ledger zones: 6 issued = 1 delivered (1 in this trace) + 0 open + 3 lost (no_frame 3)  DOES NOT BALANCE"}, false},
		{"none", timeline.Ledger{}, timeline.Drops{}, []string{"ledger: none"}, true},
	} {
		tr := *base
		tr.Ledger, tr.Drops = c.ledger, c.drops
		path := pathpkg.Join(t.TempDir(), "t.json")
		f, _ := os.Create(path)
		if err := chrome.Write(f, &tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var so, se bytes.Buffer
		if rc := run([]string{"stats", path}, &so, &se); rc != 0 {
			t.Fatalf("%s: rc %d: %s", c.name, rc, se.String())
		}
		for _, w := range c.want {
			if !strings.Contains(so.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, so.String())
			}
		}
		so.Reset()
		run([]string{"stats", "--json", path}, &so, &se)
		var r struct {
			Ledger map[string]struct{ Balanced bool }
		}
		if err := json.Unmarshal(so.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if c.name != "none" && r.Ledger["zones"].Balanced != c.bal {
			t.Errorf("%s: JSON says balanced %v", c.name, r.Ledger["zones"].Balanced)
		}
		if c.name == "none" && r.Ledger != nil {
			t.Errorf("JSON has a ledger for a trace without one: %v", r.Ledger)
		}
	}
}

// TestStatsRefusesWrappingDrops (issue 38): a trace whose drops add up
// past 2^64-1 (query_limit 2^64-1 and no_frame 1) printed "dropped: 0"
// and a balanced zones book; both readers now refuse it, saying why, and
// pprof's comment on such drops says "at least".
func TestStatsRefusesWrappingDrops(t *testing.T) {
	dir := t.TempDir()
	tr := synthTrace(2, 5, 1, nil)
	tr.Drops = timeline.Drops{QueryLimit: math.MaxUint64, NoFrame: 1}
	for _, f := range []traceFormat{formatPerfetto, formatChrome} {
		p := writeFile(t, dir, fmt.Sprint("t", f), tr, f, false)
		code, out, errOut := runCLI("stats", p)
		if code != 2 || !strings.Contains(errOut, "the drops add up past 2^64-1") || strings.Contains(out, "dropped: 0") {
			t.Errorf("format %d: exit %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
	p := pprof.Build(tr)
	if !slices.ContainsFunc(p.Comments, func(c string) bool {
		return strings.HasPrefix(c, "framescope dropped at least 18446744073709551615 (the causes add up past 2^64-1): query_limit 18446744073709551615, no_frame 1,")
	}) {
		t.Errorf("pprof comments %q: no saturated drops comment", p.Comments)
	}
}
