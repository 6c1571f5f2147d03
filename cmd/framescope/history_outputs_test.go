package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// regressedHistory is a history of the given commits, one run each, and
// a check of it that found a step in each of the given series, as
// Check's result orders them (newest commit first): series i named
// name(i), its step +3% + 0.1% per i at one of the newest 5 commits,
// every seventh a step down (no regression), and series 3 an exact count
// from 0, the largest. With values, each series has a value for each
// run, stepping where its finding says.
func regressedHistory(series, commits int, name func(i int) string, values bool) (historyCheckOptions, history.History, history.CheckResult) {
	c := historyCheckOptions{testbed: "h100", branch: "main", last: commits, o: history.DefaultCheck}
	h := history.History{Commits: make([]history.Commit, commits), Runs: make([][]string, commits)}
	for i := range commits {
		h.Commits[i] = history.Commit{Testbed: "h100", Branch: "main", SHA: fmt.Sprintf("%040x", i), Seq: int64(1000 + i)}
		h.Runs[i] = []string{fmt.Sprintf("%064x", i)}
	}
	r := history.CheckResult{Series: series}
	for i := range series {
		k := history.SeriesKey{Kind: "gpu", Track: "graphics queue 0", Name: name(i), Metric: "p50"}
		f := history.Finding{Series: k, Commit: commits - 1 - i%5, Step: 0.03 + 0.001*float64(i), P: 0.001, Regression: true}
		switch {
		case i == 3:
			f.Step, f.P, f.Exact = math.Inf(1), 0, true
		case i%7 == 0:
			f.Step, f.Regression = -f.Step/(1+f.Step), false
		}
		r.Findings = append(r.Findings, f)
		if values {
			h.Series = append(h.Series, steppedSeries(k, f, commits))
		}
	}
	slices.SortFunc(r.Findings, func(a, b history.Finding) int {
		return cmp.Or(-cmp.Compare(a.Commit, b.Commit), cmp.Compare(a.Series.String(), b.Series.String()))
	})
	r.Verdict = history.Regressed
	return c, h, r
}

// steppedSeries is a series of one value a commit around 1 ms, a 1%
// spread, that steps by f.Step at f.Commit (from 0: 0 before it).
func steppedSeries(k history.SeriesKey, f history.Finding, commits int) history.Series {
	s := history.Series{Key: k, Values: make([]history.Value, commits)}
	for i := range commits {
		v := 1e6 * math.Exp(0.01*math.Sin(float64(7*i+len(k.Name))))
		switch {
		case i >= f.Commit && math.IsInf(f.Step, 1):
		case i < f.Commit && math.IsInf(f.Step, 1):
			v = 0
		case i >= f.Commit:
			v *= 1 + f.Step
		}
		s.Values[i] = history.Value{Commit: i, Value: v}
	}
	return s
}

// The findings' order in the comment and on the page: regressions first,
// then the larger step, up or down, first (a count from 0 the largest),
// ties by the series' names.
func TestFindingsBySize(t *testing.T) {
	f := func(name string, step float64, reg bool) history.Finding {
		return history.Finding{Series: history.SeriesKey{Kind: "gpu", Track: "q", Name: name, Metric: "p50"}, Step: step, Regression: reg}
	}
	in := []history.Finding{f("b", 0.1, true), f("down", -0.5, false), f("zero", math.Inf(1), true), f("a", 0.1, true), f("small", -0.05, false), f("big", 0.3, true)}
	var got []string
	for _, x := range findingsBySize(in) {
		got = append(got, x.Series.Name)
	}
	if want := []string{"zero", "big", "a", "b", "down", "small"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if in[0].Series.Name != "b" {
		t.Errorf("findingsBySize sorted its argument")
	}
}

// A regression in each of 1,000 series, over 10,000 commits, gives a
// comment within mdCommentMax characters (runes, as GitHub counts): the
// headline first, as it is; then the largest findings, in the order of
// findingsBySize, the first the count from 0; then a line that counts
// those left out, and their regressions, and says where they all are.
// With names of 1,024 bytes that mdCode writes four times as long, and
// with few findings, which all fit with no such line.
func TestHistoryMarkdownFits(t *testing.T) {
	hostile := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("\x01|\xff`", 255) }
	for _, c := range []struct {
		name     string
		series   int
		zone     func(i int) string
		min, max int // rows shown
	}{
		{"plain names", 1000, func(i int) string { return fmt.Sprintf("zone %04d", i) }, 200, 999},
		{"names of 1,024 bytes", 1000, hostile, 3, 999},
		{"few findings", 10, hostile, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts, h, r := regressedHistory(c.series, 10_000, c.zone, false)
			if c.name != "plain names" {
				h.Commits[9_999].SHA = strings.Repeat("\u202e`", 32) // 128 bytes
			}
			md := checkMarkdown(opts, h, r)
			if n := utf8.RuneCountInString(md); n > mdCommentMax {
				t.Fatalf("%d characters, over %d", n, mdCommentMax)
			}
			if head := "### framescope history check\n\n" + checkHeadline(opts, h, r).markdown() + "\n\n" + mdTableHead; !strings.HasPrefix(md, head) {
				t.Errorf("the comment does not start with its headline:\n%.500s", md)
			}
			rows := strings.SplitAfter(strings.TrimPrefix(md[:strings.LastIndex(md, " |\n")+3], md[:strings.Index(md, "|---")]), "|\n")[1:]
			rows = rows[:len(rows)-1] // "" after the last
			want := findingsBySize(r.Findings)
			if len(rows) < c.min || len(rows) > c.max {
				t.Fatalf("%d rows, want %d to %d", len(rows), c.min, c.max)
			}
			t.Logf("%d rows of %d, %d characters", len(rows), len(want), utf8.RuneCountInString(md))
			for i, row := range rows {
				if row != findingRow(h, want[i]) {
					t.Fatalf("row %d is\n%.300q, want\n%.300q", i, row, findingRow(h, want[i]))
				}
			}
			if !strings.Contains(rows[0], "from 0") {
				t.Errorf("the first row is not the largest finding, the count from 0: %.300q", rows[0])
			}
			line := ""
			if left := want[len(rows):]; len(left) > 0 {
				line = fmt.Sprintf("\n_%d more findings (%d of them regressions) are left out", len(left), regressions(history.CheckResult{Findings: left}))
			}
			if tail := md[strings.LastIndex(md, " |\n")+3:]; !strings.HasPrefix(tail, line) || line != "" && !strings.Contains(tail, "`framescope history show -html`") {
				t.Errorf("the comment ends\n%q\nwant a line starting %q", tail, line)
			}
		})
	}
}
