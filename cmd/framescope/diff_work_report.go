package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/framescope/framescope/timeline"
)

// What the outputs of `framescope diff` say of work (diff_work.go). A
// diff whose traces carry no work prints none of it.

// diffWorkRow is one line of the work tables, in plain text: a statistic of
// a zone that regressed, improved or is inconclusive, or the statistics a
// zone counted on one side only. Unchanged statistics are counted in the
// summary, which names the first few, and listed in --json.
type diffWorkRow struct {
	key                                               zoneKey
	stat, runs, base, cur, change, tolerance, verdict string
	bad                                               bool
}

// workRows lists the rows of the work tables, zone by zone in the
// report's order, each zone's statistics in bit order.
func (r diffReport) workRows() []diffWorkRow {
	var rows []diffWorkRow
	for _, d := range r.zones {
		var only [2]timeline.PipelineStats // counted on BASE only, on NEW only
		var why [2]string
		var runs [2]int
		for _, w := range d.work {
			switch {
			case w.only != "":
				s := 0
				if w.only == "NEW" {
					s = 1
				}
				only[s] |= 1 << w.stat
				why[s] = w.missing
				runs[s] = max(runs[s], len(w.base)+len(w.cur))
			case w.outcome != unchanged:
				rows = append(rows, diffWorkRow{key: d.key, stat: timeline.StatKey(w.stat),
					runs: fmt.Sprintf("%d/%d", len(w.base), len(w.cur)), base: w.fmtMedian(false), cur: w.fmtMedian(true),
					change: fmtChange(w.change), tolerance: fmtWorkTolerance(w), verdict: diffWorkVerdict(w), bad: w.outcome == regressed})
			}
		}
		for s, name := range [2]string{"BASE", "NEW"} {
			if only[s] == 0 {
				continue
			}
			other := [2]string{"NEW", "BASE"}[s]
			rs := [2]string{fmt.Sprintf("%d/0", runs[s]), fmt.Sprintf("0/%d", runs[s])}[s]
			rows = append(rows, diffWorkRow{key: d.key, stat: only[s].String(), runs: rs, base: "-", cur: "-", change: "-", tolerance: "-",
				verdict: fmt.Sprintf("counted on %s only (%s: %s)", name, other, why[s])})
		}
	}
	return rows
}

func diffWorkVerdict(w workDiff) string {
	if w.outcome == regressed {
		return "REGRESSED"
	}
	return w.outcome.String()
}

// fmtMedian writes a side's median: exactly, where it is a whole number
// of whole runs' values.
func (w workDiff) fmtMedian(cur bool) string {
	v, f := w.baseWhole, w.medBase
	if cur {
		v, f = w.curWhole, w.medNew
	}
	if m, ok := wholeMedian(v); w.whole && ok {
		return strconv.FormatUint(m, 10)
	}
	return fmtWorkCount(f)
}

// wholeMedian is the median of v where it is a whole number: the middle
// value, or the mean of the two middle ones when even.
func wholeMedian(v []uint64) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(v))
	h := len(s) / 2
	if len(s)%2 == 1 {
		return s[h], true
	}
	a, b := s[h-1], s[h]
	if (a^b)&1 != 0 {
		return 0, false
	}
	return a/2 + b/2 + a&b&1, true
}

// fmtWorkCount writes a count, or a mean of counts: whole numbers whole.
func fmtWorkCount(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1e15:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtWorkTolerance says how a statistic was compared: exactly, or by
// the runs (with the measured tolerance, where not 0).
func fmtWorkTolerance(w workDiff) string {
	switch {
	case math.IsNaN(w.tolerance):
		return "-"
	case w.exact():
		return "exact"
	case w.tolerance == 0:
		return "runs"
	case math.IsInf(w.tolerance, 1) || w.tolerance > 1e6:
		return "runs, ±inf"
	}
	return fmt.Sprintf("runs, ±%.1f%%", w.tolerance*100)
}

// workHeadline is what the headline adds for work, or "".
func (r diffReport) workHeadline() string {
	if !r.hasWork() {
		return ""
	}
	c := r.workCounts()
	s := fmt.Sprintf("; work: %d regressed, %d improved, %d unchanged", c.regressed, c.improved, c.unchanged)
	if c.inconclusive > 0 {
		s += fmt.Sprintf(", %d inconclusive", c.inconclusive)
	}
	if c.oneSided > 0 {
		s += fmt.Sprintf(", %d on one side only", c.oneSided)
	}
	return s
}

// workSummary introduces the work table.
func (r diffReport) workSummary() phrase {
	c := r.workCounts()
	s := phrasef("Work (%d pipeline statistics of %d GPU zones, %d compared exactly): %d regressed, %d improved, %d unchanged",
		c.regressed+c.improved+c.unchanged+c.inconclusive, c.zones, c.exact, c.regressed, c.improved, c.unchanged)
	if c.inconclusive > 0 {
		s = phrasef("%s, %d inconclusive (their runs disagree, and are too few or too close to tell)", s, c.inconclusive)
	}
	if c.oneSided > 0 {
		s = phrasef("%s, %d counted on one side only (inconclusive)", s, c.oneSided)
	}
	if c.unchanged > 0 {
		s = phrasef("%s; the unchanged are not listed below (--json lists them): %s", s, r.firstUnchanged(3))
	}
	return phrasef("%s.", s)
}

// firstUnchanged names the first n unchanged statistics, "zone statistic"
// each, and how many more.
func (r diffReport) firstUnchanged(n int) phrase {
	var names phrase
	shown, more := 0, 0
	for _, d := range r.zones {
		for _, w := range d.work {
			if w.only != "" || w.outcome != unchanged {
				continue
			}
			if shown < n {
				item := phrasef("%s %s", untrusted(d.key.Name), timeline.StatKey(w.stat))
				if shown > 0 {
					item = phrasef(", %s", item)
				}
				names = append(names, item...)
				shown++
			} else {
				more++
			}
		}
	}
	if more > 0 {
		names = phrasef("%s and %d more", names, more)
	}
	return names
}

// workRules says how work is compared.
func (r diffReport) workRules(o diffOptions) string {
	return fmt.Sprintf("Work rules: a run's value is the zone's mean count per occurrence, a side's the median over its runs. "+
		"Where every run of each side agrees and the statistic's measured tolerance is 0, it is compared exactly: "+
		"it regresses when NEW's exceeds BASE's by more than %s, and one run a side is enough. "+
		"Otherwise the runs decide, as for time (a permutation test over the runs of every such statistic at once, "+
		"sharing the gate's level with the time tests): regressed or improved beyond %s and the tolerance, "+
		"unchanged only when the runs show the change is within %s, else inconclusive. "+
		"A statistic counted on one side only is inconclusive. --floor does not apply to counts.",
		fmtChange(o.minEffect), fmtChange(o.minEffect), fmtChange(o.minEffect))
}

func writeDiffWorkText(w io.Writer, r diffReport) {
	if !r.hasWork() {
		return
	}
	fmt.Fprintf(w, "\n%s\n", r.workSummary().text())
	rows := r.workRows()
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\ttrack\tzone\tstatistic\truns\tbase\tnew\tchange\ttolerance\tverdict")
	for _, x := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.key.Kind, termText(x.key.Track), termText(x.key.Name),
			x.stat, x.runs, x.base, x.cur, x.change, x.tolerance, x.verdict)
	}
	tw.Flush()
}

func writeDiffWorkMarkdown(w io.Writer, r diffReport) {
	if !r.hasWork() {
		return
	}
	fmt.Fprintf(w, "\n%s\n", r.workSummary().markdown())
	rows := r.workRows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| kind | track | zone | statistic | runs | base | new | change | tolerance | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|--:|--:|--:|--:|--:|---|")
	for _, x := range rows {
		v := x.verdict
		if x.bad {
			v = "**" + v + "**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.key.Kind, mdCode(x.key.Track), mdCode(x.key.Name),
			mdCode(x.stat), x.runs, x.base, x.cur, x.change, x.tolerance, v)
	}
}

// diffWorkJSON is one statistic of one zone for --json; what does not apply
// is null.
type diffWorkJSON struct {
	Statistic string `json:"statistic"`
	// Base and New are each run's mean count per occurrence, and the
	// medians the sides': integers exactly where every run's is one.
	Base       []json.Number `json:"base"`
	New        []json.Number `json:"new"`
	MedianBase *json.Number  `json:"median_base"`
	MedianNew  *json.Number  `json:"median_new"`
	Change     *float64      `json:"change"` // null also when BASE's is 0 and NEW's is not
	Spread     *float64      `json:"spread"`
	Tolerance  *float64      `json:"tolerance"`
	Exact      bool          `json:"exact"`
	// PRegressed and PUnchanged are the runs' test's p-values, for a
	// statistic the runs decide.
	PRegressed *float64 `json:"p_regressed,omitempty"`
	PUnchanged *float64 `json:"p_unchanged,omitempty"`
	Verdict    string   `json:"verdict"`           // unchanged, improved, inconclusive, regressed, base_only or new_only
	Missing    string   `json:"missing,omitempty"` // why the other side has no counts
}

// diffWorkReportJSON is the work part of --json's summary.
type diffWorkReportJSON struct {
	Value        string             `json:"value"`
	Regressions  int                `json:"regressions"`
	Improved     int                `json:"improved"`
	Unchanged    int                `json:"unchanged"`
	Inconclusive int                `json:"inconclusive"`
	Exact        int                `json:"exact"`
	OneSide      int                `json:"one_side"`
	Zones        int                `json:"zones"`
	Tolerance    map[string]float64 `json:"tolerance"` // the measured table, by statistic
}

func diffWorkOfJSON(ws []workDiff) []diffWorkJSON {
	var out []diffWorkJSON
	for _, w := range ws {
		j := diffWorkJSON{Statistic: timeline.StatKey(w.stat), Base: countsJSON(w.base, w.baseWhole, w.whole), New: countsJSON(w.cur, w.curWhole, w.whole),
			MedianBase: medianJSON(w.medBase, w.baseWhole, w.whole), MedianNew: medianJSON(w.medNew, w.curWhole, w.whole), Change: finite(w.change),
			Spread: finite(w.spread), Tolerance: finite(w.tolerance), PRegressed: finite(w.pRegressed), PUnchanged: finite(w.pUnchanged),
			Verdict: w.outcome.String(), Missing: w.missing}
		switch w.only {
		case "BASE":
			j.Verdict = "base_only"
		case "NEW":
			j.Verdict = "new_only"
		default:
			j.Exact = w.exact()
		}
		out = append(out, j)
	}
	return out
}

// countsJSON writes a side's run values: the integers where whole, else
// the means as numbers (finite ones).
func countsJSON(f []float64, v []uint64, whole bool) []json.Number {
	out := []json.Number{}
	if whole {
		for _, x := range v {
			out = append(out, json.Number(strconv.FormatUint(x, 10)))
		}
		return out
	}
	for _, x := range finiteAll(f) {
		out = append(out, json.Number(strconv.FormatFloat(x, 'g', -1, 64)))
	}
	return out
}

// medianJSON is a side's median, exactly where it is a whole number of
// whole values; nil where there is none.
func medianJSON(f float64, v []uint64, whole bool) *json.Number {
	if m, ok := wholeMedian(v); whole && ok {
		n := json.Number(strconv.FormatUint(m, 10))
		return &n
	}
	if finite(f) == nil {
		return nil
	}
	n := json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	return &n
}

func diffWorkReportOfJSON(r diffReport) *diffWorkReportJSON {
	if !r.hasWork() {
		return nil
	}
	c := r.workCounts()
	j := &diffWorkReportJSON{Value: "mean count per occurrence of the zone in a run; median over the runs of a side",
		Regressions: c.regressed, Improved: c.improved, Unchanged: c.unchanged, Inconclusive: c.inconclusive, Exact: c.exact,
		OneSide: c.oneSided, Zones: c.zones,
		Tolerance: map[string]float64{}}
	for i, t := range diffWorkTolerance {
		j.Tolerance[timeline.StatKey(i)] = t
	}
	return j
}

// zoneWorkVerdict is what a zone's verdict adds for its work, or "".
func (d zoneDiff) zoneWorkVerdict() string {
	var v []string
	switch d.workOutcome() {
	case regressed:
		v = append(v, "WORK REGRESSED")
	case inconclusive:
		v = append(v, "work inconclusive")
	case improved:
		v = append(v, "work improved")
	}
	var only [2]bool // some statistic counted on BASE only, on NEW only
	for _, w := range d.work {
		only[0] = only[0] || w.only == "BASE"
		only[1] = only[1] || w.only == "NEW"
	}
	for s, name := range [2]string{"BASE", "NEW"} {
		if only[s] {
			v = append(v, "work counted on "+name+" only")
		}
	}
	return strings.Join(v, ", ")
}
