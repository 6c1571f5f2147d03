package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/cmd/framescope/history"
	"github.com/framescope/framescope/timeline"
)

// nameSeeds are names made to hurt an output, the fuzzers' seeds (with
// hostileNames): terminal escapes, line and column breakers, bidi and
// other format characters, Markdown autolinks, mentions and code span
// breakers, HTML, table breakers, bytes that are not UTF-8 and names
// that a cut at 12 bytes would split inside a character.
var nameSeeds = []string{
	"\x1b[2J\x1b[H\x1b[31mred",
	"\x1b]0;owned\x07title",
	"\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
	"\u009b31mC1 CSI\u009d0;t\u009c",
	"line\n# heading\n\n- item",
	"cr\rover\x08\x08back",
	"tab\there\tthere",
	"\u202eexe.gnp",
	"\u2066isolate\u2069 \u2067rtl\u2069 \u2068first\u2069",
	"\u200e\u200f\u061c\u202a\u202b\u202c\u202d marks",
	"zero\u200bwidth\u200c\u200d\ufeff\u2060\u00ad",
	"tag\U000E0041\U000E007F",
	"sep\u2028line\u2029para",
	"\x7f del \u0085 nel",
	"@user and @org/team",
	"https://evil.example/x",
	"HTTP://EVIL.EXAMPLE",
	"www.evil.example",
	"mail admin@evil.example",
	"`",
	"a`b",
	"``two`` and ```three```",
	"`starts and ends`",
	" padded ",
	"\\`escaped\\`",
	"<script>alert(1)</script>",
	"<img src=x onerror=alert(1)>",
	"</bdi><b>x</b><bdi>",
	"&lt;entity&gt; &#x202e;",
	"| a | b |",
	"\\|escaped pipe\\",
	"[link](https://evil.example) ![img](x.png)",
	"*em* _em_ ~~del~~ :x: <!-- c -->",
	"bad\xff\xfeutf8",
	"\xe2\x82",
	"abcdefghijk€€",
	"abcdefghij€€",
	"€€€€€",
	"\x00nul",
	"",
	"\u05e9\u05dc\u05d5\u05dd 123",
	"\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
	"e\u0301 \ufffd \U0001F600",
	strings.Repeat("long", 255), // 1,020 bytes: "d" and it is still a --driver
}

// allNameSeeds adds the seeds to f.
func allNameSeeds(f *testing.F) {
	for _, s := range append(slices.Clone(nameSeeds), hostileNames...) {
		f.Add(s)
	}
}

// inJSON is a name as encoding/json writes it: each byte that is not
// UTF-8 as U+FFFD.
func inJSON(s string) string { return string([]rune(s)) }

// FuzzHistoryNames puts a name everywhere a history holds one (the
// testbed, the branch, the oldest commit, the step's and the newest, the
// track and the zone of the series that step) and checks every output of
// check and show: text has no character a terminal acts on and its
// lines are those of the same history with plain names; Markdown names
// it only in code spans (what is outside them is as with plain names);
// HTML is UTF-8, holds no raw control, format or bidi character, and no
// more markup than with plain names; JSON is valid and gives the names
// back.
func FuzzHistoryNames(f *testing.F) {
	allNameSeeds(f)
	plain, err := historyOutputs("plain")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, nm string) {
		if len(nm) > history.MaxText {
			return
		}
		out, err := historyOutputs(nm)
		if err != nil {
			t.Fatalf("name %q: %v", nm, err)
		}
		checkOutputs(t, nm, out, plain)
		var sh historyJSON
		if err := json.Unmarshal([]byte(out["show json"]), &sh); err != nil {
			t.Fatalf("name %q: show -json: %v", nm, err)
		}
		want := inJSON(nm)
		if sh.Testbed != want || sh.Branch != want || sh.Commits[8].SHA != want || !slices.ContainsFunc(sh.Series, func(s historySeriesJSON) bool {
			return s.Track == want && s.Name == want
		}) {
			t.Errorf("name %q: show -json does not give it back:\n%s", nm, out["show json"])
		}
		var ck checkJSONOut
		if err := json.Unmarshal([]byte(out["check json"]), &ck); err != nil {
			t.Fatalf("name %q: check -json: %v", nm, err)
		}
		if ck.Testbed != want || len(ck.Findings) != 2 || ck.Findings[0].Name != want || ck.Findings[1].Commit != want {
			t.Errorf("name %q: check -json does not give it back:\n%s", nm, out["check json"])
		}
	})
}

// historyOutputs are every output of check and show for historyNamed(nm),
// show's -md and -html also as show -last 12 writes them, by kind
// ("text", "markdown", "html", "json") and output.
func historyOutputs(nm string) (map[string]string, error) {
	c, h := historyNamed(nm)
	r, err := history.Check(h, c.o)
	if err != nil {
		return nil, err
	}
	page, err := historyHTML(c, h, r)
	if err != nil {
		return nil, err
	}
	// show -last 12, a window that is not check's by default: its
	// headline says so, the window a phrase as the names are.
	sc := c
	sc.show, sc.last = true, len(h.Commits)
	showPage, err := historyHTML(sc, h, r)
	if err != nil {
		return nil, err
	}
	var shown, shownJSON, errs, checked strings.Builder
	writeHistoryText(&shown, nm, nm, h)
	if code := writeHistoryJSON(&shownJSON, &errs, nm, nm, h); code != 0 {
		return nil, fmt.Errorf("show -json: %s", errs.String())
	}
	enc := json.NewEncoder(&checked)
	if err := enc.Encode(checkJSON(c, h, r)); err != nil {
		return nil, err
	}
	return map[string]string{
		"check text": checkText(c, h, r), "show text": shown.String(), "check markdown": checkMarkdown(c, h, r),
		"show html": string(page), "show json": shownJSON.String(), "check json": checked.String(),
		"show -last markdown": checkMarkdown(sc, h, r), "show -last html": string(showPage),
	}, nil
}

// historyNamed is 12 commits of one run each, testbed and branch nm, the
// oldest, the newest and the eighth commit named nm too. Zone nm on
// track nm steps up 30% at commit 8 (its p50 over a 1% spread) and its
// fragment count by half at commit 10; the CPU's frame stays flat.
func historyNamed(nm string) (historyCheckOptions, history.History) {
	c := historyCheckOptions{testbed: nm, branch: nm, last: 30, o: history.DefaultCheck}
	var h history.History
	for i := range 12 {
		sha := fmt.Sprintf("c%02d", i)
		if i == 0 || i == 8 || i == 11 {
			sha = nm
		}
		h.Commits = append(h.Commits, history.Commit{Testbed: nm, Branch: nm, SHA: sha, Seq: int64(i)})
		h.Runs = append(h.Runs, []string{fmt.Sprintf("run%02d", i)})
	}
	series := func(kind, track, zone, metric string, value func(c int) float64, whole bool) history.Series {
		s := history.Series{Key: history.SeriesKey{Kind: kind, Track: track, Name: zone, Metric: metric}}
		for i := range 12 {
			v := history.Value{Commit: i, Value: value(i)}
			if whole {
				v.Whole, v.IsWhole = uint64(v.Value), true
			}
			s.Values = append(s.Values, v)
		}
		return s
	}
	noise := func(c int) float64 { return math.Exp(0.01 * math.Sin(float64(7*c+1))) }
	step := func(c int) float64 {
		if c >= 8 {
			return 1.3e6 * noise(c)
		}
		return 1e6 * noise(c)
	}
	frags := func(c int) float64 { return float64(4096 + 2048*min(max(c-9, 0), 1)) }
	h.Series = []history.Series{
		series("cpu", "main", "frame", "p50", func(c int) float64 { return 2e6 * noise(c+3) }, false),
		series("gpu", nm, nm, "fragment_shader_invocations", frags, true),
		series("gpu", nm, nm, "p50", step, false),
		series("gpu", nm, nm, "p95", func(c int) float64 { return 1.5 * step(c) }, false),
	}
	return c, h
}

// checkOutputs checks each output of a name, and against the same output
// of plain names, by its kind: the last word of its key in out.
func checkOutputs(t *testing.T, nm string, out, plain map[string]string) {
	t.Helper()
	for what, s := range out {
		var issue string
		switch kind := what[strings.LastIndexByte(what, ' ')+1:]; kind {
		case "text", "stderr":
			issue = textIssue(s)
			if n, m := strings.Count(s, "\n"), strings.Count(plain[what], "\n"); issue == "" && n != m {
				issue = fmt.Sprintf("%d lines, with plain names %d", n, m)
			}
		case "markdown":
			issue = markdownIssue(s)
			if got, want := codeFree(s), codeFree(plain[what]); issue == "" && !slices.Equal(got, want) {
				issue = fmt.Sprintf("outside code spans it differs from the same with plain names:\n%q\n%q", got, want)
			}
		case "html":
			issue = textIssue(s)
			if n, m := strings.Count(s, "<"), strings.Count(plain[what], "<"); issue == "" && n != m {
				issue = fmt.Sprintf("%d '<', with plain names %d", n, m)
			}
		case "json":
			if !json.Valid([]byte(s)) {
				issue = "not JSON"
			}
		default:
			t.Fatalf("output %q of no known kind", what)
		}
		if issue != "" {
			t.Errorf("name %q: %s: %s\n%s", nm, what, issue, s)
		}
	}
}

// FuzzTraceNames puts a name where a trace holds one (a GPU zone, the
// CPU thread's track, the GPU's device, a run's file name), and in
// diff's --driver, and checks
// every output of diff and stats, and their standard error, as
// FuzzHistoryNames checks history's; their JSON gives the names back.
func FuzzTraceNames(f *testing.F) {
	allNameSeeds(f)
	cutFrom, _, _ := cutTrace(f)
	cut, err := os.ReadFile(cutFrom)
	if err != nil {
		f.Fatal(err)
	}
	plain := traceOutputs(f, "plain", cut)
	f.Fuzz(func(t *testing.T, nm string) {
		if len(nm) >= maxZoneArg || slices.Contains([]string{"z0", "z2", "z3"}, nm) {
			return // too long for --driver; another GPU zone's name
		}
		out := traceOutputs(t, nm, cut)
		checkOutputs(t, nm, out, plain)
		var d diffReportJSON
		if err := json.Unmarshal([]byte(out["diff json"]), &d); err != nil {
			t.Fatalf("name %q: diff --json: %v", nm, err)
		}
		want := inJSON(nm)
		if !slices.Contains(d.New.Devices, "d"+want) || d.Driver != "d"+want || !slices.ContainsFunc(d.Zones, func(z zoneDiffJSON) bool { return z.Zone == want }) ||
			!slices.ContainsFunc(d.Zones, func(z zoneDiffJSON) bool { return z.Track == want }) {
			t.Errorf("name %q: diff --json does not give it back:\n%s", nm, out["diff json"])
		}
		var s statsReport
		if err := json.Unmarshal([]byte(out["stats json"]), &s); err != nil {
			t.Fatalf("name %q: stats --json: %v", nm, err)
		}
		if !slices.ContainsFunc(s.Zones, func(z zoneStats) bool { return z.Zone == want }) {
			t.Errorf("name %q: stats --json does not give it back:\n%s", nm, out["stats json"])
		}
	})
}

// traceOutputs are the outputs of diff and stats, by kind as
// historyOutputs has them, on traces that hold nm: BASE is one run, NEW
// one run whose zone nm is 50% slower and counts 50% more fragments,
// its file named "run " + nm where a file can be; diff's driver is "d"
// + nm; and stats reads cut, a trace cut short, under NEW's file name.
// diff is run as the command runs it, in one go for its four outputs.
func traceOutputs(t testing.TB, nm string, cut []byte) map[string]string {
	dir := t.TempDir()
	file := "run.pftrace"
	if len(nm) < 200 && !strings.ContainsAny(nm, "/\x00") {
		file = "run " + nm // not hidden, as a name starting with '.' would be
	}
	for _, d := range []string{"base", "new", "cut"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := writeFile(t, filepath.Join(dir, "base"), "run.pftrace", traceNamed(nm, 1, baseWork, 1), formatPerfetto, false)
	cur := writeFile(t, filepath.Join(dir, "new"), file, traceNamed(nm, 2, scaled("z1", fragStat, 1.5), 1.5), formatPerfetto, false)
	cutPath := filepath.Join(dir, "cut", file)
	if err := os.WriteFile(cutPath, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	out := diffOutputs(t, nm, base, filepath.Dir(cur))
	maps.Copy(out, statsOutputs(t, "stats", cur))
	maps.Copy(out, statsOutputs(t, "stats cut", cutPath))
	return out
}

// statsOutputs are stats' outputs of the trace at path, as runStats
// writes them, each keyed what and its kind.
func statsOutputs(t testing.TB, what, path string) map[string]string {
	tr, cut, err := loadTraceCut(path)
	if err != nil {
		t.Fatal(err)
	}
	r := computeStats(tr)
	r.Cut = cut
	var txt, md, js strings.Builder
	writeStatsText(&txt, r, false)
	writeStatsMarkdown(&md, r, false)
	if err := json.NewEncoder(&js).Encode(r); err != nil {
		t.Fatal(err)
	}
	return map[string]string{what + " text": txt.String(), what + " markdown": md.String(), what + " json": js.String()}
}

// diffOutputs are diff's outputs of base against cur, driver "d" + nm,
// as runDiff writes them.
func diffOutputs(t testing.TB, nm, base, cur string) map[string]string {
	o := diffOpts
	o.driver = "d" + nm
	var txt, md, js, html, errs strings.Builder
	bs, err := loadSide(base)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := loadSide(cur)
	if err != nil {
		t.Fatal(err)
	}
	warnCuts(&errs, "diff", bs, cs)
	r := compare(bs, cs, o)
	writeDiffText(&txt, r, o)
	writeDiffMarkdown(&md, r, o)
	if err := writeDiffJSON(&js, r, o); err != nil {
		t.Fatal(err)
	}
	if err := writeDiffHTML(&html, r, o); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"diff text": txt.String(), "diff markdown": md.String(), "diff json": js.String(), "diff html": html.String(), "diff stderr": errs.String()}
}

// traceNamed is synthTrace's 10 frames with z1 renamed nm, its times
// scaled by slow, the only zone to count work (work's), the CPU thread's
// track named nm and the GPU's device "d" + nm.
func traceNamed(nm string, seed uint64, work workOf, slow float64) *timeline.Trace {
	tr := synthTrace(seed, 10, 4, map[string]float64{"z1": slow})
	z1 := slices.Index(tr.Names, "z1")
	for i := range tr.Spans {
		if s := &tr.Spans[i]; int(s.Name) == z1 {
			s.Work = work("z1", s.Frame)
		}
	}
	tr.Names[z1] = nm
	tr.Tracks[0].Name = nm
	tr.Tracks[1].Queue.Device = "d" + nm // a device named "" is none
	return tr
}
