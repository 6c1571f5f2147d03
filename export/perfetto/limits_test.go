package perfetto

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

const msNs = int64(1_000_000)

// limitsTrace is tracecases.Limits with a user's own CPU track named as a
// limits track is.
func limitsTrace() *timeline.Trace {
	t := tracecases.Limits()
	t.Tracks = append(t.Tracks, timeline.Track{ID: 3, Kind: timeline.TrackCPU, Name: "frame limits"})
	t.Spans = append(t.Spans, timeline.Span{Track: 3, Name: 1, Start: 31 * msNs, End: 32 * msNs})
	return t
}

// TestWriteAddsLimits: Write adds each frame's verdict, its GPU idle gaps
// by cause and its busy shares, which Perfetto's trace processor loads
// without a complaint, and Read leaves out (the user's own track named
// "frame limits" stays).
func TestWriteAddsLimits(t *testing.T) {
	tr := limitsTrace()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	w := NewWriter(&plain, Options{})
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want, err := Read(bytes.NewReader(plain.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("Read of Write's trace differs from Read of the streamed one:\n%+v\n%+v", back, want)
	}
	if len(back.Spans) != len(tr.Spans) {
		t.Errorf("read back %d spans, wrote %d", len(back.Spans), len(tr.Spans))
	}
	checkLimitTracks(t, buf.Bytes())
}

// TestAppendLimits: a streamed trace with AppendLimits after it shows the
// same limits as Write's, and reads back as it did without.
func TestAppendLimits(t *testing.T) {
	tr := limitsTrace()
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	if err := w.Write(tr); err != nil {
		t.Fatal(err)
	}
	w.Close()
	before, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendLimits(&buf, before); err != nil {
		t.Fatal(err)
	}
	after, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the appended limits changed what Read reads")
	}
	checkLimitTracks(t, buf.Bytes())

	var none bytes.Buffer
	if err := AppendLimits(&none, &timeline.Trace{Names: []string{""}}); err != nil || none.Len() != 0 {
		t.Errorf("a trace without frames: %d bytes appended, %v", none.Len(), err)
	}
	if err := AppendLimits(&none, nil); err == nil || none.Len() != 0 {
		t.Errorf("a nil trace: %d bytes appended, error %v", none.Len(), err)
	}
}

func checkLimitTracks(t *testing.T, trace []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "limits.pftrace")
	if err := os.WriteFile(p, trace, 0o644); err != nil {
		t.Fatal(err)
	}
	s := tpcheck.Check(t, p)
	got := fmt.Sprint(s.MustQuery(`select s.ts, s.dur, s.name, extract_arg(s.arg_set_id, 'debug.gpu_busy') as gpu,
		extract_arg(s.arg_set_id, 'debug.frame') as frame
		from slice s join track t on s.track_id = t.id where t.name = 'frame limits' and s.category is null order by s.ts`))
	want := fmt.Sprint([]map[string]any{
		{"ts": int64(0), "dur": 10 * msNs, "name": "CPU-bound", "gpu": 0.1, "frame": int64(1)},
		{"ts": 10 * msNs, "dur": 10 * msNs, "name": "GPU-bound", "gpu": 0.95, "frame": int64(2)},
		{"ts": 20 * msNs, "dur": 20 * msNs, "name": "presentation-bound", "gpu": 0.15, "frame": int64(3)},
	})
	if got != want {
		t.Errorf("verdicts:\n got %s\nwant %s", got, want)
	}
	gaps := fmt.Sprint(s.MustQuery(`select s.ts, s.dur, s.name from slice s join track t on s.track_id = t.id
		where t.name = 'GPU idle' order by s.ts`))
	wantGaps := fmt.Sprint([]map[string]any{
		{"ts": int64(0), "dur": 82 * msNs / 10, "name": "waiting for submit"},
		{"ts": 92 * msNs / 10, "dur": 8 * msNs / 10, "name": "waiting for submit"},
		{"ts": 10 * msNs, "dur": 3 * msNs / 10, "name": "waiting for submit"},
		{"ts": 198 * msNs / 10, "dur": 2 * msNs / 10, "name": "waiting for submit"},
		{"ts": 20 * msNs, "dur": 22 * msNs / 10, "name": "waiting for submit"},
		{"ts": 252 * msNs / 10, "dur": 148 * msNs / 10, "name": "waiting on present"},
	})
	if gaps != wantGaps {
		t.Errorf("gaps:\n got %s\nwant %s", gaps, wantGaps)
	}
	busy := fmt.Sprint(s.MustQuery(`select t.name, c.ts, round(c.value, 4) as v from counter c join counter_track t on c.track_id = t.id
		where t.name in ('GPU busy', 'CPU busy') order by t.name, c.ts`))
	wantBusy := fmt.Sprint([]map[string]any{
		{"name": "CPU busy", "ts": int64(0), "v": 0.88},
		{"name": "CPU busy", "ts": 10 * msNs, "v": 0.03},
		{"name": "CPU busy", "ts": 20 * msNs, "v": 0.265},
		{"name": "GPU busy", "ts": int64(0), "v": 0.1},
		{"name": "GPU busy", "ts": 10 * msNs, "v": 0.95},
		{"name": "GPU busy", "ts": 20 * msNs, "v": 0.15},
	})
	if busy != wantBusy {
		t.Errorf("busy counters:\n got %s\nwant %s", busy, wantBusy)
	}
}

// Frames that overlap (a frame whose own end is past the next one's
// start) draw slices that do not: each begins where the last ended, so
// the trace processor nests none of them.
func TestLimitsOverlappingFrames(t *testing.T) {
	tr := limitsTrace()
	tr.Frames[1].End = 35 * msNs                                                           // frame 2 [10, 35 ms) over frame 3 [20, 40 ms)
	tr.Frames = append(tr.Frames, timeline.Frame{ID: 5, Start: 21 * msNs, End: 22 * msNs}) // wholly inside frame 3
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "overlap.pftrace")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := tpcheck.Check(t, p).MustQuery(`select t.name, count(*) as n, max(s.depth) as depth from slice s join track t on s.track_id = t.id
		where t.name in ('frame limits', 'GPU idle') and s.category is null group by t.name order by t.name`)
	if got := fmt.Sprint(rows); got != "[map[depth:0 n:6 name:GPU idle] map[depth:0 n:3 name:frame limits]]" {
		t.Errorf("limits slices: %s", got)
	}
}
