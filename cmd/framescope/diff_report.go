package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

func fmtChange(c float64) string {
	switch {
	case math.IsNaN(c):
		return "-"
	case math.IsInf(c, 1) || c > 1e6:
		return "+inf"
	}
	return fmt.Sprintf("%+.1f%%", c*100)
}

func fmtRuns(n int) string {
	if n > maxRuns {
		return fmt.Sprintf("over %d", maxRuns)
	}
	return fmt.Sprint(n)
}

// zoneVerdict says what became of a zone, in words.
func (d zoneDiff) zoneVerdict() string {
	var v []string
	switch {
	case d.note != "":
		v = append(v, d.note)
	case d.outcome == regressed && d.separated:
		v = append(v, "REGRESSED (no frame overlap)")
	case d.outcome == regressed:
		v = append(v, "REGRESSED")
	case d.outcome == inconclusive:
		if n := d.tests[0].runsNeeded; n > 0 {
			v = append(v, "inconclusive (about "+fmtRuns(n)+" runs a side)")
		} else {
			v = append(v, "inconclusive")
		}
	default:
		v = append(v, d.outcome.String())
	}
	if d.note == "" && d.outcome != regressed && d.tests[1].outcome == regressed {
		v = append(v, "p95 slower (not gated; --tails gates it)")
	}
	if d.overBudget {
		v = append(v, fmt.Sprintf("OVER BUDGET (p95 %s > %s)", fmtNs(d.p95New), d.budget.max))
	}
	if w := d.zoneWorkVerdict(); w != "" {
		v = append(v, w)
	}
	return strings.Join(v, ", ")
}

func (r diffReport) headline() string {
	s := fmt.Sprintf("%s: %d regressed, %d over budget, %d inconclusive, %d improved, %d unchanged", strings.ToUpper(r.outcome.String()),
		r.regressions, r.overBudget, r.undecided, r.improved, r.unchanged)
	if r.outcome == inconclusive && r.runsNeeded > 0 {
		s += fmt.Sprintf(" (about %s runs a side would decide)", fmtRuns(r.runsNeeded))
	}
	if r.inCommon == 0 {
		s += "; no zone is on both sides"
	}
	return s + r.workHeadline()
}

// noiseNote explains what too few runs cannot tell, or "".
func (r diffReport) noiseNote(o diffOptions) string {
	if !r.fewRuns {
		return ""
	}
	least := leastRuns(o.alpha)
	s := fmt.Sprintf("With %d BASE and %d NEW runs, a change cannot be told from run-to-run noise (another process, clocks and caches move whole runs): "+
		"only a zone whose median grew by more than %s with every NEW frame slower than every BASE frame counts as regressed; "+
		"everything else is inconclusive. At least %d runs a side let the runs decide at alpha %g.",
		len(r.base.Runs), len(r.cur.Runs), fmtChange(o.oneRun), least, o.alpha)
	if r.hasWork() {
		s += " This is of times only: work is compared whatever the runs, and one run a side decides an exact statistic."
	}
	return s
}

func (r diffReport) rulesLine(o diffOptions) string {
	stat, tests := "median", r.common
	if o.gateTails {
		stat, tests = "median or p95", 2*r.common
	}
	s := fmt.Sprintf("Rules: a regression is a per-run %s slower by more than %s and %s, at a false-alarm level of %g over all %d tests together",
		stat, fmtChange(o.minEffect), fmtNs(float64(o.floor.Nanoseconds())), o.alpha, tests)
	if r.splits > 0 {
		how := "all"
		if !r.exact {
			how = "a random sample of"
		}
		s += fmt.Sprintf(" (%s %d splits of the runs)", how, r.splits)
	}
	return s + "."
}

// sideText is a side in words: its runs, where they are, its devices.
func sideText(s side) phrase {
	devs := joinNames(s.devices(), ", ")
	if len(devs) == 0 {
		devs = phrasef("no GPU queue")
	}
	return phrasef("%d run(s) from %s on %s", len(s.Runs), untrusted(s.Path), devs)
}

func sideLine(label string, s side) string { return label + ": " + sideText(s).text() }

func writeDiffText(w io.Writer, r diffReport, o diffOptions) {
	fmt.Fprintf(w, "framescope diff: %s\n", r.headline())
	fmt.Fprintln(w, sideLine("BASE", r.base))
	fmt.Fprintln(w, sideLine("NEW ", r.cur))
	if o.driver != "" {
		fmt.Fprintf(w, "driver: %s\n", termText(o.driver))
	}
	if n := r.noiseNote(o); n != "" {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\ttrack\tzone\truns\tp50 base\tp50 new\tchange\tp95 base\tp95 new\tchange\tverdict")
	for _, d := range r.zones {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.key.Kind, termText(d.key.Track), termText(d.key.Name),
			d.runsBase, d.runsNew,
			fmtNs(d.tests[0].medBase), fmtNs(d.tests[0].medNew), fmtChange(d.tests[0].change),
			fmtNs(d.tests[1].medBase), fmtNs(d.tests[1].medNew), fmtChange(d.tests[1].change), d.zoneVerdict())
	}
	tw.Flush()
	writeDiffWorkText(w, r)
	fmt.Fprintln(w, r.rulesLine(o))
	if r.hasWork() {
		fmt.Fprintln(w, r.workRules(o))
	}
}

func writeDiffMarkdown(w io.Writer, r diffReport, o diffOptions) {
	icon := map[outcome]string{unchanged: ":white_check_mark:", improved: ":white_check_mark:", inconclusive: ":grey_question:", regressed: ":x:"}[r.outcome]
	fmt.Fprintf(w, "### %s Framescope: %s\n\n", icon, r.headline())
	for _, s := range []struct {
		name string
		s    side
	}{{"BASE", r.base}, {"NEW", r.cur}} {
		devs := s.s.devices()
		for i := range devs {
			devs[i] = mdCode(devs[i])
		}
		fmt.Fprintf(w, "- **%s**: %d run(s) from %s, device %s", s.name, len(s.s.Runs), mdCode(s.s.Path), strings.Join(devs, ", "))
		names := make([]string, 0, len(s.s.Runs))
		for i, ru := range s.s.Runs {
			if i == 20 {
				names = append(names, fmt.Sprintf("and %d more", len(s.s.Runs)-20))
				break
			}
			names = append(names, mdCode(filepath.Base(ru.Path)))
		}
		fmt.Fprintf(w, ": %s\n", strings.Join(names, ", "))
	}
	drv := o.driver
	if drv == "" {
		drv = "not given (traces do not record it; pass --driver)"
		fmt.Fprintf(w, "- **driver**: %s\n", drv)
	} else {
		fmt.Fprintf(w, "- **driver**: %s\n", mdCode(drv))
	}
	fmt.Fprintf(w, "- **verdict**: %s\n", r.outcome)
	if n := r.noiseNote(o); n != "" {
		fmt.Fprintf(w, "\n> %s\n", n)
	}
	fmt.Fprintln(w, "\n| kind | track | zone | runs | p50 base | p50 new | change | p95 base | p95 new | change | verdict |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, d := range r.zones {
		v := d.zoneVerdict()
		if d.outcome == regressed || d.overBudget || d.workOutcome() == regressed {
			v = "**" + v + "**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s |\n", d.key.Kind, mdCode(d.key.Track), mdCode(d.key.Name),
			d.runsBase, d.runsNew,
			fmtNs(d.tests[0].medBase), fmtNs(d.tests[0].medNew), fmtChange(d.tests[0].change),
			fmtNs(d.tests[1].medBase), fmtNs(d.tests[1].medNew), fmtChange(d.tests[1].change), v)
	}
	writeDiffWorkMarkdown(w, r)
	fmt.Fprintf(w, "\n%s\n", r.rulesLine(o))
	if r.hasWork() {
		fmt.Fprintf(w, "\n%s\n", r.workRules(o))
	}
}

// testJSON is one statistic of one zone for --json; what does not apply
// is null.
type testJSON struct {
	BaseNs     []float64 `json:"base_ns"`
	NewNs      []float64 `json:"new_ns"`
	MedianBase *float64  `json:"median_base_ns"`
	MedianNew  *float64  `json:"median_new_ns"`
	Change     *float64  `json:"change"`
	PRegressed *float64  `json:"p_regressed"`
	PUnchanged *float64  `json:"p_unchanged"`
	Verdict    string    `json:"verdict"`
	RunsNeeded int       `json:"runs_needed,omitempty"`
}

type zoneDiffJSON struct {
	Kind       string         `json:"kind"`
	Track      string         `json:"track"`
	Zone       string         `json:"zone"`
	RunsBase   int            `json:"runs_base"`
	RunsNew    int            `json:"runs_new"`
	Verdict    string         `json:"verdict"`
	Separated  bool           `json:"frames_separated,omitempty"`
	P50        testJSON       `json:"p50"`
	P95        testJSON       `json:"p95"`
	BudgetNs   *int64         `json:"budget_p95_ns,omitempty"`
	OverBudget bool           `json:"over_budget"`
	Work       []diffWorkJSON `json:"work,omitempty"` // each statistic counted on either side
}

type sideJSON struct {
	Path    string   `json:"path"`
	Runs    []string `json:"runs"`
	Devices []string `json:"devices"`
	// Cut lists the runs cut short, with how much of each reads back.
	Cut []*traceCut `json:"cut,omitempty"`
}

type diffReportJSON struct {
	Verdict      string              `json:"verdict"`
	MinEffect    float64             `json:"min_effect"`
	FloorNs      int64               `json:"floor_ns"`
	Alpha        float64             `json:"alpha"`
	Driver       string              `json:"driver,omitempty"`
	Base         sideJSON            `json:"base"`
	New          sideJSON            `json:"new"`
	Splits       int                 `json:"splits"`
	ExactSplits  bool                `json:"exact_splits"`
	TooFewRuns   bool                `json:"too_few_runs"`
	Regressions  int                 `json:"regressions"`
	OverBudget   int                 `json:"over_budget"`
	Inconclusive int                 `json:"inconclusive"`
	Improved     int                 `json:"improved"`
	Unchanged    int                 `json:"unchanged"`
	RunsNeeded   int                 `json:"runs_needed,omitempty"`
	Work         *diffWorkReportJSON `json:"work,omitempty"` // when a zone on both sides carries work
	Zones        []zoneDiffJSON      `json:"zones"`
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func finiteAll(fs []float64) []float64 {
	out := make([]float64, 0, len(fs))
	for _, f := range fs {
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			out = append(out, f)
		}
	}
	return out
}

func sideOf(s side) sideJSON {
	j := sideJSON{Path: s.Path, Runs: []string{}, Devices: s.devices(), Cut: cuts(s)}
	if j.Devices == nil {
		j.Devices = []string{}
	}
	for _, r := range s.Runs {
		j.Runs = append(j.Runs, r.Path)
	}
	return j
}

func diffJSON(r diffReport, o diffOptions) diffReportJSON {
	out := diffReportJSON{
		Verdict: r.outcome.String(), MinEffect: o.minEffect, FloorNs: o.floor.Nanoseconds(), Alpha: o.alpha, Driver: o.driver,
		Base: sideOf(r.base), New: sideOf(r.cur), Splits: r.splits, ExactSplits: r.exact, TooFewRuns: r.fewRuns,
		Regressions: r.regressions, OverBudget: r.overBudget, Inconclusive: r.undecided, Improved: r.improved, Unchanged: r.unchanged,
		RunsNeeded: r.runsNeeded, Work: diffWorkReportOfJSON(r), Zones: []zoneDiffJSON{},
	}
	for _, d := range r.zones {
		z := zoneDiffJSON{Kind: d.key.Kind, Track: d.key.Track, Zone: d.key.Name, RunsBase: d.runsBase, RunsNew: d.runsNew,
			Verdict: d.outcome.String(), Separated: d.separated, OverBudget: d.overBudget, Work: diffWorkOfJSON(d.work)}
		if d.note != "" {
			z.Verdict = d.note
		}
		for ti, dst := range []*testJSON{&z.P50, &z.P95} {
			t := d.tests[ti]
			*dst = testJSON{BaseNs: finiteAll(t.base), NewNs: finiteAll(t.cur), MedianBase: finite(t.medBase), MedianNew: finite(t.medNew),
				Change: finite(t.change), PRegressed: finite(t.pRegressed), PUnchanged: finite(t.pUnchanged), Verdict: t.outcome.String(), RunsNeeded: t.runsNeeded}
			if d.note != "" {
				dst.Verdict = d.note
			}
		}
		if d.budget != nil {
			ns := d.budget.max.Nanoseconds()
			z.BudgetNs = &ns
		}
		out.Zones = append(out.Zones, z)
	}
	return out
}

func writeDiffJSON(w io.Writer, r diffReport, o diffOptions) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(diffJSON(r, o))
}
