package main

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// workReport is stats of tracecases.WorkTrace, by zone name.
func workReport(t *testing.T) (statsReport, map[string]zoneStats) {
	t.Helper()
	r := computeStats(tracecases.WorkTrace())
	by := map[string]zoneStats{}
	for _, z := range r.Zones {
		by[z.Kind+":"+z.Zone] = z
	}
	return r, by
}

// stats gives each GPU zone that counts its work: counted and without
// counts (by reason), each statistic's mean, max and total over those
// counted, exactly past 2^53; and the trace the statistics counted and
// its zones without counts by reason, as many as its Drops.Work.
func TestStatsWork(t *testing.T) {
	tr := tracecases.WorkTrace()
	r, by := workReport(t)
	if r.Work == nil {
		t.Fatal("no work in the report")
	}
	want := []string{"input_assembly_vertices", "vertex_shader_invocations", "clipping_primitives",
		"fragment_shader_invocations", "compute_shader_invocations"}
	if !slices.Equal(r.Work.Stats, want) {
		t.Errorf("stats %q, want %q", r.Work.Stats, want)
	}
	if r.Work.Zones != 10 || r.Work.Counted != 4 || r.Work.NoCounts.Total != 6 || r.Work.NoCounts.Total != tr.Drops.Work {
		t.Errorf("work %+v: want 10 zones, 4 counted, 6 without counts (Drops.Work %d)", r.Work, tr.Drops.Work)
	}
	for i, m := range workReasons {
		want := uint64(1) // the trace has a zone of each reason but frame_end, secondaries and query
		if m == timeline.WorkFrameEnd || m == timeline.WorkSecondaries || m == timeline.WorkQuery {
			want = 0
		}
		if r.Work.NoCounts.By[i] != want {
			t.Errorf("no counts for %s: %d, want %d", m, r.Work.NoCounts.By[i], want)
		}
	}
	if len(workReasons) != int(timeline.NumWorkMissing)-1 || workReasons[0] != timeline.WorkRenderPass || workReasons[len(workReasons)-1] != timeline.WorkQuery {
		t.Errorf("reasons %v", workReasons)
	}

	f := by["gpu:frame"].Work
	if f == nil || f.Counted != 1 || f.NoCounts.Total != 0 ||
		f.Mean.Get("fragment_shader_invocations") != "12582912" || f.Mean.Get("vertex_shader_invocations") != "18" ||
		f.Mean.Get("compute_shader_invocations") != "0" || len(f.Mean) != 5 || f.Max.Get("clipping_primitives") != "6" {
		t.Errorf("frame: %+v", f)
	}
	c := by["gpu:cull"].Work
	if c == nil || c.Mean.Get("compute_shader_invocations") != "1152921504606846979" ||
		c.Max.Get("compute_shader_invocations") != "1152921504606846979" || c.Total.Get("compute_shader_invocations") != "1152921504606846979" {
		t.Errorf("cull: %+v, want 2^60+3 exactly", c)
	}
	d := by["gpu:draw"].Work
	if d == nil || d.Counted != 0 || d.NoCounts.Total != 6 || len(d.Mean) != 0 {
		t.Errorf("draw: %+v", d)
	}
	if by["gpu:post"].Work != nil {
		t.Errorf("post counts nothing, yet has work %+v", by["gpu:post"].Work)
	}

	// JSON: exact numbers, statistics in bit order, reasons by key, and
	// read back as written.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`"compute_shader_invocations":1152921504606846979`,
		`"no_counts":{"total":6,"render_pass":1,"elsewhere":1,"spent":1,"frames":1,"unavailable":1,"misnested":1,"frame_end":0,"secondaries":0,"query":0}`,
		`"mean":{"input_assembly_vertices":18,"vertex_shader_invocations":18,"clipping_primitives":6,"fragment_shader_invocations":12582912,"compute_shader_invocations":0}`,
		`"work":{"stats":["input_assembly_vertices","vertex_shader_invocations","clipping_primitives","fragment_shader_invocations","compute_shader_invocations"],"zones":10,"counted":4,`,
	} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("the JSON lacks %s:\n%s", w, b)
		}
	}
	var back statsReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Work, r.Work) || !reflect.DeepEqual(back.Zones, r.Zones) {
		t.Errorf("JSON read back differs:\n%+v\n%+v", back.Work, r.Work)
	}
}

// The text and Markdown tables: a row a zone that counts, the statistics
// as columns, "-" where a zone has no counts, and the reasons.
func TestStatsWorkTables(t *testing.T) {
	r, _ := workReport(t)
	var text, md bytes.Buffer
	writeStatsText(&text, r, false)
	writeStatsMarkdown(&md, r, false)
	rows := map[string]string{}
	for _, l := range strings.Split(text.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[strings.Join(f, " ")] = l
		}
	}
	for _, w := range []string{
		"kind zone counted no counts input_assembly_vertices vertex_shader_invocations clipping_primitives fragment_shader_invocations compute_shader_invocations",
		"gpu frame 1 0 18 18 6 12582912 0",
		"gpu cull 1 0 0 0 0 0 1152921504606846979",
		"gpu draw 0 6 - - - - -",
		"no counts: 6 of 10 zones that count work (render_pass 1, elsewhere 1, spent 1, frames 1, unavailable 1, misnested 1)",
	} {
		if _, ok := rows[w]; !ok {
			t.Errorf("the text lacks a line %q:\n%s", w, text.String())
		}
	}
	for z := range rows {
		if strings.HasPrefix(z, "gpu post 1 0") {
			t.Errorf("post, which counts nothing, has a row of work: %q", z)
		}
	}
	if i, j := strings.Index(text.String(), workTitle), strings.Index(text.String(), "\nframes: "); i < 0 || j < i {
		t.Errorf("the work table is not between the zones and the frames:\n%s", text.String())
	}
	for _, w := range []string{
		"| kind | zone | counted | no counts | input_assembly_vertices | vertex_shader_invocations | clipping_primitives | fragment_shader_invocations | compute_shader_invocations |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n",
		"| gpu | `cull` | 1 | 0 | 0 | 0 | 0 | 0 | 1152921504606846979 |\n",
		"| gpu | `draw` | 0 | 6 | - | - | - | - | - |\n",
		"\nno counts: 6 of 10 zones that count work (render_pass 1,",
	} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("the Markdown lacks %q:\n%s", w, md.String())
		}
	}
}

// A trace without work prints as it did before zones had work: no work
// section, no work key. Work on a CPU span (not a zone) is not work
// either.
func TestStatsNoWork(t *testing.T) {
	bare := tracecases.WorkTrace()
	for i := range bare.Spans {
		bare.Spans[i].Work = nil
	}
	cpu := tracecases.WorkTrace()
	cpu.Tracks = append(cpu.Tracks, timeline.Track{ID: 1, Kind: timeline.TrackCPU, Name: "main"})
	for i := range cpu.Spans {
		if cpu.Spans[i].Work != nil {
			cpu.Spans[i].Track = 1
		}
	}
	outputs := func(tr *timeline.Trace) [3]string {
		r := computeStats(tr)
		var text, md bytes.Buffer
		writeStatsText(&text, r, true)
		writeStatsMarkdown(&md, r, true)
		b, _ := json.Marshal(r)
		return [3]string{text.String(), md.String(), string(b)}
	}
	for name, tr := range map[string]*timeline.Trace{"no work": bare, "work on CPU spans": cpu} {
		out := outputs(tr)
		for i, bad := range []string{"GPU work", "GPU work", `"work":{`} {
			if strings.Contains(out[i], bad) || strings.Contains(out[i], "no counts") {
				t.Errorf("%s: output %d has work:\n%s", name, i, out[i])
			}
		}
	}
	// The same trace, its Work taken away: the same zones, frames, drops.
	a, b := computeStats(tracecases.WorkTrace()), computeStats(bare)
	for i := range a.Zones {
		a.Zones[i].Work = nil
	}
	a.Work = nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("work changed the rest of the report:\n%+v\n%+v", a, b)
	}
}

// Means are exact in their integer part, rounded to three decimals; sums
// of counts near 2^64 do not wrap; a zone's statistics may differ between
// its instances; a reason this build does not know is "unknown".
func TestStatsWorkSums(t *testing.T) {
	for _, c := range []struct {
		hi, lo, n uint64
		want      string
	}{
		{0, 7, 2, "3.5"}, {0, 10, 3, "3.333"}, {0, 2, 3, "0.667"}, {0, 19999, 10000, "2"}, {0, 1999, 1000, "1.999"},
		{0, 0, 5, "0"}, {1, math.MaxUint64 - 1, 2, "18446744073709551615"}, {0, math.MaxUint64, 1, "18446744073709551615"},
	} {
		if got := meanString(c.hi, c.lo, c.n); got != c.want {
			t.Errorf("mean of %d:%d over %d = %s, want %s", c.hi, c.lo, c.n, got, c.want)
		}
	}
	var a workAcc
	both := &timeline.Work{Stats: timeline.FragmentShaderInvocations | timeline.VertexShaderInvocations}
	both.Count[7], both.Count[2] = math.MaxUint64, 4
	frag := &timeline.Work{Stats: timeline.FragmentShaderInvocations}
	frag.Count[7] = math.MaxUint64 - 2
	a.add(both)
	a.add(frag)
	a.add(&timeline.Work{Stats: frag.Stats, Missing: 200})
	a.add(&timeline.Work{Stats: frag.Stats, Missing: timeline.WorkSpent})
	z := a.json()
	if z.Counted != 2 || z.Mean.Get("fragment_shader_invocations") != "18446744073709551614" ||
		z.Total.Get("fragment_shader_invocations") != "36893488147419103228" || z.Max.Get("fragment_shader_invocations") != "18446744073709551615" ||
		z.Mean.Get("vertex_shader_invocations") != "4" {
		t.Errorf("sums near 2^64: %+v", z)
	}
	b, _ := json.Marshal(z.NoCounts)
	if want := `{"total":2,"render_pass":0,"elsewhere":0,"spent":1,"frames":0,"unavailable":0,"misnested":0,"frame_end":0,"secondaries":0,"query":0,"unknown":1}`; string(b) != want {
		t.Errorf("no counts %s, want %s", b, want)
	}
	if got := z.NoCounts.reasons(); got != "(spent 1, unknown 1)" {
		t.Errorf("reasons %q", got)
	}
}

// stats on a trace file, Perfetto or Chrome JSON, gzipped or not, says
// of the work what it says of the trace in memory, in every output; and
// converting between the formats keeps it.
func TestStatsWorkFiles(t *testing.T) {
	dir := t.TempDir()
	mem := computeStats(tracecases.WorkTrace())
	var memText bytes.Buffer
	writeWorkText(&memText, mem)
	var paths []string
	for _, f := range []traceFormat{formatPerfetto, formatChrome} {
		for _, gz := range []bool{false, true} {
			name := "w." + f.String()
			if gz {
				name += ".gz"
			}
			paths = append(paths, writeFile(t, dir, name, tracecases.WorkTrace(), f, gz))
		}
	}
	conv := dir + "/converted.json"
	if code, _, errs := runCLI("convert", paths[0], conv); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	paths = append(paths, conv)
	for _, p := range paths {
		code, out, errs := runCLI("stats", "--json", p)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errs)
		}
		var r statsReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !reflect.DeepEqual(r.Work, mem.Work) {
			t.Errorf("%s: work %+v, want %+v", p, r.Work, mem.Work)
		}
		if len(r.Zones) != len(mem.Zones) {
			t.Fatalf("%s: %d zones, want %d", p, len(r.Zones), len(mem.Zones))
		}
		for i, z := range r.Zones {
			if !reflect.DeepEqual(z.Work, mem.Zones[i].Work) {
				t.Errorf("%s: zone %s: work %+v, want %+v", p, z.Zone, z.Work, mem.Zones[i].Work)
			}
		}
		_, out, _ = runCLI("stats", p)
		if !strings.Contains(out, memText.String()) {
			t.Errorf("%s: the text lacks the work table:\n%s\nwant:\n%s", p, out, memText.String())
		}
		_, out, _ = runCLI("stats", "--markdown", p)
		if !strings.Contains(out, "| gpu | `cull` | 1 | 0 | 0 | 0 | 0 | 0 | 1152921504606846979 |") {
			t.Errorf("%s: the Markdown lacks cull's work:\n%s", p, out)
		}
	}
}
