package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/framescope/framescope/timeline"
)

// What the outputs of `framescope diff` say of work (diff_work.go). A
// diff whose traces carry no work prints none of it.

// diffWorkRow is one line of the work tables, in plain text: a statistic of
// a zone that regressed or improved, or the statistics a zone counted on
// one side only. Unchanged statistics are counted in the summary, and
// listed in --json.
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
					runs: fmt.Sprintf("%d/%d", len(w.base), len(w.cur)), base: fmtWorkCount(w.medBase), cur: fmtWorkCount(w.medNew),
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

func fmtWorkTolerance(w workDiff) string {
	switch {
	case math.IsNaN(w.tolerance):
		return "-"
	case w.exact():
		return "exact"
	case math.IsInf(w.tolerance, 1) || w.tolerance > 1e6:
		return "±inf"
	}
	return fmt.Sprintf("±%.1f%%", w.tolerance*100)
}

// workHeadline is what the headline adds for work, or "".
func (r diffReport) workHeadline() string {
	if !r.hasWork() {
		return ""
	}
	c := r.workCounts()
	s := fmt.Sprintf("; work: %d regressed, %d improved, %d unchanged", c.regressed, c.improved, c.unchanged)
	if c.oneSided > 0 {
		s += fmt.Sprintf(", %d on one side only", c.oneSided)
	}
	return s
}

// workSummary introduces the work table.
func (r diffReport) workSummary() string {
	c := r.workCounts()
	s := fmt.Sprintf("Work (%d pipeline statistics of %d GPU zones, %d compared exactly): %d regressed, %d improved, %d unchanged",
		c.regressed+c.improved+c.unchanged, c.zones, c.exact, c.regressed, c.improved, c.unchanged)
	if c.oneSided > 0 {
		s += fmt.Sprintf(", %d counted on one side only", c.oneSided)
	}
	if c.unchanged > 0 {
		s += "; --json lists the unchanged"
	}
	return s + "."
}

// workRules says how work is compared.
func (r diffReport) workRules(o diffOptions) string {
	return fmt.Sprintf("Work rules: a run's value is the zone's mean count per occurrence, a side's the median over its runs; "+
		"a statistic regresses when NEW's exceeds BASE's by more than %s and its tolerance "+
		"(none where the statistic's measured tolerance is 0 and no run differs from its side's median; "+
		"else %d times the largest relative deviation of a run from its side's median, and at least the measured tolerance). "+
		"One run a side is enough; --floor does not apply to counts.",
		fmtChange(o.minEffect), diffWorkSpreadFactor)
}

func writeDiffWorkText(w io.Writer, r diffReport) {
	if !r.hasWork() {
		return
	}
	fmt.Fprintf(w, "\n%s\n", r.workSummary())
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
	fmt.Fprintf(w, "\n%s\n", r.workSummary())
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
		fmt.Fprintf(w, "| %s | %s | %s | `%s` | %s | %s | %s | %s | %s | %s |\n", x.key.Kind, mdCode(x.key.Track), mdCode(x.key.Name),
			x.stat, x.runs, x.base, x.cur, x.change, x.tolerance, v)
	}
}

// diffWorkJSON is one statistic of one zone for --json; what does not apply
// is null.
type diffWorkJSON struct {
	Statistic  string    `json:"statistic"`
	Base       []float64 `json:"base"` // each run's mean count per occurrence
	New        []float64 `json:"new"`
	MedianBase *float64  `json:"median_base"`
	MedianNew  *float64  `json:"median_new"`
	Change     *float64  `json:"change"` // null also when BASE's is 0 and NEW's is not
	Spread     *float64  `json:"spread"`
	Tolerance  *float64  `json:"tolerance"`
	Exact      bool      `json:"exact"`
	Verdict    string    `json:"verdict"`           // unchanged, improved, regressed, base_only or new_only
	Missing    string    `json:"missing,omitempty"` // why the other side has no counts
}

// diffWorkReportJSON is the work part of --json's summary.
type diffWorkReportJSON struct {
	Value        string             `json:"value"`
	Regressions  int                `json:"regressions"`
	Improved     int                `json:"improved"`
	Unchanged    int                `json:"unchanged"`
	Exact        int                `json:"exact"`
	OneSide      int                `json:"one_side"`
	Zones        int                `json:"zones"`
	SpreadFactor float64            `json:"spread_factor"`
	Tolerance    map[string]float64 `json:"tolerance"` // the measured table, by statistic
}

func diffWorkOfJSON(ws []workDiff) []diffWorkJSON {
	var out []diffWorkJSON
	for _, w := range ws {
		j := diffWorkJSON{Statistic: timeline.StatKey(w.stat), Base: finiteAll(w.base), New: finiteAll(w.cur),
			MedianBase: finite(w.medBase), MedianNew: finite(w.medNew), Change: finite(w.change),
			Spread: finite(w.spread), Tolerance: finite(w.tolerance), Verdict: w.outcome.String(), Missing: w.missing}
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

func diffWorkReportOfJSON(r diffReport) *diffWorkReportJSON {
	if !r.hasWork() {
		return nil
	}
	c := r.workCounts()
	j := &diffWorkReportJSON{Value: "mean count per occurrence of the zone in a run; median over the runs of a side",
		Regressions: c.regressed, Improved: c.improved, Unchanged: c.unchanged, Exact: c.exact, OneSide: c.oneSided, Zones: c.zones,
		SpreadFactor: diffWorkSpreadFactor, Tolerance: map[string]float64{}}
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
