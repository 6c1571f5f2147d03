package main

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"
	"strings"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// The page is bounded whatever the history's length: it plots the
// largest maxPlots findings (findingsBySize), listing every finding a
// line; and a plot draws at most maxDots squares: a run each where the
// series has no more runs than that, else the mean of the runs of each
// bucket of commits in a row (bucketsOf), so that a step stays where it
// is and a page of 10,000 commits is no larger than one of 1,000.
const (
	maxPlots = 100
	maxDots  = 200
)

// historyPlot is one series that changed: each run's value a dot (or
// each bucket's mean, with a bar from its lowest to its highest run), the
// commits before the newest step in BASE's colour and those from it on
// in NEW's, a dashed line at the step and at each side's mean.
type historyPlot struct {
	Title           template.HTML // the series
	Change          string
	Note            string // what a square is, where it is not a run
	Dots            []historyDot
	Bars            []historyBars
	Ticks           []tick
	StepX           float64
	BeforeY, AfterY float64
	LeftX, RightX   float64
	FirstLabel      string // the oldest commit's name, cut short, under the plot's left end
	StepLabel       string // the step's commit's
	LastLabel       string
	StepLabelX      float64
}

type historyDot struct {
	X, Y   float64
	Colour string
	Title  string
}

// historyBars are one side's bars, from each bucket's lowest run to its
// highest: an SVG path's data, a vertical line a bucket.
type historyBars struct {
	D      string
	Colour string
}

type historyPage struct {
	Headline              template.HTML
	Rules                 string
	Rows                  []template.HTML // the findings
	Plots                 []historyPlot
	LeftOut               string // which findings are plotted, where not all
	BaseColour, NewColour string
	W, H                  int
}

var historyPageTmpl = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Framescope history</title>
<style>
body{font:14px/1.4 sans-serif;margin:16px;color:#111;background:#fff}
.zone{margin:18px 0}
</style></head><body>
<h1>Framescope: {{.Headline}}</h1>
<p>{{.Rules}}</p>
<ul>{{range .Rows}}<li>{{.}}</li>
{{end}}</ul>
{{if .LeftOut}}<p>{{.LeftOut}}</p>
{{end}}{{range .Plots}}<div class="zone"><h3>{{.Title}}: {{.Change}}</h3>
{{if .Note}}<p><small>{{.Note}}</small></p>
{{end}}<svg xmlns="http://www.w3.org/2000/svg" width="{{$.W}}" height="{{$.H}}" viewBox="0 0 {{$.W}} {{$.H}}" role="img">
<rect x="0" y="0" width="{{$.W}}" height="{{$.H}}" fill="#ffffff"/>
{{range .Ticks}}<line x1="78" x2="708" y1="{{.Y}}" y2="{{.Y}}" stroke="#e4e4e4"/><text x="72" y="{{.Y}}" font-size="11" text-anchor="end" dominant-baseline="middle" fill="#333">{{.Label}}</text>
{{end}}<line x1="{{.StepX}}" x2="{{.StepX}}" y1="14" y2="190" stroke="#999" stroke-dasharray="3 3"/>
<line x1="{{.LeftX}}" x2="{{.StepX}}" y1="{{.BeforeY}}" y2="{{.BeforeY}}" stroke="{{$.BaseColour}}" stroke-dasharray="6 3"/>
<line x1="{{.StepX}}" x2="{{.RightX}}" y1="{{.AfterY}}" y2="{{.AfterY}}" stroke="{{$.NewColour}}" stroke-dasharray="6 3"/>
{{range .Bars}}<path d="{{.D}}" stroke="{{.Colour}}" fill="none"/>
{{end}}{{range .Dots}}<rect x="{{.BoxX}}" y="{{.BoxY}}" width="7" height="7" fill="{{.Colour}}"><title>{{.Title}}</title></rect>
{{end}}<text x="{{.LeftX}}" y="208" font-size="11" text-anchor="start" fill="#333">{{.FirstLabel}}</text>
<text x="{{.StepLabelX}}" y="208" font-size="11" text-anchor="middle" fill="{{$.NewColour}}">{{.StepLabel}}</text>
<text x="{{.RightX}}" y="208" font-size="11" text-anchor="end" fill="#333">{{.LastLabel}}</text>
</svg></div>
{{end}}<p><small>Each square is one run of a commit (or, where a plot says so, the mean of the runs of several commits), oldest on the left; the dashed vertical line is the newest step (the first commit after it is named under it); the dashed lines are the mean before it and from it on.</small></p>
</body></html>
`))

// BoxX and BoxY place a dot's square.
func (d historyDot) BoxX() float64 { return px(d.X - 3.5) }
func (d historyDot) BoxY() float64 { return px(d.Y - 3.5) }

// px is a coordinate to a tenth of a pixel, so that the page writes
// "396.7", not "396.72727272727275", for each of its thousands.
func px(v float64) float64 { return math.Round(v*10) / 10 }

// writeHistoryHTML writes the check's findings as a page to path.
func writeHistoryHTML(path string, c historyCheckOptions, h history.History, r history.CheckResult) error {
	b, err := historyHTML(c, h, r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// historyHTML is the check's findings as a page: every finding a line,
// largest first (findingsBySize), and a plot of each of the largest
// maxPlots.
func historyHTML(c historyCheckOptions, h history.History, r history.CheckResult) ([]byte, error) {
	pg := historyPage{Headline: checkHeadline(c, h, r).html(), BaseColour: baseColour, NewColour: newColour, W: plotW, H: plotH,
		Rules: fmt.Sprintf("Newest step in each series at a false-alarm level of %g over every series and commit; a regression is a step up of more than %s.",
			c.o.Alpha, percentValue{f: &c.o.MinEffect})}
	fs := findingsBySize(r.Findings)
	for _, f := range fs {
		pg.Rows = append(pg.Rows, findingLine(h, f).html())
	}
	if len(fs) > maxPlots {
		pg.LeftOut = fmt.Sprintf("The %d largest of %d findings are plotted: the regressions first, the largest steps first, as listed above.", maxPlots, len(fs))
		fs = fs[:maxPlots]
	}
	series := map[history.SeriesKey]history.Series{}
	for _, s := range h.Series {
		series[s.Key] = s
	}
	for _, f := range fs {
		pg.Plots = append(pg.Plots, historyPlotOf(h, series[f.Series], f))
	}
	var b bytes.Buffer
	err := historyPageTmpl.Execute(&b, pg)
	return b.Bytes(), err
}

// historyPlotOf draws series s with its step f: a square a run, or, where
// s has more than maxDots, a square a bucket of commits (bucketDots).
func historyPlotOf(h history.History, s history.Series, f history.Finding) historyPlot {
	p := historyPlot{Title: htmlName(s.Key.String()), Change: stepText(f.Step), LeftX: plotL, RightX: plotW - plotR}
	n := len(h.Commits)
	x := func(c int) float64 {
		if n == 1 {
			return (p.LeftX + p.RightX) / 2
		}
		return p.LeftX + (p.RightX-p.LeftX)*float64(c)/float64(n-1)
	}
	y, lo, hi := plotScale(s)
	var before, after []float64
	for _, v := range s.Values {
		if v.Commit >= f.Commit {
			after = append(after, v.Value)
		} else {
			before = append(before, v.Value)
		}
	}
	if len(s.Values) <= maxDots {
		p.Dots = runDots(h, s, f, x, y)
	} else {
		p.Dots, p.Bars, p.Note = bucketDots(h, s, f, x, y)
	}
	p.StepX = px((x(f.Commit) + x(max(f.Commit-1, 0))) / 2)
	p.BeforeY, p.AfterY = px(y(meanOf(before))), px(y(meanOf(after)))
	p.StepLabelX = px(x(f.Commit))
	p.FirstLabel, p.StepLabel, p.LastLabel = shortSHA(h.Commits[0].SHA), shortSHA(h.Commits[f.Commit].SHA), shortSHA(h.Commits[n-1].SHA)
	for i := range 5 {
		v := lo + (hi-lo)*float64(i)/4
		p.Ticks = append(p.Ticks, tick{Y: px(y(v)), Label: valueText(s.Key.Metric, v)})
	}
	return p
}

// plotScale is the y of a value of s in a plot, and the values at the
// plot's bottom and top: all of s's values, and a margin.
func plotScale(s history.Series) (y func(float64) float64, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range s.Values {
		lo, hi = min(lo, v.Value), max(hi, v.Value)
	}
	if !(hi > lo) {
		lo, hi = lo*0.99-1, hi*1.01+1
	}
	span := hi - lo
	lo, hi = lo-0.05*span, hi+0.05*span
	return func(v float64) float64 { return plotT + (plotH-plotT-plotB)*(hi-v)/(hi-lo) }, lo, hi
}

// sideColour is the colour of commit c's values: BASE's before the step
// at commit step, NEW's from it on.
func sideColour(c, step int) string {
	if c >= step {
		return newColour
	}
	return baseColour
}

// runDots are a square for each run's value of s.
func runDots(h history.History, s history.Series, f history.Finding, x func(int) float64, y func(float64) float64) []historyDot {
	dots := make([]historyDot, 0, len(s.Values))
	for _, v := range s.Values {
		cm := h.Commits[v.Commit]
		dots = append(dots, historyDot{X: px(x(v.Commit)), Y: px(y(v.Value)), Colour: sideColour(v.Commit, f.Commit),
			Title: fmt.Sprintf("seq %d: %s, commit %s", cm.Seq, valueText(s.Key.Metric, v.Value), svgText(cm.SHA))})
	}
	return dots
}

// A bucket is a run of commits in a row that one square shows: its runs'
// count, sum, lowest and highest, and its oldest and newest commits that
// have runs.
type bucket struct {
	first, last int
	n           int
	sum, lo, hi float64
}

// bucketsOf groups n commits in buckets of k in a row, k the fewest that
// makes at most maxDots buckets, the step's commit the first of one, so
// that no bucket holds commits of both sides: it returns k, how many
// buckets, and the bucket of commit c.
func bucketsOf(n, step int) (k, count int, of func(c int) int) {
	k = max(1, (n+maxDots-3)/(maxDots-2)) // two buckets may be cut short, either side of the step
	before := (step + k - 1) / k
	count = before + (n-step+k-1)/k
	return k, count, func(c int) int {
		if c >= step {
			return before + (c-step)/k
		}
		return before - 1 - (step-1-c)/k
	}
}

// fillBuckets puts each value of s in its bucket.
func fillBuckets(s history.Series, count int, of func(c int) int) []bucket {
	bs := make([]bucket, count)
	for _, v := range s.Values {
		b := &bs[of(v.Commit)]
		if b.n == 0 {
			*b = bucket{first: v.Commit, last: v.Commit, lo: v.Value, hi: v.Value}
		}
		b.first, b.last = min(b.first, v.Commit), max(b.last, v.Commit)
		b.lo, b.hi = min(b.lo, v.Value), max(b.hi, v.Value)
		b.n++
		b.sum += v.Value
	}
	return bs
}

// bucketDots are a square for each bucket of commits of s (bucketsOf):
// the mean of its runs, with a bar from the lowest to the highest, the
// bars of each side one path; and a note that says so.
func bucketDots(h history.History, s history.Series, f history.Finding, x func(int) float64, y func(float64) float64) ([]historyDot, []historyBars, string) {
	k, count, of := bucketsOf(len(h.Commits), f.Commit)
	var dots []historyDot
	var bars [2]strings.Builder // before the step, from it on
	for _, b := range fillBuckets(s, count, of) {
		if b.n == 0 {
			continue
		}
		cx, colour := px((x(b.first)+x(b.last))/2), sideColour(b.first, f.Commit)
		dots = append(dots, historyDot{X: cx, Y: px(y(b.sum / float64(b.n))), Colour: colour, Title: bucketTitle(h, s.Key.Metric, b)})
		side := 0
		if b.first >= f.Commit {
			side = 1
		}
		if b.hi > b.lo {
			fmt.Fprintf(&bars[side], "M%g %gV%g", cx, px(y(b.lo)), px(y(b.hi)))
		}
	}
	note := fmt.Sprintf("Each square is the mean of the runs of up to %d commits in a row, its bar from the lowest to the highest: %d runs are more than the %d squares a plot draws.",
		k, len(s.Values), maxDots)
	var paths []historyBars
	for side, colour := range []string{baseColour, newColour} {
		if bars[side].Len() > 0 {
			paths = append(paths, historyBars{D: bars[side].String(), Colour: colour})
		}
	}
	return dots, paths, note
}

// bucketTitle is a bucket's tooltip: its commits, and its runs' mean,
// lowest and highest; a bucket of one commit names it, last.
func bucketTitle(h history.History, metric string, b bucket) string {
	first, last := h.Commits[b.first], h.Commits[b.last]
	runs := fmt.Sprintf("mean %s of %d runs, from %s to %s", valueText(metric, b.sum/float64(b.n)), b.n, valueText(metric, b.lo), valueText(metric, b.hi))
	if b.first == b.last {
		return fmt.Sprintf("seq %d: %s, commit %s", first.Seq, runs, svgText(first.SHA))
	}
	return fmt.Sprintf("seq %d to %d, %d commits: %s", first.Seq, last.Seq, b.last-b.first+1, runs)
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// valueText is a value of metric: a time for p50 and p95, else a count.
func valueText(metric string, v float64) string {
	if metric == "p50" || metric == "p95" {
		return fmtNs(v)
	}
	return fmt.Sprintf("%.4g", v)
}

// shortSHA is a commit's name for a label under a plot: its first 12
// bytes, as svgText writes them.
func shortSHA(s string) string { return svgText(cutName(s, 12)) }
