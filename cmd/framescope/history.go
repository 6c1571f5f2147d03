package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/framescope/framescope/cmd/framescope/history"
	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "history",
		summary: "record each commit's runs in a database (add), find the newest step in each series (check: exit 0 none regressed, 1 regressed, 2 an error such as a name that matches nothing, 3 too short), read them back (show)",
		run:     runHistory,
	})
}

const historyUsage = `usage: framescope history add -db DSN -commit SHA -seq N [-branch B] [-testbed T] RUN...
       framescope history check -db DSN -testbed T [-branch B] [-last N] [-min-effect 2%] [-alpha 0.01] [-tails] [-json] [-md FILE]
       framescope history show -db DSN -testbed T [-branch B] [-last N] [-json] [-html FILE] [-md FILE]
DSN is sqlite:PATH or postgres://...; a RUN is a trace file or a directory
of them, as framescope diff takes them; the same trace given twice is an
error (exit 2), as is a -commit, -branch or -testbed of white space alone.
A zone whose name the history cannot hold (over 1,024 bytes, not UTF-8,
a NUL) is left out, each run's counted on stderr and all in the summary.
add writes: it makes the database (a SQLite file) or its schema where
missing, and migrates an older schema. check and show only read: they need
read access alone, and make and change nothing. A -db file that is not
there, a history of another schema version, and a -testbed or -branch of
no commit are errors (exit 2) that say so, listing the history's testbeds
or the testbed's branches. Readers never hold up add; a wait for another
add's lock ends after 30 s with an error (exit 2) naming the limit.`

func runHistory(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, historyUsage)
		return exitBadInput
	}
	switch args[0] {
	case "add":
		return historyAdd(args[1:], stdout, stderr)
	case "show":
		return historyShow(args[1:], stdout, stderr)
	case "check":
		return historyCheck(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, historyUsage)
		return 0
	}
	fmt.Fprintf(stderr, "framescope history: unknown subcommand %q\n%s\n", args[0], historyUsage)
	return exitBadInput
}

func historyAdd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("history add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("db", "", "the history: sqlite:PATH, or postgres://...")
	var c history.Commit
	fs.StringVar(&c.SHA, "commit", "", "the commit the runs are of")
	seq := seqValue{n: &c.Seq}
	fs.Var(&seq, "seq", "the commit's place in its branch: its commit time, or a build number, `N` >= 0 (required)")
	fs.StringVar(&c.Branch, "branch", "main", "the branch")
	fs.StringVar(&c.Testbed, "testbed", "", "the machine the runs ran on (default: their GPUs, from the traces)")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "framescope history add: "+format+"\n", a...)
		return exitBadInput
	}
	if name := blankFlag(fs, "commit", "branch", "testbed"); name != "" {
		return bad("-%s is blank: give a name with a character other than white space", name)
	}
	switch {
	case *dsn == "":
		return bad("-db is missing")
	case c.SHA == "":
		return bad("-commit is missing")
	case !seq.set:
		return bad("-seq is missing: give the commit's place in its branch, its commit time or a build number")
	case fs.NArg() == 0:
		return bad("no runs: give trace files or directories of them")
	}
	runs, testbed, skipped, err := historyRuns(fs.Args(), stderr)
	if err != nil {
		return bad("%s", termText(err.Error()))
	}
	if c.Testbed == "" {
		if testbed == "" {
			return bad("the runs' traces name different GPUs, or none: give -testbed")
		}
		c.Testbed = testbed
	}
	ctx := context.Background()
	s, err := history.Open(ctx, *dsn, history.Options{})
	if err != nil {
		return bad("%s", termText(err.Error()))
	}
	defer s.Close()
	n, err := s.Add(ctx, c, runs)
	if err != nil {
		return bad("%s", termText(err.Error()))
	}
	line := phrasef(`commit %s (seq %d) of %s on "%s": %d of %d runs added (%d recorded before)`,
		untrusted(c.SHA), c.Seq, untrusted(c.Branch), untrusted(c.Testbed), n, len(runs), len(runs)-n).text()
	if skipped > 0 {
		line += fmt.Sprintf("; %d zones not stored, their names ones the history cannot hold (each run's are listed above)", skipped)
	}
	fmt.Fprintln(stdout, line)
	return 0
}

// seqValue implements flag.Value for history add's -seq, which has no
// default: unset, its String is "", so that the help names none (a
// sentinel such as -1 would show as "(default -1)"); set says whether it
// was given. A negative number is refused as it is parsed.
type seqValue struct {
	n   *int64
	set bool
}

func (v *seqValue) String() string {
	if v == nil || !v.set {
		return ""
	}
	return strconv.FormatInt(*v.n, 10)
}

func (v *seqValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("bad sequence number %q: want a whole number from 0, such as a commit time", termText(s))
	}
	*v.n, v.set = n, true
	return nil
}

// blankFlag is the first of the named flags given as empty or white
// space alone, "" where there is none: such a name would read as none
// in every report.
func blankFlag(fs *flag.FlagSet, names ...string) string {
	blank := ""
	fs.Visit(func(f *flag.Flag) {
		if blank == "" && slices.Contains(names, f.Name) && strings.TrimSpace(f.Value.String()) == "" {
			blank = f.Name
		}
	})
	return blank
}

// historyRuns reads the runs at paths (files or directories, as diff
// reads a side) into the history's points, with each trace's digest, and
// the testbed their traces name: their GPUs, where every run names the
// same ones. It says on warn which traces were cut short, and how much
// of each it reads, and which zones it leaves out (their names ones the
// history cannot hold), returning how many. A trace given twice (a file again, a copy of it, or
// a file of a directory given too) is an error naming both paths: a run
// counted once where twice were meant is a mistake of the job, not a
// retry.
func historyRuns(paths []string, warn io.Writer) ([]history.Run, string, int, error) {
	var runs []history.Run
	skipped := 0
	given := map[string]string{} // path by digest
	testbed, same := "", true
	for _, p := range paths {
		sd, err := loadSide(p)
		if err != nil {
			return nil, "", 0, err
		}
		warnCuts(warn, "history add", sd)
		for _, rt := range sd.Runs {
			if len(runs) == history.MaxRuns {
				return nil, "", 0, fmt.Errorf("over %d runs at once", history.MaxRuns)
			}
			digest, err := fileDigest(rt.Path)
			if err != nil {
				return nil, "", 0, err
			}
			if at, ok := given[digest]; ok {
				return nil, "", 0, fmt.Errorf("%s and %s are the same trace (sha256 %.12s): give each run once", at, rt.Path, digest)
			}
			given[digest] = rt.Path
			pts, left := historyPoints(rt)
			skipped += warnLeftOut(warn, rt.Path, left)
			runs = append(runs, history.Run{Digest: digest, Path: rt.Path, Points: pts})
			tb := strings.Join(rt.Devices, " + ")
			if len(runs) == 1 {
				testbed = tb
			}
			same = same && tb == testbed
		}
	}
	if !same {
		testbed = ""
	}
	return runs, testbed, skipped, nil
}

// warnLeftOut says on w how many zones of the run at path were left out,
// by the rule their names break, and returns how many.
func warnLeftOut(w io.Writer, path string, left map[string]int) int {
	if len(left) == 0 {
		return 0
	}
	rules := slices.Sorted(maps.Keys(left))
	n, why := 0, make([]string, len(rules))
	for i, r := range rules {
		n += left[r]
		why[i] = fmt.Sprintf("%d whose name %s", left[r], r)
	}
	fmt.Fprintf(w, "framescope history add: warning: %s: %d zones not stored, their names ones the history cannot hold: %s\n",
		termText(path), n, strings.Join(why, "; "))
	return n
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// historyPoints are a run's points: each zone's p50 and p95, and each
// pipeline statistic it counted (its count per occurrence, exact where
// whole). A zone whose name the history cannot hold (over its limit,
// not UTF-8, a NUL) is left out, counted by the rule it breaks, so that
// one such zone costs its own series, not the commit.
func historyPoints(rt runTrace) ([]history.Point, map[string]int) {
	keys := make([]zoneKey, 0, len(rt.Zones))
	for k := range rt.Zones {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	var pts []history.Point
	left := map[string]int{}
	for _, k := range keys {
		var ne *history.NameError
		if err := (history.SeriesKey{Kind: k.Kind, Track: k.Track, Name: k.Name, Metric: "p50"}).Check(); errors.As(err, &ne) {
			left[ne.Rule]++
			continue
		}
		z := rt.Zones[k]
		at := history.Point{Kind: k.Kind, Track: k.Track, Name: k.Name, N: int64(z.N)}
		for _, m := range []struct {
			name string
			v    float64
		}{{"p50", z.P50}, {"p95", z.P95}} {
			p := at
			p.Metric, p.Value = m.name, m.v
			pts = append(pts, p)
		}
		if z.Work == nil {
			continue
		}
		z.Work.Stats.Each(func(i int) {
			p := at
			p.Metric, p.Value, p.N = timeline.StatKey(i), z.Work.Mean[i], int64(z.Work.N[i])
			p.Whole, p.IsWhole = z.Work.whole(i)
			pts = append(pts, p)
		})
	}
	return pts, left
}

func historyShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("history show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("db", "", "the history: sqlite:PATH, or postgres://...")
	testbed := fs.String("testbed", "", "the testbed")
	branch := fs.String("branch", "main", "the branch")
	last := fs.Int("last", checkLast, fmt.Sprintf("the newest N commits (at most %d); for -html and -md, the window the check looks at, as check's -last", history.MaxLoad))
	asJSON := fs.Bool("json", false, "write the history as JSON")
	page := fs.String("html", "", fmt.Sprintf("write a page of the check's findings, to this file: every one listed, the largest %d plotted", maxPlots))
	md := fs.String("md", "", "write the check's findings as markdown, as check -md does, to this file")
	c := historyCheckOptions{o: history.DefaultCheck, show: true}
	fs.Var(percentValue{&c.o.MinEffect, 10}, "min-effect", "for -html and -md: the smallest step that is a regression")
	fs.Var(alphaValue{&c.o.Alpha}, "alpha", "for -html and -md: the false-alarm level")
	fs.BoolVar(&c.o.Tails, "tails", c.o.Tails, "for -html and -md: each zone's p95 too, not only its p50")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	c.dsn, c.testbed, c.branch, c.last = *dsn, *testbed, *branch, *last
	if *dsn == "" || *testbed == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "framescope history show: -db and -testbed are needed, and nothing else")
		return exitBadInput
	}
	ctx := context.Background()
	s, err := history.Open(ctx, *dsn, history.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "framescope history show: %s\n", termText(err.Error()))
		return exitBadInput
	}
	defer s.Close()
	if *page != "" || *md != "" {
		if err := writeVerdict(ctx, s, c, *page, *md); err != nil {
			fmt.Fprintf(stderr, "framescope history show: %s\n", termText(err.Error()))
			return exitBadInput
		}
	}
	h, err := s.Load(ctx, *testbed, *branch, *last) // every series, for the listing: the verdict's holds its findings' alone
	if err != nil {
		fmt.Fprintf(stderr, "framescope history show: %s\n", termText(err.Error()))
		return exitBadInput
	}
	if *asJSON {
		return writeHistoryJSON(stdout, stderr, *testbed, *branch, h)
	}
	writeHistoryText(stdout, *testbed, *branch, h)
	return 0
}

// writeVerdict writes show's -html page and -md comment (where named) of
// check's verdict over c's window.
func writeVerdict(ctx context.Context, s history.Store, c historyCheckOptions, page, md string) error {
	h, r, err := historyVerdict(ctx, s, c)
	if err == nil && page != "" {
		err = writeHistoryHTML(page, c, h, r)
	}
	if err == nil && md != "" {
		err = os.WriteFile(md, []byte(checkMarkdown(c, h, r)), 0o644)
	}
	return err
}

// writeHistoryText lists the history's commits, a line each.
func writeHistoryText(w io.Writer, testbed, branch string, h history.History) {
	fmt.Fprintln(w, phrasef(`%s on "%s": %d commits, %d series`, untrusted(branch), untrusted(testbed), len(h.Commits), len(h.Series)).text())
	for i, c := range h.Commits {
		fmt.Fprintf(w, "  %-12d %s  %d run(s)\n", c.Seq, termText(c.SHA), len(h.Runs[i]))
	}
}
