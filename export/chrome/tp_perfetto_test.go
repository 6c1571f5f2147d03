package chrome

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/benchspans"
	"github.com/framescope/framescope/internal/tpcheck"
	"github.com/framescope/framescope/timeline"
)

// allSlices are the slices of a loaded trace as "track|name|ts|dur|depth",
// sorted, leaving out the instant the Perfetto writer marks drops with
// (JSON reports them in a counter and metadata); a slice's track is its thread's name for JSON threads and the
// track's own name for Perfetto tracks.
func allSlices(s *tpcheck.Session) []string {
	rows := s.MustQuery(`select coalesce(th.name, t.name) as track, s.name as name, s.ts as ts, s.dur as dur, s.depth as depth
		from slice s join track t on s.track_id = t.id
		left join thread_track tt on tt.id = s.track_id left join thread th on th.utid = tt.utid
		where coalesce(th.name, t.name) != 'framescope dropped'`)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		// JSON has no place for invalid UTF-8: the writer makes it U+FFFD.
		name := strings.ToValidUTF8(fmt.Sprint(r["name"]), "\uFFFD")
		out = append(out, fmt.Sprintf("%v|%v|%v|%v|%v", r["track"], name, r["ts"], r["dur"], r["depth"]))
	}
	slices.Sort(out)
	return out
}

// TestSameSlicesAsPerfetto writes the same traces as Chrome JSON and as a
// Perfetto trace, loads both into Perfetto's trace processor, and checks
// that both import cleanly with the same slices: names, times to the
// nanosecond, durations and depths, on tracks of the same names.
func TestSameSlicesAsPerfetto(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		tr   *timeline.Trace
	}{
		{"sample", sampleTrace(21, 10)},
		{"benchspans", benchspans.Trace(2000, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var js, pf bytes.Buffer
			w := NewWriter(&js)
			if err := w.WriteBatch(tc.tr); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := perfetto.WriteTrace(&pf, tc.tr); err != nil {
				t.Fatal(err)
			}
			jp, pp := filepath.Join(dir, tc.name+".json"), filepath.Join(dir, tc.name+".pftrace")
			os.WriteFile(jp, js.Bytes(), 0o644)
			os.WriteFile(pp, pf.Bytes(), 0o644)
			js1, ps := tpcheck.Check(t, jp), tpcheck.Check(t, pp)
			got, want := allSlices(js1), allSlices(ps)
			// Flows: all but those pointing back in time, which Chrome
			// JSON cannot draw and the writer counts.
			jf := js1.MustQuery("select count(*) as n from flow")[0]["n"].(int64)
			pfl := ps.MustQuery("select count(*) as n from flow")[0]["n"].(int64)
			if pfl != int64(len(tc.tr.Flows)) || jf != pfl-int64(w.Invalid().Flows) {
				t.Errorf("flows: JSON %d, Perfetto %d, trace %d, refused by the JSON writer %d", jf, pfl, len(tc.tr.Flows), w.Invalid().Flows)
			}
			if len(got) != len(tc.tr.Spans) {
				t.Errorf("JSON: %d slices, trace has %d spans", len(got), len(tc.tr.Spans))
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("JSON %d slices, Perfetto %d; first difference:\njson     %s\nperfetto %s", len(got), len(want), got[i], want[i])
					}
				}
				t.Fatalf("JSON %d slices, Perfetto %d", len(got), len(want))
			}
		})
	}
}
