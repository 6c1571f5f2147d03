package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// addHistory records commits c00, c01, ... (seq 0, 1, ...), one run
// each, run(i) the trace of commit i, through history add.
func addHistory(t *testing.T, db string, n int, run func(i int) *timeline.Trace) {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		p := writeFile(t, dir, fmt.Sprintf("c%02d.pftrace", i), run(i), formatPerfetto, false)
		if code, _, errs := runCLI("history", "add", "-db", db, "-commit", fmt.Sprintf("c%02d", i), "-seq", fmt.Sprint(i), p); code != 0 {
			t.Fatalf("add c%02d: %s", i, errs)
		}
	}
}

// readOut runs the command line, which must exit with code, and returns
// the file it wrote to out.
func readOut(t *testing.T, out string, code int, args ...string) string {
	t.Helper()
	got, stdout, stderr := runCLI(args...)
	if got != code {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, got, code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// On 40 commits with z1 20% slower from c05, check looks at the newest 30
// (c10 to c39) and finds nothing: show -md writes the same comment, and
// show -html the same verdict, no plot. Asked for all 40 (-last 40), show
// finds the step at c05, as check -last 40 does, and says that check
// looks at the newest 30.
func TestHistoryShowSaysWhatCheckFound(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "h.db")
	addHistory(t, db, 40, func(i int) *timeline.Trace {
		var slow map[string]float64
		if i >= 5 {
			slow = map[string]float64{"z1": 1.2}
		}
		return synthRun(uint64(500+i), 0.01, slow)
	})
	md, page := filepath.Join(dir, "out.md"), filepath.Join(dir, "out.html")
	args := func(cmd string, extra ...string) []string {
		return append([]string{"history", cmd, "-db", db, "-testbed", "synthetic"}, extra...)
	}
	check := readOut(t, md, exitUnchanged, args("check", "-md", md)...)
	if show := readOut(t, md, 0, args("show", "-md", md)...); show != check {
		t.Errorf("show -md is not check's comment:\n%s\ncheck's:\n%s", show, check)
	}
	if !strings.Contains(check, "UNCHANGED") || !strings.Contains(check, "the newest 30 commits (seq 10 to 39)") {
		t.Errorf("check's comment does not name its window:\n%s", check)
	}
	html := readOut(t, page, 0, args("show", "-html", page)...)
	if !strings.Contains(html, "UNCHANGED") || !strings.Contains(html, "the newest 30 commits (seq 10 to 39)") || strings.Contains(html, "<svg") {
		t.Errorf("show -html is not check's verdict:\n%s", html)
	}

	check40 := readOut(t, md, exitRegressed, args("check", "-last", "40", "-md", md)...)
	show40 := readOut(t, md, 0, args("show", "-last", "40", "-md", md)...)
	for _, s := range []string{check40, show40} {
		if !strings.Contains(s, "REGRESSED") || !strings.Contains(s, "the newest 40 commits (seq 0 to 39)") || !strings.Contains(s, "(seq 5)") {
			t.Errorf("over 40 commits, the step at c05 is not found:\n%s", s)
		}
	}
	if !strings.Contains(show40, "check looks at the newest 30 unless given -last 40") {
		t.Errorf("show -last 40 does not say that check looks at another window:\n%s", show40)
	}
	if strings.Contains(check40, "check looks at") {
		t.Errorf("check -last 40 speaks of another window:\n%s", check40)
	}
	if got, want := findingRows(show40), findingRows(check40); got != want || got == "" {
		t.Errorf("show -last 40 finds\n%s\ncheck -last 40\n%s", got, want)
	}
	// The listing beside a page is the whole history's, not the
	// verdict's series alone.
	_, alone, _ := runCLI(args("show", "-last", "40", "-json")...)
	_, beside, _ := runCLI(args("show", "-last", "40", "-json", "-html", page)...)
	var a, b historyJSON
	if json.Unmarshal([]byte(alone), &a) != nil || json.Unmarshal([]byte(beside), &b) != nil || len(a.Series) < 2 || len(b.Series) != len(a.Series) {
		t.Errorf("show -json lists %d series, and %d beside -html", len(a.Series), len(b.Series))
	}
}

// findingRows are a markdown comment's table rows.
func findingRows(md string) string {
	var rows []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| | zone") {
			rows = append(rows, l)
		}
	}
	return strings.Join(rows, "\n")
}

// jitteredWork is 1,000 times baseWork with each statistic of each zone
// scaled, for the whole run, by a factor drawn for the run (sd 2%):
// counts the same in every frame of a run, as an exact count's are, that
// move between runs of the same code; zone's fragment shader invocations
// scaled by f.
func jitteredWork(seed uint64, zone string, f float64) workOf {
	rng := rand.New(rand.NewPCG(seed, 21))
	var scale [4][timeline.NumPipelineStats]float64
	for z := range scale {
		for i := range scale[z] {
			scale[z][i] = math.Exp(0.02 * rng.NormFloat64())
		}
	}
	return func(z string, frame uint64) *timeline.Work {
		w := baseWork(z, frame)
		k := int(z[1] - '0')
		w.Stats.Each(func(i int) {
			g := scale[k][i]
			if z == zone && i == fragStat {
				g *= f
			}
			w.Count[i] = uint64(math.Round(float64(1000*w.Count[i]) * g))
		})
		return w
	}
}

// With one run a commit, counts that hold within a run but move 2%
// between runs are no exact counts: on a flat history they are tested as
// times are, and nothing is found; a step of +20% in one of them is found
// so, at its commit, with its false-alarm probability. Counts that hold
// from commit to commit are exact: a +10% step in one is found at its
// commit, an exact count.
func TestHistoryCountsExactOnEvidence(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		work   func(i int) workOf
		code   int
		at     string // the commit of the step found, "" for none
		exact  bool   // whether it is an exact count's
		series int    // exact work series
	}{
		{"jittered flat", func(i int) workOf { return jitteredWork(uint64(i), "", 1) }, exitUnchanged, "", false, 0},
		{"jittered step", func(i int) workOf { return jitteredWork(uint64(i), "z2", stepAt(i, 14, 1.2)) }, exitRegressed, "c14", false, 0},
		{"exact step", func(i int) workOf { return scaled("z2", fragStat, stepAt(i, 15, 1.1)) }, exitRegressed, "c15", true, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := "sqlite:" + filepath.Join(dir, c.name+".db")
			addHistory(t, db, 20, func(i int) *timeline.Trace { return workRun(uint64(700+i), c.work(i)) })
			code, out, errs := runCLI("history", "check", "-db", db, "-testbed", "synthetic", "-json")
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			var r checkJSONOut
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if r.Exact != c.series {
				t.Errorf("%d exact work series, want %d", r.Exact, c.series)
			}
			var steps []string
			for _, f := range r.Findings {
				steps = append(steps, fmt.Sprintf("%s/%s %s at %s exact %t", f.Name, f.Metric, stepText(f.Step), f.Commit, f.Exact))
			}
			want := 0
			if c.at != "" {
				want = 1
			}
			if len(steps) != want {
				t.Fatalf("%d findings, want %d:\n%s", len(steps), want, strings.Join(steps, "\n"))
			}
			if c.at == "" {
				return
			}
			f := r.Findings[0]
			if f.Name != "z2" || f.Metric != "fragment_shader_invocations" || f.Commit != c.at || f.Exact != c.exact || !f.Regression || c.exact != (f.P == 0) {
				t.Errorf("finding %+v, want z2's fragment shader invocations at %s, exact %t", f, c.at, c.exact)
			}
		})
	}
}

// stepAt is f from commit at on, else 1.
func stepAt(i, at int, f float64) float64 {
	if i >= at {
		return f
	}
	return 1
}
