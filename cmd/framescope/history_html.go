package main

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"

	"github.com/framescope/framescope/cmd/framescope/history"
)

// historyPlot is one series that changed: each run's value a dot, the
// commits before the newest step in BASE's colour and those from it on in
// NEW's, a dashed line at the step and at each side's mean.
type historyPlot struct {
	Title           template.HTML // the series
	Change          string
	Dots            []historyDot
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

type historyPage struct {
	Headline              template.HTML
	Rules                 string
	Rows                  []template.HTML // the findings
	Plots                 []historyPlot
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
{{range .Plots}}<div class="zone"><h3>{{.Title}}: {{.Change}}</h3>
<svg xmlns="http://www.w3.org/2000/svg" width="{{$.W}}" height="{{$.H}}" viewBox="0 0 {{$.W}} {{$.H}}" role="img">
<rect x="0" y="0" width="{{$.W}}" height="{{$.H}}" fill="#ffffff"/>
{{range .Ticks}}<line x1="78" x2="708" y1="{{.Y}}" y2="{{.Y}}" stroke="#e4e4e4"/><text x="72" y="{{.Y}}" font-size="11" text-anchor="end" dominant-baseline="middle" fill="#333">{{.Label}}</text>
{{end}}<line x1="{{.StepX}}" x2="{{.StepX}}" y1="14" y2="190" stroke="#999" stroke-dasharray="3 3"/>
<line x1="{{.LeftX}}" x2="{{.StepX}}" y1="{{.BeforeY}}" y2="{{.BeforeY}}" stroke="{{$.BaseColour}}" stroke-dasharray="6 3"/>
<line x1="{{.StepX}}" x2="{{.RightX}}" y1="{{.AfterY}}" y2="{{.AfterY}}" stroke="{{$.NewColour}}" stroke-dasharray="6 3"/>
{{range .Dots}}<rect x="{{.BoxX}}" y="{{.BoxY}}" width="7" height="7" fill="{{.Colour}}"><title>{{.Title}}</title></rect>
{{end}}<text x="{{.LeftX}}" y="208" font-size="11" text-anchor="start" fill="#333">{{.FirstLabel}}</text>
<text x="{{.StepLabelX}}" y="208" font-size="11" text-anchor="middle" fill="{{$.NewColour}}">{{.StepLabel}}</text>
<text x="{{.RightX}}" y="208" font-size="11" text-anchor="end" fill="#333">{{.LastLabel}}</text>
</svg></div>
{{end}}<p><small>Each square is one run of a commit, oldest on the left; the dashed vertical line is the newest step (the first commit after it is named under it); the dashed lines are the mean before it and from it on.</small></p>
</body></html>
`))

// BoxX and BoxY place a dot's square.
func (d historyDot) BoxX() float64 { return d.X - 3.5 }
func (d historyDot) BoxY() float64 { return d.Y - 3.5 }

// writeHistoryHTML writes the check's findings as a page to path.
func writeHistoryHTML(path string, c historyCheckOptions, h history.History, r history.CheckResult) error {
	b, err := historyHTML(c, h, r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// historyHTML is the check's findings as a page, a plot for each series
// that changed.
func historyHTML(c historyCheckOptions, h history.History, r history.CheckResult) ([]byte, error) {
	pg := historyPage{Headline: checkHeadline(c, h, r).html(), BaseColour: baseColour, NewColour: newColour, W: plotW, H: plotH,
		Rules: fmt.Sprintf("Newest step in each series at a false-alarm level of %g over every series and commit; a regression is a step up of more than %s.",
			c.o.Alpha, percentValue{f: &c.o.MinEffect})}
	series := map[history.SeriesKey]history.Series{}
	for _, s := range h.Series {
		series[s.Key] = s
	}
	for _, f := range r.Findings {
		pg.Rows = append(pg.Rows, findingLine(h, f).html())
		pg.Plots = append(pg.Plots, historyPlotOf(h, series[f.Series], f))
	}
	var b bytes.Buffer
	err := historyPageTmpl.Execute(&b, pg)
	return b.Bytes(), err
}

// historyPlotOf draws series s with its step f.
func historyPlotOf(h history.History, s history.Series, f history.Finding) historyPlot {
	p := historyPlot{Title: htmlName(s.Key.String()), Change: stepText(f.Step), LeftX: plotL, RightX: plotW - plotR}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range s.Values {
		lo, hi = min(lo, v.Value), max(hi, v.Value)
	}
	if !(hi > lo) {
		lo, hi = lo*0.99-1, hi*1.01+1
	}
	span := hi - lo
	lo, hi = lo-0.05*span, hi+0.05*span
	n := len(h.Commits)
	x := func(c int) float64 {
		if n == 1 {
			return (p.LeftX + p.RightX) / 2
		}
		return p.LeftX + (p.RightX-p.LeftX)*float64(c)/float64(n-1)
	}
	y := func(v float64) float64 { return plotT + (plotH-plotT-plotB)*(hi-v)/(hi-lo) }
	var before, after []float64
	for _, v := range s.Values {
		colour := baseColour
		if v.Commit >= f.Commit {
			colour = newColour
			after = append(after, v.Value)
		} else {
			before = append(before, v.Value)
		}
		cm := h.Commits[v.Commit]
		p.Dots = append(p.Dots, historyDot{X: x(v.Commit), Y: y(v.Value), Colour: colour,
			Title: fmt.Sprintf("seq %d: %s, commit %s", cm.Seq, valueText(s.Key.Metric, v.Value), svgText(cm.SHA))})
	}
	p.StepX = (x(f.Commit) + x(max(f.Commit-1, 0))) / 2
	p.BeforeY, p.AfterY = y(meanOf(before)), y(meanOf(after))
	p.StepLabelX = x(f.Commit)
	p.FirstLabel, p.StepLabel, p.LastLabel = shortSHA(h.Commits[0].SHA), shortSHA(h.Commits[f.Commit].SHA), shortSHA(h.Commits[n-1].SHA)
	for i := range 5 {
		v := lo + (hi-lo)*float64(i)/4
		p.Ticks = append(p.Ticks, tick{Y: y(v), Label: valueText(s.Key.Metric, v)})
	}
	return p
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
