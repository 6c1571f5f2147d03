package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
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
// With names of 1,024 bytes that mdCode writes four times as long; with
// few findings, which all fit with no such line; and with one left out.
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
		{"one left out", 20, hostile, 19, 19},
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
			switch left := want[len(rows):]; {
			case len(left) == 1 && left[0].Regression:
				line = "\n_1 more finding, a regression, is left out"
			case len(left) == 1:
				line = "\n_1 more finding, not a regression, is left out"
			case len(left) > 1:
				line = fmt.Sprintf("\n_%d more findings (%d of them regressions) are left out", len(left), regressions(history.CheckResult{Findings: left}))
			}
			if tail := md[strings.LastIndex(md, " |\n")+3:]; !strings.HasPrefix(tail, line) || line != "" && !strings.Contains(tail, "`framescope history show -html`") {
				t.Errorf("the comment ends\n%q\nwant a line starting %q", tail, line)
			}
		})
	}
}

// A regression in each of 150 series gives a page of the same size over
// 10,000 commits as over 1,000, a few MB: every finding a line, the 100
// largest plotted (the first the count from 0), saying so, each plot at
// most maxDots squares, each the mean of a bucket of commits, saying so,
// the step between squares of the two sides' colours.
func TestHistoryPageBounded(t *testing.T) {
	zone := func(i int) string { return fmt.Sprintf("zone %04d", i) }
	size := map[int]int{}
	for _, commits := range []int{1_000, 10_000} {
		c, h, r := regressedHistory(150, commits, zone, true)
		b, err := historyHTML(c, h, r)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		size[commits] = len(page)
		k, _, _ := bucketsOf(commits, commits-1)
		for _, want := range []string{"The 100 largest of 150 findings are plotted",
			fmt.Sprintf("Each square is the mean of the runs of up to %d commits in a row", k)} {
			if !strings.Contains(page, want) {
				t.Errorf("%d commits: the page does not say %q", commits, want)
			}
		}
		plots := strings.Split(page, `<div class="zone">`)[1:]
		if n, rows := len(plots), strings.Count(page, "<li>"); n != maxPlots || rows != 150 {
			t.Fatalf("%d commits: %d plots and %d findings listed, want %d and 150", commits, n, rows, maxPlots)
		}
		if !strings.HasPrefix(plots[0], "<h3><bdi>gpu:graphics queue 0/zone 0003 p50</bdi>: from 0</h3>") {
			t.Errorf("%d commits: the first plot is not the largest finding's: %.200s", commits, plots[0])
		}
		for i, p := range plots {
			base, cur := strings.Count(p, `fill="`+baseColour+`"`), strings.Count(p, `fill="`+newColour+`"`)
			if base+cur > maxDots || base == 0 || cur == 0 {
				t.Fatalf("%d commits: plot %d has %d squares before the step and %d from it, want both, at most %d", commits, i, base, cur, maxDots)
			}
		}
	}
	t.Logf("page sizes by commits: %v", size)
	if size[10_000] > 5<<20 || size[10_000] > size[1_000]*3/2 {
		t.Errorf("page sizes by commits %v: want a few MB, as large over 10,000 commits as over 1,000", size)
	}
}

// bucketsOf makes at most maxDots buckets of at most k commits in a row,
// in order, the step's commit the first of one; with few commits, a
// bucket each.
func TestBucketsOf(t *testing.T) {
	for _, c := range []struct{ n, step int }{{30, 20}, {199, 1}, {200, 0}, {201, 200}, {1000, 999}, {10_000, 9_995}, {10_000, 5_001}, {100_000, 3}} {
		k, count, of := bucketsOf(c.n, c.step)
		if count > maxDots || c.n <= maxDots-2 && k != 1 {
			t.Errorf("%v: %d buckets of %d", c, count, k)
		}
		seen := make([]int, count)
		for i := range c.n {
			b := of(i)
			if b < 0 || b >= count || i > 0 && b != of(i-1) && b != of(i-1)+1 {
				t.Fatalf("%v: commit %d in bucket %d of %d, commit %d in %d", c, i, b, count, i-1, of(max(i-1, 0)))
			}
			seen[b]++
		}
		if c.step > 0 && of(c.step) == of(c.step-1) || slices.Max(seen) > k || slices.Min(seen) == 0 {
			t.Errorf("%v: the step's commit shares a bucket, or a bucket holds over %d commits or none: %v", c, k, seen)
		}
	}
}

// encodedHistoryJSON is show -json as it was written before it streamed:
// a copy of the whole history, encoded at once. The streamed output must
// be the same, byte for byte.
func encodedHistoryJSON(testbed, branch string, h history.History) string {
	out := historyJSON{Testbed: testbed, Branch: branch, Commits: []historyCommitJSON{}, Series: []historySeriesJSON{}}
	for i, c := range h.Commits {
		out.Commits = append(out.Commits, historyCommitJSON{SHA: c.SHA, Seq: c.Seq, Runs: h.Runs[i]})
	}
	for _, sr := range h.Series {
		js := historySeriesJSON{Kind: sr.Key.Kind, Track: sr.Key.Track, Name: sr.Key.Name, Metric: sr.Key.Metric}
		for _, v := range sr.Values {
			jv := historyValueJSON{Commit: v.Commit, Run: v.Run, Value: v.Value}
			if v.IsWhole {
				jv.Whole = fmt.Sprint(v.Whole)
			}
			if math.IsNaN(jv.Value) || math.IsInf(jv.Value, 0) {
				jv.Value = 0
			}
			js.Values = append(js.Values, jv)
		}
		out.Series = append(out.Series, js)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	return b.String()
}

// show -json, streamed, writes what encoding the whole history at once
// wrote, byte for byte: hostile names (controls, markup, bytes that are
// not UTF-8), values not finite (as 0), floats at encoding/json's
// exponent cutoffs, whole counts past 2^53 (as text), a commit of no
// runs, a series of no values, and an empty history.
func TestHistoryJSONStreamed(t *testing.T) {
	names := append(slices.Clone(hostileNames), nameSeeds...)
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e-6, 9.99e-7, 1e-7, 1e21, 9.99e20,
		5e-324, math.MaxFloat64, -123.456, 1.5e6, 3}
	var h history.History
	for i, nm := range names {
		h.Commits = append(h.Commits, history.Commit{SHA: nm, Seq: int64(i) << 40})
		h.Runs = append(h.Runs, []string{nm, "run" + nm})
	}
	h.Runs[1], h.Runs[2] = nil, []string{}
	for i, nm := range names {
		s := history.Series{Key: history.SeriesKey{Kind: nm, Track: nm + "<t>", Name: "&" + nm, Metric: nm}}
		for j, f := range floats {
			v := history.Value{Commit: (i + j) % len(names), Run: j % 2, Value: f}
			if j%3 == 0 {
				v.Whole, v.IsWhole = math.MaxUint64-uint64(j), true
			}
			s.Values = append(s.Values, v)
		}
		h.Series = append(h.Series, s)
	}
	h.Series[1].Values, h.Series[2].Values = nil, []history.Value{}
	for what, c := range map[string]history.History{"hostile": h, "empty": {}} {
		var got, errs strings.Builder
		if code := writeHistoryJSON(&got, &errs, names[0], names[1], c); code != 0 {
			t.Fatalf("%s: exit %d: %s", what, code, errs.String())
		}
		if want := encodedHistoryJSON(names[0], names[1], c); got.String() != want {
			t.Errorf("%s: streamed\n%s\nwant\n%s", what, got.String(), want)
		}
	}
}

// appendJSONFloat writes each float64 as encoding/json does.
func TestAppendJSONFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200_000 {
		f := math.Float64frombits(rng.Uint64())
		if i%2 == 0 {
			f = math.Ldexp(rng.Float64(), rng.IntN(160)-80) // near the cutoffs
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, _ := json.Marshal(f)
		if got := appendJSONFloat(nil, f); string(got) != string(want) {
			t.Fatalf("%v: %s, want %s", f, got, want)
		}
	}
}

// show -json allocates a small share of what it writes, however much:
// no copy of the history, nor the whole output in memory.
func TestHistoryJSONMemory(t *testing.T) {
	_, h, _ := regressedHistory(200, 1_000, func(i int) string { return fmt.Sprintf("zone %04d", i) }, true)
	var out countingWriter
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if code := writeHistoryJSON(&out, io.Discard, "h100", "main", h); code != 0 {
		t.Fatalf("exit %d", code)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes to write %d", alloc, out.n)
	if alloc > out.n/10 {
		t.Errorf("allocated %d bytes to write %d", alloc, out.n)
	}
}

type countingWriter struct{ n uint64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += uint64(len(p))
	return len(p), nil
}
