package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// historyCheckOptions are check's flags.
type historyCheckOptions struct {
	dsn, testbed, branch string
	last                 int
	o                    history.CheckOptions
	asJSON               bool
	md                   string
	show                 bool // show's: its verdict says where its window is not check's
}

func historyCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("history check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := historyCheckOptions{o: history.DefaultCheck}
	fs.StringVar(&c.dsn, "db", "", "the history: sqlite:PATH, or postgres://...")
	fs.StringVar(&c.testbed, "testbed", "", "the testbed")
	fs.StringVar(&c.branch, "branch", "main", "the branch")
	fs.IntVar(&c.last, "last", checkLast, "the newest N commits to look at")
	fs.Var(percentValue{&c.o.MinEffect, 10}, "min-effect", "the smallest step that is a regression")
	fs.Var(alphaValue{&c.o.Alpha}, "alpha", "the false-alarm level over every series and commit of the check")
	fs.BoolVar(&c.o.Tails, "tails", c.o.Tails, "check each zone's p95 too, not only its p50 (noisier: fewer steps caught)")
	fs.BoolVar(&c.asJSON, "json", false, "write the findings as JSON")
	fs.StringVar(&c.md, "md", "", fmt.Sprintf("write the findings as markdown, for a pull request's comment, to this file: at most %d characters, the largest first", mdCommentMax))
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if c.dsn == "" || c.testbed == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "framescope history check: -db and -testbed are needed, and nothing else")
		return exitBadInput
	}
	if c.last < c.o.MinCommits || c.last > history.MaxLoad {
		fmt.Fprintf(stderr, "framescope history check: -last %d: from %d to %d\n", c.last, c.o.MinCommits, history.MaxLoad)
		return exitBadInput
	}
	ctx := context.Background()
	s, err := history.Open(ctx, c.dsn, history.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "framescope history check: %s\n", termText(err.Error()))
		return exitBadInput
	}
	defer s.Close()
	h, r, err := historyVerdict(ctx, s, c)
	if err != nil {
		fmt.Fprintf(stderr, "framescope history check: %s\n", termText(err.Error()))
		return exitBadInput
	}
	if c.md != "" {
		if err := os.WriteFile(c.md, []byte(checkMarkdown(c, h, r)), 0o644); err != nil {
			fmt.Fprintf(stderr, "framescope history check: %s\n", termText(err.Error()))
			return exitBadInput
		}
	}
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(checkJSON(c, h, r))
	} else {
		fmt.Fprint(stdout, checkText(c, h, r))
	}
	switch r.Verdict {
	case history.Regressed:
		return exitRegressed
	case history.TooShort:
		return exitInconclusive
	}
	return exitUnchanged
}

// checkHeadline is the check's verdict in a line.
func checkHeadline(c historyCheckOptions, h history.History, r history.CheckResult) phrase {
	what := phrasef(`%s on "%s", %s`, untrusted(c.branch), untrusted(c.testbed), windowText(c, h))
	switch r.Verdict {
	case history.TooShort:
		return phrasef("TOO SHORT: %s, fewer than %d: nothing to say yet", what, c.o.MinCommits)
	case history.Regressed:
		return phrasef("REGRESSED: %s: %d series with a newest step up past %s", what, regressions(r), percentValue{f: &c.o.MinEffect})
	}
	return phrasef("UNCHANGED: %s: no series' newest step is a regression", what)
}

func regressions(r history.CheckResult) int {
	n := 0
	for _, f := range r.Findings {
		if f.Regression {
			n++
		}
	}
	return n
}

func checkText(c historyCheckOptions, h history.History, r history.CheckResult) string {
	var b strings.Builder
	b.WriteString("framescope history check: " + checkHeadline(c, h, r).text() + "\n")
	fmt.Fprintf(&b, "  %d time series at a false-alarm level of %g over them all, %d exact work series", r.Series, c.o.Alpha, r.Exact)
	if r.Noisy > 0 {
		fmt.Fprintf(&b, " (%d of the time series are work counts not shown to be exact, tested as times are)", r.Noisy)
	}
	b.WriteString("\n")
	for _, f := range r.Findings {
		b.WriteString(findingLine(h, f).text() + "\n")
	}
	return b.String()
}

// findingLine is a finding in a line: the series, the step, the first
// commit after it, how sure.
func findingLine(h history.History, f history.Finding) phrase {
	mark := "  step      "
	if f.Regression {
		mark = "  REGRESSED "
	}
	cm := h.Commits[f.Commit]
	sure := fmt.Sprintf("false-alarm probability %.4f", f.P)
	if f.Exact {
		sure = "an exact count"
	}
	return phrasef("%s%s: %s at commit %s (seq %d), the first after the step; %s", mark, untrusted(f.Series.String()), stepText(f.Step), untrusted(cm.SHA), cm.Seq, sure)
}

func stepText(step float64) string {
	if math.IsInf(step, 1) {
		return "from 0"
	}
	return fmt.Sprintf("%+.2f%%", 100*step)
}

// mdCommentMax is the most characters (runes, as GitHub counts them) of
// check's markdown comment: GitHub refuses a pull request's comment of
// over 65,536, and the margin is left to a CI that adds a line of its own.
const mdCommentMax = 60_000

const mdTableHead = "| | zone | metric | step | first commit after it | how sure |\n|---|---|---|---|---|---|\n"

// checkMarkdown is the findings as a pull request's comment: the headline,
// then a row for each finding, largest first (findingsBySize), as many as
// fit in mdCommentMax, and a line saying how many are left out and where
// they all are. Each row's length is counted as it is added, for a row
// may be long: a name of up to history.MaxText bytes, escaped by mdCode,
// which may write a byte as four characters.
func checkMarkdown(c historyCheckOptions, h history.History, r history.CheckResult) string {
	var b strings.Builder
	b.WriteString("### framescope history check\n\n" + checkHeadline(c, h, r).markdown() + "\n\n")
	if len(r.Findings) == 0 {
		return b.String()
	}
	b.WriteString(mdTableHead)
	fs := findingsBySize(r.Findings)
	// Room is kept for the line's longest form: its counts are at most
	// len(fs), or it is the singular's "1 more finding, not a regression".
	line := max(utf8.RuneCountInString(leftOutLine(len(fs), len(fs))), utf8.RuneCountInString(leftOutLine(1, 0)))
	room := mdCommentMax - utf8.RuneCountInString(b.String()) - line
	shown := 0
	for _, f := range fs {
		row := findingRow(h, f)
		if n := utf8.RuneCountInString(row); n <= room {
			b.WriteString(row)
			room -= n
			shown++
			continue
		}
		b.WriteString(leftOutLine(len(fs)-shown, regressions(history.CheckResult{Findings: fs[shown:]})))
		break
	}
	return b.String()
}

// findingRow is a finding as a row of checkMarkdown's table.
func findingRow(h history.History, f history.Finding) string {
	cm := h.Commits[f.Commit]
	mark, sure := "", fmt.Sprintf("p = %.4f", f.P)
	if f.Regression {
		mark = "**regressed**"
	}
	if f.Exact {
		sure = "exact count"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s (seq %d) | %s |\n", mark, mdCode(f.Series.Kind+":"+f.Series.Track+"/"+f.Series.Name),
		mdCode(f.Series.Metric), stepText(f.Step), mdCode(cm.SHA), cm.Seq, sure)
}

// leftOutLine says, under checkMarkdown's table, how many findings (of
// them, regressions) did not fit, and where to see every one.
func leftOutLine(n, regressed int) string {
	what := fmt.Sprintf("%d more findings (%d of them regressions) are", n, regressed)
	switch {
	case n == 1 && regressed == 1:
		what = "1 more finding, a regression, is"
	case n == 1:
		what = "1 more finding, not a regression, is"
	}
	return "\n_" + what + " left out: a comment is limited in length, and this one lists the regressions first, the largest steps first. " +
		"Every finding is in the text of `framescope history check` and on the page of `framescope history show -html`._\n"
}

// findingsBySize is a copy of fs, largest first: regressions first, then
// by the size of the step, |Step|, descending (a count from 0, +Inf, the
// largest); ties by the series' kind, track, name and metric, in byte
// order, so that the order is the same on every run. It is the order of
// the markdown comment and of the page's plots, which show the largest
// when they cannot show all; check's text and JSON keep Check's order,
// newest commit first.
func findingsBySize(fs []history.Finding) []history.Finding {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b history.Finding) int {
		if a.Regression != b.Regression {
			if a.Regression {
				return -1
			}
			return 1
		}
		return cmp.Or(-cmp.Compare(math.Abs(a.Step), math.Abs(b.Step)), cmp.Compare(a.Series.Kind, b.Series.Kind),
			cmp.Compare(a.Series.Track, b.Series.Track), cmp.Compare(a.Series.Name, b.Series.Name), cmp.Compare(a.Series.Metric, b.Series.Metric))
	})
	return fs
}

type checkFindingJSON struct {
	Kind       string  `json:"kind"`
	Track      string  `json:"track"`
	Name       string  `json:"name"`
	Metric     string  `json:"metric"`
	Commit     string  `json:"commit"`
	Seq        int64   `json:"seq"`
	Step       float64 `json:"step"` // after/before - 1; a count from 0 writes 1e308
	P          float64 `json:"p"`
	Exact      bool    `json:"exact"`
	Regression bool    `json:"regression"`
}

type checkJSONOut struct {
	Verdict  string             `json:"verdict"`
	Testbed  string             `json:"testbed"`
	Branch   string             `json:"branch"`
	Commits  int                `json:"commits"`
	Alpha    float64            `json:"alpha"`
	Series   int                `json:"series"`
	Exact    int                `json:"exact_series"`
	Findings []checkFindingJSON `json:"findings"`
}

func checkJSON(c historyCheckOptions, h history.History, r history.CheckResult) checkJSONOut {
	out := checkJSONOut{Verdict: r.Verdict.String(), Testbed: c.testbed, Branch: c.branch, Commits: len(h.Commits),
		Alpha: c.o.Alpha, Series: r.Series, Exact: r.Exact, Findings: []checkFindingJSON{}}
	for _, f := range r.Findings {
		cm := h.Commits[f.Commit]
		out.Findings = append(out.Findings, checkFindingJSON{Kind: f.Series.Kind, Track: f.Series.Track, Name: f.Series.Name,
			Metric: f.Series.Metric, Commit: cm.SHA, Seq: cm.Seq, Step: min(f.Step, math.MaxFloat64), P: f.P, Exact: f.Exact, Regression: f.Regression})
	}
	return out
}
