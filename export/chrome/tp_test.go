package chrome

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// tpSlices are the slices Perfetto's trace processor imported, as
// "thread|name|ts|dur|depth" lines, sorted.
func tpSlices(t *testing.T, s *tpcheck.Session) []string {
	rows := s.MustQuery(`select t.name as thread, s.name as name, s.ts as ts, s.dur as dur, s.depth as depth
		from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)`)
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v|%v|%v|%v|%v", r["thread"], r["name"], r["ts"], r["dur"], r["depth"]))
	}
	slices.Sort(out)
	return out
}

// wantSlices are the spans of tr in the form tpSlices gives.
func wantSlices(tr *timeline.Trace) []string {
	var out []string
	for _, s := range tr.Spans {
		name := strings.ToValidUTF8(tr.Name(s.Name), "\uFFFD")
		out = append(out, fmt.Sprintf("%v|%v|%v|%v|%v", tr.Track(s.Track).Name, name, s.Start, s.Dur(), s.Depth))
	}
	slices.Sort(out)
	return out
}

// TestTraceProcessor loads the JSON of the sample trace, written whole and
// in batches with children before parents, into Perfetto's trace processor
// and checks it imports cleanly with the same slices, flows and counters.
func TestTraceProcessor(t *testing.T) {
	tr := sampleTrace(9, 15)
	dir := t.TempDir()
	write := func(name string, bs []*timeline.Trace) string {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, b := range bs {
			if err := w.WriteBatch(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		bs   []*timeline.Trace
	}{
		{"whole.json", []*timeline.Trace{tr}},
		{"streamed.json", batches(tr, len(tr.Spans)/3, 11)},
		{"one-per-batch.json", batches(tr, len(tr.Spans), 12)},
		{"parents-first.json", batches(tr, len(tr.Spans)/2, 13, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tpcheck.Check(t, write(tc.name, tc.bs))
			got, want := tpSlices(t, s), wantSlices(tr)
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("%d slices, want %d; first difference:\ngot  %s\nwant %s", len(got), len(want), got[i], want[i])
					}
				}
				t.Fatalf("%d slices, want %d", len(got), len(want))
			}
			flows := 0
			for _, b := range tc.bs {
				flows += len(b.Flows)
			}
			rows := s.MustQuery(`select so.name as src, si.name as dst from flow f join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id`)
			if len(rows) != flows {
				t.Errorf("%d flows, want %d", len(rows), flows)
			}
			for _, r := range rows {
				if r["src"] != "submit" || r["dst"] != "gpu frame" {
					t.Errorf("flow %v -> %v, want submit -> gpu frame", r["src"], r["dst"])
				}
			}
			rows = s.MustQuery(`select count(*) as n, sum(value) as total from counter c join counter_track t on c.track_id = t.id where t.name like 'GPU busy %'`)
			var sum float64
			for _, x := range tr.Samples {
				sum += x.Value
			}
			if len(rows) != 1 || rows[0]["n"] != int64(len(tr.Samples)) || rows[0]["total"] != sum {
				t.Errorf("counter: %v, want %d samples totalling %v", rows, len(tr.Samples), sum)
			}
			rows = s.MustQuery(`select t.tid as tid, t.name as name from thread t join process p using(upid) where p.pid = 4242 order by t.name`)
			if len(rows) != 5 { // the process's main thread and the 4 span tracks
				t.Errorf("threads: %v, want the main thread and 4 span tracks", rows)
			}
		})
	}
}

// TestTraceProcessorLimits loads the JSON Write makes of a trace of
// frames of known limits into Perfetto's trace processor: it imports
// cleanly (no error, no data loss, no JSON or slice problem), with the
// trace's slices, a verdict slice per frame on "frame
// limits" with its args, a slice per gap on "GPU idle", and the two busy
// counters.
func TestTraceProcessorLimits(t *testing.T) {
	tr := tracecases.Limits()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "limits.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := tpcheck.Check(t, p)
	if r := s.MustQuery(flowStats); len(r) > 0 {
		t.Errorf("the trace processor counted problems: %v", r)
	}
	var own, verdicts, gaps []string
	for _, l := range tpSlices(t, s) {
		switch th, _, _ := strings.Cut(l, "|"); th {
		case limitsThread:
			verdicts = append(verdicts, l)
		case idleThread:
			gaps = append(gaps, l)
		case "Frames": // the frames, drawn as the trace has no frames track
		default:
			own = append(own, l)
		}
	}
	if want := wantSlices(tr); !slices.Equal(own, want) {
		t.Errorf("the trace's slices:\n%q\nwant\n%q", own, want)
	}
	want := []string{"frame limits|CPU-bound|0|10000000|0", "frame limits|GPU-bound|10000000|10000000|0", "frame limits|presentation-bound|20000000|20000000|0"}
	if !slices.Equal(verdicts, want) {
		t.Errorf("verdicts %q, want %q", verdicts, want)
	}
	if len(gaps) != 6 {
		t.Errorf("gaps %q, want 6", gaps)
	}
	rows := s.MustQuery(`select a.key as key, coalesce(a.int_value, a.string_value, a.real_value) as value from slice s
		join args a on a.arg_set_id = s.arg_set_id where s.name = 'CPU-bound' order by a.key`)
	if got := fmt.Sprint(rows); got != "[map[key:args.cpu_busy value:0.88] map[key:args.cpu_busy_ns value:8800000] map[key:args.cpu_wait_ns value:1200000] map[key:args.frame value:1] map[key:args.gpu_busy value:0.1] map[key:args.gpu_busy_ns value:1000000] map[key:args.gpu_err_ns value:0] map[key:args.latency_ns value:200000] map[key:args.present_wait_ns value:0] map[key:args.thread value:main]]" {
		t.Errorf("CPU-bound's args: %s", got)
	}
	rows = s.MustQuery(`select t.name as name, count(*) as n from counter c join counter_track t on c.track_id = t.id
		where t.name in ('GPU busy value', 'CPU busy value') group by t.name order by t.name`)
	if got := fmt.Sprint(rows); got != "[map[n:3 name:CPU busy value] map[n:3 name:GPU busy value]]" {
		t.Errorf("busy counters: %s", got)
	}
}
