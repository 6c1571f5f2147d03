package main

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
)

// Colours of the two sides in the HTML report's plots; the rendering test
// looks for them in a screenshot.
const (
	baseColour = "#1f5fbf"
	newColour  = "#d8301e"
)

// Plot geometry, in SVG user units (pixels at 100% zoom).
const (
	plotW, plotH   = 720, 220
	plotL, plotR   = 78, 12
	plotT, plotB   = 14, 30
	maxPlottedRuns = 200
)

// box is one run's distribution in a plot: whiskers p5 to p95, a box p25
// to p75 and a line at the median, x the centre of its slot.
type box struct {
	X, W                   float64
	Y5, Y25, Y50, Y75, Y95 float64
	Colour                 string
	Title                  string
}

type tick struct {
	Y     float64
	Label string
}

type plot struct {
	Title                 template.HTML // the zone
	Verdict, Change       string
	Boxes                 []box
	Ticks                 []tick
	BaseMid, NewMid       float64 // y of each side's median over runs
	SplitX                float64 // x of the line between the sides
	LeftX, RightX         float64
	BaseLabelX, NewLabelX float64
	Omitted               int // runs not drawn (over maxPlottedRuns)
}

type htmlRow struct {
	Kind                                                                  string
	Track, Zone                                                           template.HTML
	Runs, P50Base, P50New, P50Change, P95Base, P95New, P95Change, Verdict string
	Bad                                                                   bool
}

// htmlWorkRow is a row of the work table.
type htmlWorkRow struct {
	Kind                                              string
	Track, Zone                                       template.HTML
	Stat, Runs, Base, New, Change, Tolerance, Verdict string
	Bad                                               bool
}

type htmlPage struct {
	Headline, Note, Rules string
	Base, New, Driver     template.HTML
	Rows                  []htmlRow
	WorkSummary           template.HTML // "" when no zone carries work
	WorkRules             string
	WorkRows              []htmlWorkRow
	Plots                 []plot
	BaseColour, NewColour string
	W, H                  int
}

var diffPage = template.Must(template.New("diff").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Framescope diff</title>
<style>
body{font:14px/1.4 sans-serif;margin:16px;color:#111;background:#fff}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td.l,th.l{text-align:left}tr.bad td{background:#fde8e6}
.zone{margin:18px 0}.base{color:{{.BaseColour}}}.new{color:{{.NewColour}}}
</style></head><body>
<h1>Framescope: {{.Headline}}</h1>
<p><b class="base">BASE</b>: {{.Base}}<br><b class="new">NEW</b>: {{.New}}<br>driver: {{.Driver}}</p>
{{if .Note}}<p><i>{{.Note}}</i></p>{{end}}
<p>{{.Rules}}</p>
<table><tr><th class="l">kind</th><th class="l">track</th><th class="l">zone</th><th>runs</th><th>p50 base</th><th>p50 new</th><th>change</th><th>p95 base</th><th>p95 new</th><th>change</th><th class="l">verdict</th></tr>
{{range .Rows}}<tr{{if .Bad}} class="bad"{{end}}><td class="l">{{.Kind}}</td><td class="l">{{.Track}}</td><td class="l">{{.Zone}}</td><td>{{.Runs}}</td><td>{{.P50Base}}</td><td>{{.P50New}}</td><td>{{.P50Change}}</td><td>{{.P95Base}}</td><td>{{.P95New}}</td><td>{{.P95Change}}</td><td class="l">{{.Verdict}}</td></tr>
{{end}}</table>
{{if .WorkSummary}}<h2>Work</h2>
<p>{{.WorkSummary}}</p>
{{if .WorkRows}}<table><tr><th class="l">kind</th><th class="l">track</th><th class="l">zone</th><th class="l">statistic</th><th>runs</th><th>base</th><th>new</th><th>change</th><th>tolerance</th><th class="l">verdict</th></tr>
{{range .WorkRows}}<tr{{if .Bad}} class="bad"{{end}}><td class="l">{{.Kind}}</td><td class="l">{{.Track}}</td><td class="l">{{.Zone}}</td><td class="l">{{.Stat}}</td><td>{{.Runs}}</td><td>{{.Base}}</td><td>{{.New}}</td><td>{{.Change}}</td><td>{{.Tolerance}}</td><td class="l">{{.Verdict}}</td></tr>
{{end}}</table>
{{end}}<p>{{.WorkRules}}</p>
{{end}}{{range .Plots}}<div class="zone"><h3>{{.Title}}: {{.Verdict}} (p50 {{.Change}})</h3>
<svg xmlns="http://www.w3.org/2000/svg" width="{{$.W}}" height="{{$.H}}" viewBox="0 0 {{$.W}} {{$.H}}" role="img">
<rect x="0" y="0" width="{{$.W}}" height="{{$.H}}" fill="#ffffff"/>
{{range .Ticks}}<line x1="78" x2="708" y1="{{.Y}}" y2="{{.Y}}" stroke="#e4e4e4"/><text x="72" y="{{.Y}}" font-size="11" text-anchor="end" dominant-baseline="middle" fill="#333">{{.Label}}</text>
{{end}}<line x1="{{.SplitX}}" x2="{{.SplitX}}" y1="14" y2="190" stroke="#999" stroke-dasharray="3 3"/>
<line x1="{{.LeftX}}" x2="{{.SplitX}}" y1="{{.BaseMid}}" y2="{{.BaseMid}}" stroke="{{$.BaseColour}}" stroke-dasharray="6 3"/>
<line x1="{{.SplitX}}" x2="{{.RightX}}" y1="{{.NewMid}}" y2="{{.NewMid}}" stroke="{{$.NewColour}}" stroke-dasharray="6 3"/>
{{range .Boxes}}<g><title>{{.Title}}</title><line x1="{{.X}}" x2="{{.X}}" y1="{{.Y95}}" y2="{{.Y5}}" stroke="{{.Colour}}" stroke-width="1.5"/><rect x="{{.BoxX}}" y="{{.Y75}}" width="{{.W}}" height="{{.BoxH}}" fill="{{.Colour}}"/><line x1="{{.BoxX}}" x2="{{.BoxR}}" y1="{{.Y50}}" y2="{{.Y50}}" stroke="#000" stroke-width="2"/></g>
{{end}}<text x="{{.BaseLabelX}}" y="208" font-size="12" text-anchor="middle" fill="{{$.BaseColour}}">BASE runs</text>
<text x="{{.NewLabelX}}" y="208" font-size="12" text-anchor="middle" fill="{{$.NewColour}}">NEW runs</text>
</svg>{{if .Omitted}}<br><small>{{.Omitted}} runs not drawn</small>{{end}}</div>
{{end}}<p><small>Each box is one run: whiskers p5 to p95 of its frames, box p25 to p75, black line the run's median; dashed lines the median over each side's runs.</small></p>
</body></html>
`))

// BoxX is the left edge of the box.
func (b box) BoxX() float64 { return b.X - b.W/2 }

// BoxR is the right edge of the box.
func (b box) BoxR() float64 { return b.X + b.W/2 }

// BoxH is the box's height (p75 is above p25).
func (b box) BoxH() float64 { return math.Max(b.Y25-b.Y75, 1) }

// plotOf draws the per-run distributions of one zone.
func plotOf(r diffReport, d zoneDiff) plot {
	type runBox struct {
		b   [5]float64
		new bool
		tag string
	}
	var runs []runBox
	omitted := 0
	for si, s := range []side{r.base, r.cur} {
		for _, ru := range s.Runs {
			z, ok := ru.Zones[d.key]
			if !ok {
				continue
			}
			if len(runs) >= maxPlottedRuns {
				omitted++
				continue
			}
			runs = append(runs, runBox{z.Box, si == 1, fmt.Sprintf("p50 %s, p95 %s, %d frames: %s", fmtNs(z.P50), fmtNs(z.P95), z.N, svgText(ru.Path))})
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, rb := range runs {
		lo, hi = math.Min(lo, rb.b[0]), math.Max(hi, rb.b[4])
	}
	if !(hi > lo) {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.06
	lo, hi = math.Max(lo-pad, 0), hi+pad
	top, bottom := float64(plotT), float64(plotH-plotB)
	y := func(ns float64) float64 { return bottom - (ns-lo)/(hi-lo)*(bottom-top) }
	p := plot{
		Title:   phrasef("%s · %s · %s", d.key.Kind, untrusted(d.key.Track), untrusted(d.key.Name)).html(),
		Verdict: d.zoneVerdict(), Change: fmtChange(d.tests[0].change),
		LeftX: plotL, RightX: plotW - plotR, Omitted: omitted,
		BaseMid: y(d.tests[0].medBase), NewMid: y(d.tests[0].medNew),
	}
	slots := float64(len(runs) + 1) // one empty slot between the sides
	slotW := float64(plotW-plotL-plotR) / slots
	x := float64(plotL) + slotW/2
	var firstNew float64
	for i, rb := range runs {
		if rb.new && (i == 0 || !runs[i-1].new) {
			p.SplitX = x
			x += slotW
			firstNew = x
		}
		c := baseColour
		if rb.new {
			c = newColour
		}
		p.Boxes = append(p.Boxes, box{X: x, W: math.Max(slotW*0.6, 2), Y5: y(rb.b[0]), Y25: y(rb.b[1]), Y50: y(rb.b[2]), Y75: y(rb.b[3]), Y95: y(rb.b[4]), Colour: c, Title: rb.tag})
		x += slotW
	}
	p.BaseLabelX = (float64(plotL) + p.SplitX) / 2
	p.NewLabelX = (firstNew + float64(plotW-plotR)) / 2
	for i := range 5 {
		v := lo + (hi-lo)*float64(i)/4
		p.Ticks = append(p.Ticks, tick{Y: y(v), Label: fmtNs(v)})
	}
	return p
}

func writeDiffHTML(w io.Writer, r diffReport, o diffOptions) error {
	pg := htmlPage{
		Headline: r.headline(), Base: sideText(r.base).html(), New: sideText(r.cur).html(),
		Driver: "not given (traces do not record it)", Note: r.noiseNote(o), Rules: r.rulesLine(o),
		BaseColour: baseColour, NewColour: newColour, W: plotW, H: plotH,
	}
	if o.driver != "" {
		pg.Driver = htmlName(o.driver)
	}
	for _, d := range r.zones {
		pg.Rows = append(pg.Rows, htmlRow{
			Kind: d.key.Kind, Track: htmlName(d.key.Track), Zone: htmlName(d.key.Name), Runs: fmt.Sprintf("%d/%d", d.runsBase, d.runsNew),
			P50Base: fmtNs(d.tests[0].medBase), P50New: fmtNs(d.tests[0].medNew), P50Change: fmtChange(d.tests[0].change),
			P95Base: fmtNs(d.tests[1].medBase), P95New: fmtNs(d.tests[1].medNew), P95Change: fmtChange(d.tests[1].change),
			Verdict: d.zoneVerdict(), Bad: d.outcome == regressed || d.overBudget || d.workOutcome() == regressed,
		})
		if d.note == "" && (d.outcome != unchanged || d.overBudget) {
			pg.Plots = append(pg.Plots, plotOf(r, d))
		}
	}
	if r.hasWork() {
		pg.WorkSummary, pg.WorkRules = r.workSummary().html(), r.workRules(o)
		for _, x := range r.workRows() {
			pg.WorkRows = append(pg.WorkRows, htmlWorkRow{Kind: x.key.Kind, Track: htmlName(x.key.Track), Zone: htmlName(x.key.Name), Stat: x.stat, Runs: x.runs,
				Base: x.base, New: x.cur, Change: x.change, Tolerance: x.tolerance, Verdict: x.verdict, Bad: x.bad})
		}
	}
	return diffPage.Execute(w, pg)
}

// writeDiffHTMLFile writes the HTML report to path.
func writeDiffHTMLFile(path string, r diffReport, o diffOptions) error {
	var b bytes.Buffer
	if err := writeDiffHTML(&b, r, o); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
