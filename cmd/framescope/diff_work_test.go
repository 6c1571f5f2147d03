package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// workStats are the statistics the synthetic work traces count.
const workStats = timeline.FragmentShaderInvocations | timeline.VertexShaderInvocations |
	timeline.InputAssemblyVertices | timeline.ClippingPrimitives

var (
	fragStat = statIndex(timeline.FragmentShaderInvocations)
	clipStat = statIndex(timeline.ClippingPrimitives)
)

func statIndex(s timeline.PipelineStats) int {
	i := -1
	s.Each(func(b int) { i = b })
	return i
}

// workOf is the work of one occurrence of a synthetic zone.
type workOf func(zone string, frame uint64) *timeline.Work

// baseWork counts the same work in every frame: zone zK draws K+1 times
// as many fragments and vertices as z0.
func baseWork(zone string, _ uint64) *timeline.Work {
	k := uint64(zone[1]-'0') + 1
	w := &timeline.Work{Stats: workStats}
	w.Count[fragStat] = 4096 * k
	w.Count[statIndex(timeline.VertexShaderInvocations)] = 3 * k
	w.Count[statIndex(timeline.InputAssemblyVertices)] = 3 * k
	w.Count[clipStat] = k
	return w
}

// scaled is baseWork with statistic stat of zone scaled by f.
func scaled(zone string, stat int, f float64) workOf {
	return func(z string, frame uint64) *timeline.Work {
		w := baseWork(z, frame)
		if z == zone {
			w.Count[stat] = uint64(math.Round(float64(w.Count[stat]) * f))
		}
		return w
	}
}

// workRun is synthRun's run (times with a 1% run-to-run spread) with its
// GPU zones carrying the work of.
func workRun(seed uint64, of workOf) *timeline.Trace {
	tr := synthRun(seed, 0.01, nil)
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if s.Track == 2 {
			s.Work = of(tr.Name(s.Name), s.Frame)
		}
	}
	return tr
}

func workRuns(seed uint64, n int, of func(run int) workOf) side {
	var trs []*timeline.Trace
	for i := range n {
		trs = append(trs, workRun(seed+uint64(i)*7919, of(i)))
	}
	return sideOfTraces(trs...)
}

func same(of workOf) func(int) workOf { return func(int) workOf { return of } }

var diffOpts = diffOptions{minEffect: defaultMinEffect, floor: defaultFloor, alpha: defaultAlpha, oneRun: defaultOneRunLimit}

// workOfZone returns zone name's comparison of statistic stat.
func workOfZone(t *testing.T, r diffReport, name string, stat int) workDiff {
	t.Helper()
	for _, d := range r.zones {
		if d.key.Kind == "gpu" && d.key.Name == name {
			for _, w := range d.work {
				if w.stat == stat {
					return w
				}
			}
			t.Fatalf("zone %s: no comparison of %s in %+v", name, timeline.StatKey(stat), d.work)
		}
	}
	t.Fatalf("no zone %s", name)
	return workDiff{}
}

// allOutputs renders r in every format diff writes.
func allOutputs(t *testing.T, r diffReport) map[string]string {
	t.Helper()
	var txt, md, js, html bytes.Buffer
	writeDiffText(&txt, r, diffOpts)
	writeDiffMarkdown(&md, r, diffOpts)
	if err := writeDiffJSON(&js, r, diffOpts); err != nil {
		t.Fatal(err)
	}
	if err := writeDiffHTML(&html, r, diffOpts); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"text": squash(txt.String()), "markdown": md.String(), "json": js.String(), "html": html.String()}
}

// squash turns each run of spaces into one, for matching the rows of a
// tabwriter's table.
func squash(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// TestDiffWorkIdenticalSingleRuns: one run a side, the same work in
// different runs (times differ): nothing regressed, every statistic of
// every GPU zone compared exactly and unchanged; the exit code is the
// time comparison's (3: one run a side cannot tell times apart).
func TestDiffWorkIdenticalSingleRuns(t *testing.T) {
	r := compare(workRuns(1, 1, same(baseWork)), workRuns(2, 1, same(baseWork)), diffOpts)
	if r.outcome == regressed || r.exitCode() != exitInconclusive {
		t.Fatalf("identical work, one run a side: %v (exit %d), want inconclusive: %s", r.outcome, r.exitCode(), r.headline())
	}
	c := r.workCounts()
	if c.zones != 4 || c.unchanged != 16 || c.exact != 16 || c.regressed+c.improved+c.oneSided != 0 {
		t.Fatalf("work counts %+v, want 4 zones of 4 statistics, all exact and unchanged", c)
	}
	for _, d := range r.zones {
		if d.key.Kind == "cpu" && d.work != nil {
			t.Errorf("CPU zone %s compared on work: %+v", d.key, d.work)
		}
	}
	for f, out := range allOutputs(t, r) {
		if strings.Contains(out, "REGRESSED") || strings.Contains(out, `"regressed"`) {
			t.Errorf("%s says regressed:\n%s", f, out)
		}
	}
	// The same with five runs a side: the runs' times are unchanged too.
	r = compare(workRuns(1, 5, same(baseWork)), workRuns(100, 5, same(baseWork)), diffOpts)
	if r.exitCode() != exitUnchanged || r.workCounts().unchanged != 16 {
		t.Fatalf("identical work, 5 runs a side: exit %d: %s", r.exitCode(), r.headline())
	}
}

// TestDiffWorkRegression: one run a side, +50% fragment shader
// invocations in z2 and nothing else: exit 1, and every format names
// z2, the statistic, both values and the change; no other zone or
// statistic is flagged. -50% is an improvement: exit as the times say.
func TestDiffWorkRegression(t *testing.T) {
	r := compare(workRuns(1, 1, same(baseWork)), workRuns(2, 1, same(scaled("z2", fragStat, 1.5))), diffOpts)
	if r.exitCode() != exitRegressed {
		t.Fatalf("+50%% fragment work: exit %d: %s", r.exitCode(), r.headline())
	}
	w := workOfZone(t, r, "z2", fragStat)
	if w.outcome != regressed || w.medBase != 12288 || w.medNew != 18432 || math.Abs(w.change-0.5) > 1e-12 || !w.exact() {
		t.Fatalf("z2 fragment_shader_invocations: %+v", w)
	}
	c := r.workCounts()
	if c.regressed != 1 || c.unchanged != 15 {
		t.Errorf("work counts %+v, want 1 regressed and 15 unchanged", c)
	}
	if r.zones[0].key.Name != "z2" {
		t.Errorf("the regressed zone is not listed first: %s", r.zones[0].key)
	}
	want := map[string][]string{
		"text":     {"gpu graphics queue 0.0 z2 fragment_shader_invocations 1/1 12288 18432 +50.0% exact REGRESSED", "WORK REGRESSED", "work: 1 regressed"},
		"markdown": {"| gpu | `graphics queue 0.0` | `z2` | `fragment_shader_invocations` | 1/1 | 12288 | 18432 | +50.0% | exact | **REGRESSED** |", "WORK REGRESSED"},
		"html":     {`<td class="l"><bdi>z2</bdi></td><td class="l">fragment_shader_invocations</td><td>1/1</td><td>12288</td><td>18432</td><td>&#43;50.0%</td><td>exact</td><td class="l">REGRESSED</td>`},
	}
	out := allOutputs(t, r)
	for f, ss := range want {
		for _, s := range ss {
			if !strings.Contains(out[f], s) {
				t.Errorf("%s lacks %q:\n%s", f, s, out[f])
			}
		}
		// The headline, z2's row and its statistic's row; in HTML, z2's
		// plot too (its time is inconclusive with one run a side).
		want := map[string]int{"text": 3, "markdown": 3, "html": 4}[f]
		if n := strings.Count(out[f], "REGRESSED"); n != want {
			t.Errorf("%s says REGRESSED %d times, want %d (headline, zone, statistic):\n%s", f, n, want, out[f])
		}
	}
	var js diffReportJSON
	if err := json.Unmarshal([]byte(out["json"]), &js); err != nil {
		t.Fatal(err)
	}
	if js.Verdict != "regressed" || js.Work == nil || js.Work.Regressions != 1 {
		t.Fatalf("json: verdict %s, work %+v", js.Verdict, js.Work)
	}
	flagged := 0
	for _, z := range js.Zones {
		for _, w := range z.Work {
			if w.Verdict == "regressed" {
				flagged++
				if z.Zone != "z2" || w.Statistic != "fragment_shader_invocations" || *w.MedianBase != "12288" || *w.MedianNew != "18432" ||
					math.Abs(*w.Change-0.5) > 1e-12 || !w.Exact || len(w.Base) != 1 || w.Base[0] != "12288" {
					t.Errorf("json: %s %+v", z.Zone, w)
				}
			}
		}
	}
	if flagged != 1 {
		t.Errorf("json: %d statistics regressed, want 1", flagged)
	}

	r = compare(workRuns(1, 1, same(baseWork)), workRuns(2, 1, same(scaled("z2", fragStat, 0.5))), diffOpts)
	if w := workOfZone(t, r, "z2", fragStat); w.outcome != improved || r.outcome == regressed {
		t.Fatalf("-50%% fragment work: %v, diff %v", w.outcome, r.outcome)
	}
	if out := allOutputs(t, r); !strings.Contains(out["text"], "z2 fragment_shader_invocations 1/1 12288 6144 -50.0% exact improved") {
		t.Errorf("text lacks the improvement:\n%s", out["text"])
	}
	r = compare(workRuns(1, 5, same(baseWork)), workRuns(100, 5, same(scaled("z2", fragStat, 0.5))), diffOpts)
	if r.outcome != improved || r.exitCode() != exitUnchanged {
		t.Errorf("-50%% fragment work, times unchanged, 5 runs a side: %v", r.outcome)
	}
}

// TestDiffWorkMinEffect: an exact statistic that changes by less than
// --min-effect is unchanged; with --min-effect 0 any change counts.
func TestDiffWorkMinEffect(t *testing.T) {
	base, cur := workRuns(1, 1, same(baseWork)), workRuns(2, 1, same(scaled("z3", fragStat, 1.02)))
	if w := workOfZone(t, compare(base, cur, diffOpts), "z3", fragStat); w.outcome != unchanged || w.change <= 0.019 {
		t.Errorf("+2%% with --min-effect 3%%: %+v", w)
	}
	o := diffOpts
	o.minEffect = 0
	if r := compare(base, cur, o); workOfZone(t, r, "z3", fragStat).outcome != regressed || r.exitCode() != exitRegressed {
		t.Errorf("+2%% with --min-effect 0: %v", r.headline())
	}
	// Work where there was none is a regression without a finite change;
	// none where there was some, an improvement of -100%.
	zero, five := scaled("z1", clipStat, 0), scaled("z1", clipStat, 2.5)
	r := compare(workRuns(1, 1, same(zero)), workRuns(2, 1, same(five)), diffOpts)
	if w := workOfZone(t, r, "z1", clipStat); w.outcome != regressed || !math.IsInf(w.change, 1) || r.exitCode() != exitRegressed {
		t.Errorf("0 to 5: %+v", w)
	}
	if out := allOutputs(t, r); !strings.Contains(out["text"], "z1 clipping_primitives 1/1 0 5 +inf exact REGRESSED") || !strings.Contains(out["json"], `"change": null`) {
		t.Errorf("0 to 5 in text and json:\n%s\n%s", out["text"], out["json"])
	}
	r = compare(workRuns(1, 1, same(five)), workRuns(2, 1, same(zero)), diffOpts)
	if w := workOfZone(t, r, "z1", clipStat); w.outcome != improved || w.change != -1 {
		t.Errorf("5 to 0: %+v", w)
	}
}

// TestDiffWorkTolerance: where a side's runs disagree, or the statistic
// has a measured tolerance, the runs decide (diff_work_runs.go): a change
// within the runs' spread is inconclusive, never unchanged; one beyond it
// in five runs a side, every NEW run above every BASE run, regresses; one
// run a side, or three (too few to reach the gate's level, half of it
// with the time tests), cannot decide.
func TestDiffWorkTolerance(t *testing.T) {
	// Clipped primitives of z0 vary from run to run by up to ±2% (of
	// 1000), and both sides' medians differ by 4%, beyond --min-effect.
	clip := func(v uint64) workOf {
		return func(z string, f uint64) *timeline.Work {
			w := baseWork(z, f)
			if z == "z0" {
				w.Count[clipStat] = v
			}
			return w
		}
	}
	vary := func(vals ...uint64) func(int) workOf {
		return func(i int) workOf { return clip(vals[i]) }
	}
	base := workRuns(1, 3, vary(980, 1000, 1020))
	r := compare(base, workRuns(100, 3, vary(1020, 1040, 1060)), diffOpts)
	w := workOfZone(t, r, "z0", clipStat)
	if w.outcome != inconclusive || w.exact() || math.Abs(w.spread-0.02) > 1e-9 || r.outcome != inconclusive {
		t.Fatalf("+4%% within a ±2%% spread: %+v (diff %v)", w, r.outcome)
	}
	out := allOutputs(t, r)
	if !strings.Contains(out["json"], `"spread": 0.02`) || !strings.Contains(out["json"], `"verdict": "inconclusive"`) {
		t.Errorf("json lacks the spread or the verdict:\n%s", out["json"])
	}
	if !strings.Contains(out["text"], "z0 clipping_primitives 3/3 1000 1040 +4.0% runs inconclusive") {
		t.Errorf("text lacks the inconclusive row:\n%s", out["text"])
	}
	// The control: the same +4% with no spread is a regression.
	r = compare(workRuns(1, 3, vary(1000, 1000, 1000)), workRuns(100, 3, vary(1040, 1040, 1040)), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != regressed || !w.exact() {
		t.Fatalf("+4%% of an exact statistic: %+v", w)
	}
	// Beyond the spread: +10% against ±2%, five runs a side.
	base5 := workRuns(1, 5, vary(980, 990, 1000, 1010, 1020))
	r = compare(base5, workRuns(100, 5, vary(1080, 1090, 1100, 1110, 1120)), diffOpts)
	w = workOfZone(t, r, "z0", clipStat)
	if w.outcome != regressed || r.exitCode() != exitRegressed || !(w.pRegressed <= diffOpts.alpha/2) {
		t.Fatalf("+10%% against a ±2%% spread, 5 runs a side: %+v", w)
	}
	if txt := allOutputs(t, r)["text"]; !strings.Contains(txt, "z0 clipping_primitives 5/5 1000 1100 +10.0% runs REGRESSED") {
		t.Errorf("text lacks the regression:\n%s", txt)
	}
	// The same with three runs a side: too few to decide.
	r = compare(base, workRuns(100, 3, vary(1080, 1100, 1120)), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != inconclusive {
		t.Fatalf("+10%% against a ±2%% spread, 3 runs a side: %+v", w)
	}
	// One side's spread is enough, either side's.
	r = compare(base, workRuns(100, 1, vary(1040)), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != inconclusive || w.exact() {
		t.Fatalf("+4%% against 3 runs of ±2%% and one run: %+v", w)
	}
	r = compare(workRuns(1, 3, vary(1000, 1000, 1000)), workRuns(100, 3, vary(1020, 1040, 1060)), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != inconclusive || w.exact() {
		t.Fatalf("+4%% against NEW's runs of ±2%%: %+v", w)
	}

	// The table's tolerance: the runs decide, and a change within it is
	// never a regression.
	old := diffWorkTolerance[clipStat]
	defer func() { diffWorkTolerance[clipStat] = old }()
	diffWorkTolerance[clipStat] = 0.05
	r = compare(workRuns(1, 1, vary(1000)), workRuns(100, 1, vary(1040)), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != inconclusive || w.tolerance != 0.05 {
		t.Fatalf("+4%% against a table tolerance of 5%%, a run a side: %+v", w)
	}
	same5 := func(v uint64) side { return workRuns(100, 5, vary(v, v, v, v, v)) }
	r = compare(workRuns(1, 5, vary(1000, 1000, 1000, 1000, 1000)), same5(1040), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != inconclusive {
		t.Fatalf("+4%% against a table tolerance of 5%%, 5 runs a side: %+v", w)
	}
	r = compare(workRuns(1, 5, vary(1000, 1000, 1000, 1000, 1000)), same5(1060), diffOpts)
	if w := workOfZone(t, r, "z0", clipStat); w.outcome != regressed {
		t.Fatalf("+6%% against a table tolerance of 5%%, 5 runs a side: %+v", w)
	}
	if w := workOfZone(t, r, "z0", fragStat); w.outcome != unchanged || !w.exact() {
		t.Fatalf("another statistic's tolerance: %+v", w)
	}
}

// TestDiffWorkRunsDecide: issue 38's cases, each "unchanged, rc 0" before.
// Work that went up in every run is a regression, whatever one wild BASE
// run says; NEW without counts against a counted BASE is inconclusive;
// identical noisy sides are never a regression; every verdict is in the
// text, the unchanged named in its summary.
func TestDiffWorkRunsDecide(t *testing.T) {
	frag := func(v uint64) workOf {
		return func(z string, f uint64) *timeline.Work {
			w := baseWork(z, f)
			if z == "z0" {
				w.Count[fragStat] = v
			}
			return w
		}
	}
	runs := func(seed uint64, vals ...uint64) side {
		return workRuns(seed, len(vals), func(i int) workOf { return frag(vals[i]) })
	}
	for _, c := range []struct {
		name      string
		base, cur []uint64
		want      outcome
	}{
		{"one BASE run 10% up, NEW 25% up in all", []uint64{1000, 1000, 1000, 1000, 1100}, []uint64{1250, 1250, 1250, 1250, 1250}, regressed},
		{"one BASE run at 10^6, NEW at 10^6 in all", []uint64{1000, 1000, 1000, 1000, 1000000}, []uint64{1000000, 1000000, 1000000, 1000000, 1000000}, regressed},
		{"identical noisy sides", []uint64{1000, 1010, 990, 1020, 980}, []uint64{1000, 1010, 990, 1020, 980}, unchanged},
		{"two runs a side, 25% up", []uint64{1000, 1100}, []uint64{1250, 1260}, inconclusive},
	} {
		r := compare(runs(1, c.base...), runs(100, c.cur...), diffOpts)
		w := workOfZone(t, r, "z0", fragStat)
		if w.outcome != c.want {
			t.Errorf("%s: %v, want %v (%+v)", c.name, w.outcome, c.want, w)
		}
		if c.want == regressed && r.exitCode() != exitRegressed {
			t.Errorf("%s: exit %d", c.name, r.exitCode())
		}
	}
	// NEW with every zone's counts spent, BASE counted.
	spent := func(z string, f uint64) *timeline.Work {
		return &timeline.Work{Stats: workStats, Missing: timeline.WorkSpent}
	}
	r := compare(workRuns(1, 5, same(baseWork)), workRuns(100, 5, same(spent)), diffOpts)
	if r.outcome == unchanged || r.exitCode() == exitUnchanged {
		t.Errorf("NEW without counts against a counted BASE: %v, exit %d", r.outcome, r.exitCode())
	}
	// The summary names the unchanged, which have no row.
	r = compare(workRuns(1, 1, same(baseWork)), workRuns(100, 1, same(scaled("z1", fragStat, 1.5))), diffOpts)
	txt := allOutputs(t, r)["text"]
	if !strings.Contains(txt, "the unchanged are not listed below (--json lists them): z1 input_assembly_vertices, z1 vertex_shader_invocations, z1 clipping_primitives and 12 more") {
		t.Errorf("text does not name the unchanged:\n%s", txt)
	}
}

// TestDiffWorkMissing: occurrences without counts are left out of a
// run's value; a zone counted on one side only is said to be, and is not
// a regression; zones that count nothing are not compared on work.
func TestDiffWorkMissing(t *testing.T) {
	// BASE: z0 loses its counts in odd frames (spent), z1 is counted, z2
	// counts nothing (nil Work), z3 is counted.
	// NEW: z0 counted in every frame, z1 lost in every frame (render
	// pass), z2 counted, z3 counted.
	baseOf := func(z string, f uint64) *timeline.Work {
		switch {
		case z == "z0" && f%2 == 1:
			return &timeline.Work{Stats: workStats, Missing: timeline.WorkSpent}
		case z == "z2":
			return nil
		}
		return baseWork(z, f)
	}
	newOf := func(z string, f uint64) *timeline.Work {
		if z == "z1" {
			return &timeline.Work{Stats: workStats, Missing: timeline.WorkRenderPass}
		}
		return baseWork(z, f)
	}
	r := compare(workRuns(1, 2, same(baseOf)), workRuns(100, 2, same(newOf)), diffOpts)
	if r.outcome == regressed {
		t.Fatalf("missing counts made a regression: %s", r.headline())
	}
	if w := workOfZone(t, r, "z0", fragStat); w.outcome != unchanged || !w.exact() || w.medBase != 4096 {
		t.Errorf("z0, counted in half BASE's frames: %+v", w)
	}
	if w := workOfZone(t, r, "z1", fragStat); w.only != "BASE" || w.missing != "render_pass" {
		t.Errorf("z1, no counts on NEW: %+v", w)
	}
	if w := workOfZone(t, r, "z2", fragStat); w.only != "NEW" || w.missing != "not counted" {
		t.Errorf("z2, no work on BASE: %+v", w)
	}
	c := r.workCounts()
	if c.oneSided != 8 || c.unchanged != 8 || c.regressed != 0 {
		t.Errorf("work counts %+v, want 8 one-sided (z1, z2) and 8 unchanged (z0, z3)", c)
	}
	out := allOutputs(t, r)
	for _, s := range []string{
		"z1 input_assembly_vertices+vertex_shader_invocations+clipping_primitives+fragment_shader_invocations 2/0 - - - - counted on BASE only (NEW: render_pass)",
		"z2 input_assembly_vertices+vertex_shader_invocations+clipping_primitives+fragment_shader_invocations 0/2 - - - - counted on NEW only (BASE: not counted)",
		"work counted on BASE only", "8 counted on one side only",
	} {
		if !strings.Contains(out["text"], s) {
			t.Errorf("text lacks %q:\n%s", s, out["text"])
		}
	}
	if !strings.Contains(out["json"], `"verdict": "base_only"`) || !strings.Contains(out["json"], `"missing": "render_pass"`) {
		t.Errorf("json lacks the one-sided statistics:\n%s", out["json"])
	}

	// A zone with no counts at all in any run (every occurrence missing)
	// on both sides is not compared.
	lost := func(z string, f uint64) *timeline.Work {
		return &timeline.Work{Stats: workStats, Missing: timeline.WorkUnavailable}
	}
	r = compare(workRuns(1, 1, same(lost)), workRuns(2, 1, same(lost)), diffOpts)
	if r.hasWork() || strings.Contains(allOutputs(t, r)["text"], "Work") {
		t.Errorf("zones without counts were compared on work: %+v", r.workCounts())
	}
}

// TestDiffWithoutWorkSaysNothingOfIt: traces without work give outputs
// with no trace of the work gate (the golden outputs of issue 13 stay).
func TestDiffWithoutWorkSaysNothingOfIt(t *testing.T) {
	r := compare(sideOfTraces(synthRun(1, 0.01, nil)), sideOfTraces(synthRun(2, 0.01, map[string]float64{"z2": 10})), diffOpts)
	for f, out := range allOutputs(t, r) {
		if strings.Contains(strings.ToLower(out), "work") {
			t.Errorf("%s speaks of work:\n%s", f, out)
		}
	}
}

// TestRunWork: a run's value is the mean count per occurrence that
// counted it, summed without overflow and exact when every occurrence
// agrees.
func TestRunWork(t *testing.T) {
	var s runWorkSum
	big := uint64(1) << 63
	for range 3 {
		w := &timeline.Work{Stats: workStats}
		w.Count[fragStat] = big + 1 // 3 of them overflow 64 bits
		w.Count[clipStat] = 7
		s.add(w)
	}
	odd := &timeline.Work{Stats: timeline.ClippingPrimitives}
	odd.Count[clipStat] = 8
	s.add(odd)
	s.add(&timeline.Work{Stats: workStats, Missing: timeline.WorkElsewhere})
	s.add(&timeline.Work{Stats: workStats, Missing: timeline.NumWorkMissing + 3})
	w := s.result()
	if v, ok := w.value(fragStat); !ok || v != float64(big+1) || w.N[fragStat] != 3 {
		t.Errorf("fragment: %v %v (n %d), want %v", v, ok, w.N[fragStat], float64(big+1))
	}
	if v, ok := w.value(clipStat); !ok || v != 7.25 || w.N[clipStat] != 4 {
		t.Errorf("clipping: %v %v, want 7.25 over 4", v, ok)
	}
	if _, ok := w.value(statIndex(timeline.ComputeShaderInvocations)); ok {
		t.Errorf("a statistic never counted has a value")
	}
	if w.Missing[timeline.WorkElsewhere] != 1 || w.Missing[timeline.NumWorkMissing] != 1 {
		t.Errorf("missing %v", w.Missing)
	}
	// Counts that differ, whose sum overflows 64 bits: their mean.
	s = runWorkSum{}
	for k := range uint64(3) {
		w := &timeline.Work{Stats: timeline.FragmentShaderInvocations}
		w.Count[fragStat] = big + 2*k
		s.add(w)
	}
	if v, _ := s.result().value(fragStat); math.Abs(v/float64(big)-1) > 1e-12 {
		t.Errorf("mean of 2^63, 2^63+2, 2^63+4: %v, want %v", v, float64(big+2))
	}
	var none *runWorkSum
	if none.result() != nil {
		t.Errorf("no work gave a value")
	}
}

// TestDiffCPUWorkRefused: a CPU span with pipeline statistics breaks the
// trace's contract (only GPU zones count work): diff refuses the trace,
// naming it and the fault.
func TestDiffCPUWorkRefused(t *testing.T) {
	tr := workRun(1, baseWork)
	tr.Spans[0].Work = baseWork("z0", 1) // the first frame's CPU span
	if r := summarizeRun("x", tr); r.CPUWork != 1 {
		t.Errorf("CPU spans with work: %d, want 1", r.CPUWork)
	}
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.pftrace", tr, formatPerfetto, false)
	good := writeFile(t, dir, "good.pftrace", workRun(2, baseWork), formatPerfetto, false)
	back, err := loadTrace(bad)
	if err != nil {
		t.Fatal(err)
	}
	if back.Spans[0].Work == nil {
		t.Skip("the Perfetto writer or reader does not carry Work on CPU spans")
	}
	code, _, errs := runCLI("diff", good, bad)
	if want := "NEW: " + bad + ": malformed: CPU spans with pipeline statistics (1)"; code != exitBadInput || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, want)
	}
	// stats read such a trace silently (issue 38); it refuses it as diff
	// and benchfmt do.
	for _, cmd := range []string{"stats", "benchfmt"} {
		code, _, errs = runCLI(cmd, bad)
		if want := bad + ": malformed: CPU spans with pipeline statistics (1)"; code != exitBadInput || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", cmd, code, errs, want)
		}
	}
}

// TestDiffWorkThroughFiles runs the gate on trace files, Perfetto and
// gzipped Chrome JSON, one run a side: the same work exits 3 (times
// cannot tell with one run), +50% fragment shader invocations in z2
// exits 1 and every format names z2 and the statistic.
func TestDiffWorkThroughFiles(t *testing.T) {
	for _, f := range []struct {
		name string
		fmt  traceFormat
		gz   bool
	}{{"run.pftrace", formatPerfetto, false}, {"run.json.gz", formatChrome, true}} {
		t.Run(f.fmt.String(), func(t *testing.T) {
			dir := t.TempDir()
			write := func(sub string, seed uint64, of workOf) string {
				d := filepath.Join(dir, sub)
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				return writeFile(t, d, f.name, workRun(seed, of), f.fmt, f.gz)
			}
			base, same := write("base", 1, baseWork), write("same", 2, baseWork)
			more := write("more", 3, scaled("z2", fragStat, 1.5))
			back, err := loadTrace(more)
			if err != nil {
				t.Fatal(err)
			}
			if w := back.Spans[len(back.Spans)-1].Work; w == nil {
				t.Skipf("the %s writer or reader does not carry Work yet", f.fmt)
			}
			if code, out, errs := runCLI("diff", base, same); code != exitInconclusive || strings.Contains(out, "REGRESSED") {
				t.Errorf("the same work: exit %d, want 3\n%s%s", code, out, errs)
			}
			report := filepath.Join(dir, "report.html")
			for _, args := range [][]string{{}, {"--markdown"}, {"--json"}, {"--html", report}} {
				code, out, errs := runCLI(append(append([]string{"diff"}, args...), base, more)...)
				if code != exitRegressed {
					t.Fatalf("diff %v: exit %d, want 1\n%s%s", args, code, out, errs)
				}
				if len(args) > 0 && args[0] == "--html" {
					b, err := os.ReadFile(report)
					if err != nil {
						t.Fatal(err)
					}
					out = string(b)
				}
				for _, s := range []string{"z2", "fragment_shader_invocations", "12288", "18432"} {
					if !strings.Contains(out, s) {
						t.Errorf("diff %v lacks %q:\n%s", args, s, out)
					}
				}
			}
		})
	}
}

// TestDiffWorkProperties draws pairs of run sets from seeds and holds the
// work verdict to two rules: with at least 3 runs a side and every NEW
// run's count above every BASE run's by more than --min-effect, never
// unchanged (nor improved); on identical sides, never regressed. A
// failing seed prints itself; -work.seed replays one, -work.seeds runs
// more.
func TestDiffWorkProperties(t *testing.T) {
	first, n := uint64(1), *flagWorkSeeds
	if *flagWorkSeed != 0 {
		first, n = *flagWorkSeed, 1
	}
	for seed := first; seed < first+uint64(n); seed++ {
		checkWorkProperties(t, seed)
	}
}

var (
	flagWorkSeed  = flag.Uint64("work.seed", 0, "TestDiffWorkProperties: run this seed alone")
	flagWorkSeeds = flag.Int("work.seeds", 150, "TestDiffWorkProperties: how many seeds, from 1")
)

func checkWorkProperties(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 38))
	nb, nn := 3+rng.IntN(4), 3+rng.IntN(4)
	centre := float64(1 + rng.IntN(1_000_000))
	spread := []float64{0, 0.001, 0.02, 0.2}[rng.IntN(4)]
	draw := func(c float64, n int) []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = uint64(math.Max(1, math.Round(c*(1+spread*(2*rng.Float64()-1)))))
		}
		if rng.IntN(4) == 0 {
			v[rng.IntN(n)] *= uint64(2 + rng.IntN(1000)) // a wild run
		}
		return v
	}
	frag := func(vals []uint64) side {
		return workRuns(seed*1000, len(vals), func(i int) workOf {
			return func(z string, f uint64) *timeline.Work {
				w := baseWork(z, f)
				if z == "z0" {
					w.Count[fragStat] = vals[i]
				}
				return w
			}
		})
	}
	base := draw(centre, nb)
	// Every NEW run above the largest BASE run by more than the effect.
	top := float64(slices.Max(base))
	up := make([]uint64, nn)
	for i := range up {
		up[i] = uint64(math.Ceil(top*(1+diffOpts.minEffect))) + 1 + uint64(rng.IntN(int(top)+1))
	}
	r := compare(frag(base), frag(up), diffOpts)
	if w := workOfZone(t, r, "z0", fragStat); w.outcome == unchanged || w.outcome == improved {
		t.Errorf("seed %d: BASE %v, NEW %v (every run above): %v; replay: go test ./cmd/framescope -run TestDiffWorkProperties -work.seed=%d",
			seed, base, up, w.outcome, seed)
	}
	r = compare(frag(base), frag(base), diffOpts)
	if w := workOfZone(t, r, "z0", fragStat); w.outcome == regressed {
		t.Errorf("seed %d: BASE and NEW both %v: regressed; replay: go test ./cmd/framescope -run TestDiffWorkProperties -work.seed=%d", seed, base, seed)
	}
}

// TestDiffWorkExactIntegers (issue 38): "compared exactly" went through
// float64: 2^53 against 2^53+1 with --min-effect 0 was unchanged, --json
// printed 9007199254740993 as 9007199254740992, and benchfmt 2^64-1 as
// 18446744073709552000. Whole counts are now integers end to end.
func TestDiffWorkExactIntegers(t *testing.T) {
	frag := func(v uint64) func(int) workOf {
		return func(int) workOf {
			return func(z string, f uint64) *timeline.Work {
				w := baseWork(z, f)
				if z == "z0" {
					w.Count[fragStat] = v
				}
				return w
			}
		}
	}
	o := diffOpts
	o.minEffect = 0
	r := compare(workRuns(1, 1, frag(1<<53)), workRuns(100, 1, frag(1<<53+1)), o)
	if w := workOfZone(t, r, "z0", fragStat); w.outcome != regressed || !w.exact() {
		t.Errorf("2^53 against 2^53+1, --min-effect 0: %+v", w)
	}
	out := allOutputs(t, r)
	if !strings.Contains(out["json"], `"median_new": 9007199254740993`) || !strings.Contains(out["json"], `"new": [
            9007199254740993`) {
		t.Errorf("json lacks 2^53+1:\n%s", out["json"])
	}
	if !strings.Contains(out["text"], "9007199254740992 9007199254740993") {
		t.Errorf("text lacks the exact counts:\n%s", out["text"])
	}
	var b bytes.Buffer
	if err := writeBenchfmt(&b, workRuns(1, 1, frag(math.MaxUint64))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " 18446744073709551615 fragment_shader_invocations/op") {
		t.Errorf("benchfmt lacks 2^64-1:\n%s", b.String())
	}
}
