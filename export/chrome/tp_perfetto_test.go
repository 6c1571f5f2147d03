package chrome

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// trackOf names a slice's track as viewers do: its thread's name for JSON
// threads, the track's own name for Perfetto tracks; "" for a track
// without a name (the JSON writer gives its thread none, the Perfetto
// writer an empty one).
const trackOf = `coalesce(th.name, t.name, '')`

const sliceFrom = ` from slice s join track t on s.track_id = t.id
	left join thread_track tt on tt.id = s.track_id left join thread th on th.utid = tt.utid`

// allSlices are the slices of a loaded trace as "track|name|ts|dur|depth",
// sorted, leaving out the instant the Perfetto writer marks drops with
// (JSON reports them in a counter and metadata).
func allSlices(s *tpcheck.Session) []string {
	rows := s.MustQuery(`select ` + trackOf + ` as track, s.name as name, s.ts as ts, s.dur as dur, s.depth as depth` +
		sliceFrom + ` where ` + trackOf + ` != 'framescope dropped'`)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v|%v|%v|%v|%v", r["track"], sliceName(r["name"]), r["ts"], r["dur"], r["depth"]))
	}
	slices.Sort(out)
	return out
}

// sliceName is a slice's name as both formats can hold it: JSON has no
// place for invalid UTF-8 (the writer makes each bad byte U+FFFD), the trace
// processor cuts a Perfetto name at its first NUL, and it names a JSON
// slice with an empty name "[No name]".
func sliceName(v any) string {
	if v == "[No name]" {
		return ""
	}
	name, _, _ := strings.Cut(fmt.Sprint(v), "\x00")
	// Each invalid byte, as the JSON writer replaces them.
	return strings.Map(func(r rune) rune { return r }, name)
}

// allFlows are the flows of a loaded trace as "out -> in", each end as
// track/name@ts/depth, sorted.
func allFlows(s *tpcheck.Session) []string {
	end := func(p string) string {
		return fmt.Sprintf(`coalesce(%[1]sth.name, %[1]st.name, '') as %[1]strack, %[1]s.name as %[1]sname, %[1]s.ts as %[1]sts, %[1]s.depth as %[1]sdepth`, p)
	}
	join := func(p, col string) string {
		return ` join slice ` + p + ` on f.` + col + ` = ` + p + `.id join track ` + p + `t on ` + p + `.track_id = ` + p + `t.id
			left join thread_track ` + p + `tt on ` + p + `tt.id = ` + p + `.track_id left join thread ` + p + `th on ` + p + `th.utid = ` + p + `tt.utid`
	}
	rows := s.MustQuery(`select ` + end("o") + `, ` + end("i") + ` from flow f` + join("o", "slice_out") + join("i", "slice_in"))
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v/%v@%v/%v -> %v/%v@%v/%v", r["otrack"], sliceName(r["oname"]), r["ots"], r["odepth"],
			r["itrack"], sliceName(r["iname"]), r["its"], r["idepth"]))
	}
	slices.Sort(out)
	return out
}

// allCounters are the samples of the timeline's counter tracks as
// "name|ts|value", sorted: not the writers' own drop counters, nor the
// calibration counters and batch ends that only the Perfetto writer
// draws, nor the counters named in skip.
// The trace processor names the counter of a JSON 'C' event by the
// event's name and its arg, "name value"; suffix is that " value".
func allCounters(s *tpcheck.Session, suffix string, skip map[string]bool) []string {
	rows := s.MustQuery(`select t.name as name, c.ts as ts, c.value as value from counter c join counter_track t on c.track_id = t.id
		where t.name not like 'framescope dropped%' and t.name not like 'clock %' and t.name != 'framescope batches'`)
	var out []string
	for _, r := range rows {
		if skip[fmt.Sprint(r["name"])] {
			continue
		}
		name, ok := strings.CutSuffix(fmt.Sprint(r["name"]), suffix)
		if !ok {
			name = "no suffix: " + name
		}
		out = append(out, fmt.Sprintf("%v|%v|%v", name, r["ts"], r["value"]))
	}
	slices.Sort(out)
	return out
}

// workCounters names the counters the Perfetto writer derives from the
// GPU zones' work, "<queue track> <statistic>", which the JSON writer
// does not write: each slice carries its own counts in both files
// (allWorkArgs compares them).
func workCounters(bs []*timeline.Trace) map[string]bool {
	out := map[string]bool{}
	for _, b := range bs {
		for _, tr := range b.Tracks {
			if tr.Kind == timeline.TrackGPUQueue {
				for i := range timeline.NumPipelineStats {
					out[tr.Name+" "+timeline.StatKey(i)] = true
				}
			}
		}
	}
	return out
}

// allWorkArgs are the work args of the slices of a loaded trace, as the
// trace processor imported them, "track|name|ts|key=value", sorted: JSON
// args are under "args.", the Perfetto writer's debug annotations under
// "debug."; prefix is that.
func allWorkArgs(s *tpcheck.Session, prefix string) []string {
	keys := []string{"'" + prefix + argWorkMissing + "'", "'" + prefix + argWorkStats + "'"}
	for i := range timeline.NumPipelineStats {
		keys = append(keys, "'"+prefix+timeline.StatKey(i)+"'")
	}
	rows := s.MustQuery(`select ` + trackOf + ` as track, s.name as name, s.ts as ts, a.key as key,
		coalesce(a.int_value, a.string_value, a.real_value) as value` + sliceFrom + `
		join args a on a.arg_set_id = s.arg_set_id where a.key in (` + strings.Join(keys, ", ") + `)`)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v|%v|%v|%v=%v", r["track"], sliceName(r["name"]), r["ts"], strings.TrimPrefix(fmt.Sprint(r["key"]), prefix), r["value"]))
	}
	slices.Sort(out)
	return out
}

// droppedTotal is the last value of the JSON writer's "framescope
// dropped" counter (named "framescope dropped value" by the processor), or the sum of the last values of the Perfetto
// writer's per-cause counters: everything dropped, as a viewer shows it.
func droppedTotal(s *tpcheck.Session) float64 {
	rows := s.MustQuery(`select coalesce(sum(c.value), 0) as total from counter c join counter_track t on c.track_id = t.id
		where (t.name = 'framescope dropped value' or t.name like 'framescope dropped:%')
		and c.ts = (select max(ts) from counter c2 where c2.track_id = c.track_id)`)
	switch v := rows[0]["total"].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return -1
}

// flowStats are stats of any severity that say flows, slices or JSON
// events were lost or misplaced on import.
const flowStats = `select name, value from stats where value > 0 and (name like 'flow%' or name like 'json%'
	or name like '%misplaced%' or name like 'slice_%' or name like '%unmatched%')`

// TestSameSlicesAsPerfetto writes every conformance case of the Perfetto
// writer (package tracecases), and two larger traces, with both writers
// batch by batch, loads both files into Perfetto's trace processor, and
// checks that both import cleanly and hold the same slices (names, times
// to the nanosecond, durations, depths, on tracks of the same names), the
// same flows between the same slices, the same counter samples, and the
// same count of dropped items.
func TestSameSlicesAsPerfetto(t *testing.T) {
	all := tracecases.All()
	all = append(all,
		tracecases.Case{Name: "sample", Batches: []*timeline.Trace{sampleTrace(21, 10)}},
		tracecases.Case{Name: "benchspans", Batches: []*timeline.Trace{benchspans.Trace(2000, 5)}})
	dir := t.TempDir()
	for i, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			var js, pf bytes.Buffer
			w := NewWriter(&js)
			pw := perfetto.NewWriter(&pf, perfetto.Options{})
			spans := 0
			for _, b := range c.Batches {
				if err := w.WriteBatch(b); err != nil {
					t.Fatal(err)
				}
				if err := pw.Write(b); err != nil {
					t.Fatal(err)
				}
				spans += len(b.Spans)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			jp, pp := filepath.Join(dir, fmt.Sprint(i, ".json")), filepath.Join(dir, fmt.Sprint(i, ".pftrace"))
			if err := os.WriteFile(jp, js.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pp, pf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			jsS, pfS := tpcheck.Check(t, jp), tpcheck.Check(t, pp)
			if r := jsS.MustQuery(flowStats); len(r) > 0 {
				t.Errorf("JSON: the trace processor counted problems: %v", r)
			}
			if inv := w.Invalid(); inv != (Invalid{}) {
				t.Errorf("the JSON writer refused part of a valid trace: %+v", inv)
			}
			if n := pw.Stats().Invalid; n != 0 {
				t.Errorf("the Perfetto writer refused %d items of a valid trace", n)
			}
			diffLists(t, "slices", allSlices(jsS), allSlices(pfS))
			if got := len(allSlices(jsS)); got < spans {
				t.Errorf("JSON: %d slices, the trace has %d spans", got, spans)
			}
			flows := 0
			for _, b := range c.Batches {
				flows += len(b.Flows)
			}
			jf, pfl := allFlows(jsS), allFlows(pfS)
			if len(pfl) != flows {
				t.Errorf("Perfetto: %d flows, the trace has %d", len(pfl), flows)
			}
			diffLists(t, "flows", jf, pfl)
			diffLists(t, "counters", allCounters(jsS, " value", nil), allCounters(pfS, "", workCounters(c.Batches)))
			jw, pfw := allWorkArgs(jsS, "args."), allWorkArgs(pfS, "debug.")
			diffLists(t, "work args", jw, pfw)
			if want := wantWorkArgs(c.Batches); !slices.Equal(jw, want) {
				diffLists(t, "work args (JSON, and as the timeline has them)", jw, want)
			}
			if j, p := droppedTotal(jsS), droppedTotal(pfS); j != p {
				t.Errorf("dropped: JSON shows %v, Perfetto %v", j, p)
			}
		})
	}
}

// wantWorkArgs are the work args of the batches' spans in the form
// allWorkArgs gives, every count exact: a JSON trace's count past 2^53
// must reach the trace processor whole, not through a float64.
func wantWorkArgs(bs []*timeline.Trace) []string {
	var out []string
	for _, b := range bs {
		for _, s := range b.Spans {
			w := s.Work
			if w == nil {
				continue
			}
			at := fmt.Sprintf("%s|%s|%d|", b.Track(s.Track).Name, sliceName(b.Name(s.Name)), s.Start)
			switch {
			case w.Missing != timeline.WorkCounted:
				out = append(out, at+argWorkMissing+"="+w.Missing.String(), at+argWorkStats+"="+w.Stats.String())
			case w.Stats == 0:
				out = append(out, at+argWorkStats+"=")
			}
			w.Stats.Each(func(i int) {
				if w.Missing == timeline.WorkCounted {
					out = append(out, at+timeline.StatKey(i)+"="+strconv.FormatUint(w.Count[i], 10))
				}
			})
		}
	}
	slices.Sort(out)
	return out
}

// diffLists fails the test with the first difference between two sorted
// lists.
func diffLists(t *testing.T, what string, json, pf []string) {
	t.Helper()
	if slices.Equal(json, pf) {
		return
	}
	for i := range max(len(json), len(pf)) {
		var j, p string
		if i < len(json) {
			j = json[i]
		}
		if i < len(pf) {
			p = pf[i]
		}
		if j != p {
			t.Errorf("%s: JSON has %d, Perfetto %d; first difference at %d:\n  json     %.300q\n  perfetto %.300q", what, len(json), len(pf), i, j, p)
			return
		}
	}
}
