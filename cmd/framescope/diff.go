package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "diff",
		summary: "compare two traces zone by zone; exit 1 on a regression",
		run:     runDiff,
	})
}

// diffOptions are the rules of `framescope diff`.
type diffOptions struct {
	threshold float64 // relative median increase that counts, e.g. 0.05
	alpha     float64 // one-sided significance level of the rank test
	budgets   []budget
}

// budget is an absolute limit: the zone's p95 in the new trace must not
// exceed max.
type budget struct {
	zone string // a zone name, or kind:name ("gpu:shadow")
	max  time.Duration
}

func (b budget) matches(z zone) bool { return b.zone == z.Name || b.zone == z.String() }

// zoneDiff is the comparison of one zone.
type zoneDiff struct {
	zone            zone
	nBase, nNew     int
	p50Base, p50New float64
	p95New          float64
	change          float64 // p50New/p50Base - 1
	p               float64 // one-sided Mann-Whitney p-value; NaN when untested
	regressed       bool
	budget          *budget
	overBudget      bool
	note            string // "new", "gone", "too few samples"
}

type diffReport struct {
	zones       []zoneDiff
	regressions int
	overBudget  int
	unmatched   []string // budgets naming no zone of the new trace
}

// budgetValue implements flag.Value for repeated --budget ZONE=DURATION.
type budgetValue struct{ list *[]budget }

func (v budgetValue) String() string { return "" }

func (v budgetValue) Set(s string) error {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return errors.New("want ZONE=DURATION, e.g. shadow=2ms")
	}
	d, err := time.ParseDuration(s[i+1:])
	if err != nil || d <= 0 {
		return fmt.Errorf("bad duration %q: want a positive duration such as 1.5ms", s[i+1:])
	}
	*v.list = append(*v.list, budget{zone: s[:i], max: d})
	return nil
}

// percentValue implements flag.Value for a fraction given as 0.05 or 5%.
type percentValue struct{ f *float64 }

func (v percentValue) String() string {
	if v.f == nil {
		return ""
	}
	return strconv.FormatFloat(*v.f*100, 'g', -1, 64) + "%"
}

func (v percentValue) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return fmt.Errorf("bad fraction %q: want e.g. 5%% or 0.05", s)
	}
	if pct {
		f /= 100
	}
	*v.f = f
	return nil
}

// compare compares the zones of base and new.
func compare(base, cur *timeline.Trace, o diffOptions) diffReport {
	db, dn := zoneDurations(base), zoneDurations(cur)
	all := map[zone]bool{}
	for z := range db {
		all[z] = true
	}
	for z := range dn {
		all[z] = true
	}
	var r diffReport
	used := make([]bool, len(o.budgets))
	for _, z := range sortedZones(all) {
		b, n := db[z], dn[z]
		d := zoneDiff{zone: z, nBase: len(b), nNew: len(n), p: math.NaN(), p50Base: math.NaN(), p50New: math.NaN(), p95New: math.NaN(), change: math.NaN()}
		if len(b) > 0 {
			d.p50Base = stats.Summarize(b).P50
		}
		if len(n) > 0 {
			s := stats.Summarize(n)
			d.p50New, d.p95New = s.P50, s.P95
		}
		switch {
		case len(b) == 0:
			d.note = "new"
		case len(n) == 0:
			d.note = "gone"
		default:
			if d.p50Base > 0 {
				d.change = d.p50New/d.p50Base - 1
			} else if d.p50New > 0 {
				d.change = math.Inf(1)
			} else {
				d.change = 0
			}
			rt, err := stats.MannWhitney(toFloat(b), toFloat(n))
			if err == nil {
				d.p = rt.P
			}
			d.regressed = d.change > o.threshold && d.p < o.alpha
		}
		for i := range o.budgets {
			if o.budgets[i].matches(z) && len(n) > 0 {
				used[i] = true
				d.budget = &o.budgets[i]
				d.overBudget = d.p95New > float64(o.budgets[i].max.Nanoseconds())
			}
		}
		if d.regressed {
			r.regressions++
		}
		if d.overBudget {
			r.overBudget++
		}
		r.zones = append(r.zones, d)
	}
	for i, u := range used {
		if !u {
			r.unmatched = append(r.unmatched, o.budgets[i].zone)
		}
	}
	return r
}

func toFloat(xs []int64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	o := diffOptions{threshold: 0.05, alpha: 0.01}
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(percentValue{&o.threshold}, "threshold", "median increase that counts as a regression (5% or 0.05)")
	fs.Float64Var(&o.alpha, "alpha", 0.01, "one-sided significance level of the Mann-Whitney U test")
	fs.Var(budgetValue{&o.budgets}, "budget", "ZONE=DURATION: the zone's p95 in NEW must not exceed DURATION (repeatable; ZONE is a name or gpu:NAME / cpu:NAME)")
	markdown := fs.Bool("markdown", false, "write a Markdown report for a pull-request comment")
	asJSON := fs.Bool("json", false, "write JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope diff [flags] BASE NEW")
		fmt.Fprintln(stderr, "A zone regressed when its median grew by more than --threshold and a one-sided")
		fmt.Fprintln(stderr, "Mann-Whitney U test finds NEW slower at --alpha. Exit 0: no regression; 1: a")
		fmt.Fprintln(stderr, "regression or a budget exceeded; 2: bad usage or input.")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fs.Usage()
		return 2
	}
	if !(o.alpha > 0 && o.alpha < 1) {
		fmt.Fprintf(stderr, "framescope diff: --alpha %v: want a level between 0 and 1\n", o.alpha)
		return 2
	}
	base, err := loadTrace(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "framescope diff: %v\n", err)
		return 2
	}
	cur, err := loadTrace(pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "framescope diff: %v\n", err)
		return 2
	}
	r := compare(base, cur, o)
	if len(r.unmatched) > 0 {
		fmt.Fprintf(stderr, "framescope diff: --budget names zones not in %s: %s\n", pos[1], strings.Join(r.unmatched, ", "))
		return 2
	}
	switch {
	case *asJSON && *markdown:
		fmt.Fprintln(stderr, "framescope diff: --json and --markdown exclude each other")
		return 2
	case *asJSON:
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		if err := e.Encode(diffJSON(r, o)); err != nil {
			fmt.Fprintf(stderr, "framescope diff: %v\n", err)
			return 2
		}
	case *markdown:
		writeDiffMarkdown(stdout, r, o)
	default:
		writeDiffText(stdout, r, o)
	}
	if r.regressions > 0 || r.overBudget > 0 {
		return 1
	}
	return 0
}

// zoneDiffJSON is a zoneDiff for --json; statistics that do not apply
// (a zone on one side only) are null.
type zoneDiffJSON struct {
	Zone       string   `json:"zone"`
	Kind       string   `json:"kind"`
	NBase      int      `json:"n_base"`
	NNew       int      `json:"n_new"`
	P50BaseNs  *float64 `json:"p50_base_ns"`
	P50NewNs   *float64 `json:"p50_new_ns"`
	P95NewNs   *float64 `json:"p95_new_ns"`
	Change     *float64 `json:"change"`
	P          *float64 `json:"p"`
	Regressed  bool     `json:"regressed"`
	BudgetNs   *int64   `json:"budget_p95_ns,omitempty"`
	OverBudget bool     `json:"over_budget"`
	Note       string   `json:"note,omitempty"`
}

type diffReportJSON struct {
	Threshold   float64        `json:"threshold"`
	Alpha       float64        `json:"alpha"`
	Regressions int            `json:"regressions"`
	OverBudget  int            `json:"over_budget"`
	Zones       []zoneDiffJSON `json:"zones"`
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func diffJSON(r diffReport, o diffOptions) diffReportJSON {
	out := diffReportJSON{Threshold: o.threshold, Alpha: o.alpha, Regressions: r.regressions, OverBudget: r.overBudget, Zones: []zoneDiffJSON{}}
	for _, d := range r.zones {
		z := zoneDiffJSON{
			Zone: d.zone.Name, Kind: d.zone.Kind, NBase: d.nBase, NNew: d.nNew,
			P50BaseNs: finite(d.p50Base), P50NewNs: finite(d.p50New), P95NewNs: finite(d.p95New),
			Change: finite(d.change), P: finite(d.p), Regressed: d.regressed, OverBudget: d.overBudget, Note: d.note,
		}
		if d.budget != nil {
			ns := d.budget.max.Nanoseconds()
			z.BudgetNs = &ns
		}
		out.Zones = append(out.Zones, z)
	}
	return out
}

func fmtChange(c float64) string {
	if math.IsNaN(c) {
		return "-"
	}
	if math.IsInf(c, 1) {
		return "+inf"
	}
	return fmt.Sprintf("%+.1f%%", c*100)
}

func fmtP(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	if p < 1e-4 {
		return fmt.Sprintf("%.0e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

func (d zoneDiff) verdict() string {
	var v []string
	if d.regressed {
		v = append(v, "REGRESSED")
	}
	if d.overBudget {
		v = append(v, fmt.Sprintf("OVER BUDGET (p95 %s > %s)", fmtNs(d.p95New), d.budget.max))
	}
	if d.note != "" {
		v = append(v, d.note)
	}
	if len(v) == 0 {
		return "ok"
	}
	return strings.Join(v, ", ")
}

func summaryLine(r diffReport, o diffOptions) string {
	return fmt.Sprintf("%d zones compared: %d regressed (median +%.4g%% and p < %v), %d over budget",
		len(r.zones), r.regressions, o.threshold*100, o.alpha, r.overBudget)
}

func writeDiffText(w io.Writer, r diffReport, o diffOptions) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tzone\tn base\tn new\tp50 base\tp50 new\tchange\tp\tverdict")
	for _, d := range r.zones {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", d.zone.Kind, d.zone.Name, d.nBase, d.nNew,
			fmtNs(d.p50Base), fmtNs(d.p50New), fmtChange(d.change), fmtP(d.p), d.verdict())
	}
	tw.Flush()
	fmt.Fprintln(w, summaryLine(r, o))
}

func writeDiffMarkdown(w io.Writer, r diffReport, o diffOptions) {
	if r.regressions > 0 || r.overBudget > 0 {
		fmt.Fprintf(w, "### :x: Framescope: %d regressed, %d over budget\n\n", r.regressions, r.overBudget)
	} else {
		fmt.Fprintf(w, "### :white_check_mark: Framescope: no regression\n\n")
	}
	fmt.Fprintln(w, "| kind | zone | n base | n new | p50 base | p50 new | change | p | verdict |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|---|")
	for _, d := range r.zones {
		v := d.verdict()
		if d.regressed || d.overBudget {
			v = "**" + v + "**"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", d.zone.Kind, mdCell(d.zone.Name), d.nBase, d.nNew,
			fmtNs(d.p50Base), fmtNs(d.p50New), fmtChange(d.change), fmtP(d.p), v)
	}
	fmt.Fprintf(w, "\n%s. Test: one-sided Mann-Whitney U (tie-corrected); budgets apply to p95.\n", summaryLine(r, o))
}
