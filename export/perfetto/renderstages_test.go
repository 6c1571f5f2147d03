package perfetto

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// writeOpt writes a case's batches with one Writer of options o.
func writeOpt(t testing.TB, c tcase, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, o)
	for _, b := range c.batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// splitPackets returns the packets of a trace, and for each whether it
// holds a field of fields.
func splitPackets(t *testing.T, data []byte, fields ...protowire.Number) (pkts [][]byte, has []bool) {
	t.Helper()
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 || num != fTracePacket || typ != protowire.BytesType {
			t.Fatalf("not a packet at %d bytes from the end", len(data))
		}
		body, m := protowire.ConsumeBytes(data[n:])
		if m < 0 {
			t.Fatalf("bad packet at %d bytes from the end", len(data))
		}
		found := false
		for b := body; len(b) > 0; {
			f, ft, k := protowire.ConsumeTag(b)
			if k < 0 {
				t.Fatal("bad field in a packet")
			}
			found = found || slices.Contains(fields, f)
			l := protowire.ConsumeFieldValue(f, ft, b[k:])
			if l < 0 {
				t.Fatal("bad field in a packet")
			}
			b = b[k+l:]
		}
		pkts = append(pkts, data[:n+m])
		has = append(has, found)
		data = data[n+m:]
	}
	return pkts, has
}

// gpuZones counts the valid spans of a case on GPU queue and lane tracks.
func gpuZones(c tcase) int {
	n := 0
	for _, b := range c.batches {
		for _, s := range b.Spans {
			if tr := b.Track(s.Track); tr != nil && (tr.Kind == timeline.TrackGPUQueue || tr.Kind == timeline.TrackGPULane) {
				n++
			}
		}
	}
	return n
}

// TestRenderStagesAddOnly: Options.RenderStages adds whole packets and
// changes nothing else: without its render stage and GPU counter packets,
// the trace is the one written without the option, byte for byte. It
// writes one render stage a GPU zone, and GPU counters where there are
// work counters.
func TestRenderStagesAddOnly(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			plain := write(t, c)
			deterministic := bytes.Equal(plain, write(t, c)) // not so when it has no event: it starts at Now
			if !deterministic && c.name != "empty" {
				t.Fatal("two writes of the case differ")
			}
			pkts, has := splitPackets(t, writeOpt(t, c, Options{RenderStages: true}), fPktGpuRenderStage, fPktGpuCounterEvent)
			var rest []byte
			stages, counters := 0, 0
			for i, p := range pkts {
				if !has[i] {
					rest = append(rest, p...)
					continue
				}
				_, st := splitPackets(t, p, fPktGpuRenderStage)
				if st[0] {
					stages++
				} else {
					counters++
				}
			}
			if deterministic && !bytes.Equal(rest, plain) {
				t.Errorf("without its added packets the trace differs from the one written without RenderStages (%d bytes, want %d)", len(rest), len(plain))
			}
			if want := gpuZones(c); stages != want {
				t.Errorf("%d render stage packets, want one a GPU zone: %d", stages, want)
			}
			if x := expect(c); (counters > 0) != (len(x.workCounters) > 0) {
				t.Errorf("%d GPU counter packets for %d work counter samples", counters, len(x.workCounters))
			}
		})
	}
}

// TestRenderStagesRead: Read ignores what RenderStages adds: a trace
// written with it reads back to the timeline written without it.
func TestRenderStagesRead(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			want, err := readBytes(write(t, c))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBytes(writeOpt(t, c, Options{RenderStages: true}))
			if err != nil {
				t.Fatal(err)
			}
			checkTrace(t, expect(c), got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back with render stages:\n%+v\nwithout:\n%+v", got, want)
			}
		})
	}
}

// gpuQueueName is the name of the hardware queue of a GPU track: its
// queue's (a lane's parent's) name.
func gpuQueueName(b *timeline.Trace, tr *timeline.Track) string {
	if tr.Kind == timeline.TrackGPULane {
		if p := b.Track(tr.Parent); p != nil && p.Kind == timeline.TrackGPUQueue {
			return p.Name
		}
	}
	return tr.Name
}

// wantGPUCounters returns the samples the trace processor should hold on
// the GPU counters of a case, as "name | ts | value": for each work
// counter sample (see wantWork), the sum at the earliest start of its
// zones and a 0 at their latest end (the processor reads a GPU counter's
// value backwards). It assumes that the zones of two samples of one
// counter neither overlap nor touch, as in this package's cases.
func wantGPUCounters(c tcase) []string {
	var out []string
	for _, b := range c.batches {
		type group struct {
			start, end int64
			sum        map[int]float64
		}
		groups := map[string]*group{}
		for _, s := range b.Spans {
			tr := b.Track(s.Track)
			if s.Work == nil || s.Work.Missing != timeline.WorkCounted || s.Work.Stats == 0 || s.Depth != 0 || tr == nil ||
				(tr.Kind != timeline.TrackGPUQueue && tr.Kind != timeline.TrackGPULane) {
				continue
			}
			k := fmt.Sprintf("%s\x00%d", gpuQueueName(b, tr), s.Frame)
			g := groups[k]
			if g == nil {
				g = &group{start: s.Start, end: s.End, sum: map[int]float64{}}
				groups[k] = g
			}
			g.start, g.end = min(g.start, s.Start), max(g.end, s.End)
			for i := range timeline.NumPipelineStats {
				if v, ok := s.Work.Value(i); ok {
					g.sum[i] += float64(v)
				}
			}
		}
		for k, g := range groups {
			q, _, _ := strings.Cut(k, "\x00")
			for i, v := range g.sum {
				name := q + " " + timeline.StatKey(i)
				out = append(out, fmt.Sprintf("%s | %d | %v", name, g.start, v), fmt.Sprintf("%s | %d | 0", name, g.end))
			}
		}
	}
	return sorted(out)
}

// TestRenderStagesTraceProcessor loads every case written with
// RenderStages into Perfetto's trace processor: it must import it without
// errors, hold one gpu_slice a GPU zone (on the hardware queue named as
// its queue track, with its name, times and frame as submission_id, in
// the traced process), the work counters as GPU counters (one GPU a
// device), and everything else as it holds the trace written without the
// option.
func TestRenderStagesTraceProcessor(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			plainPath, stagesPath := filepath.Join(dir, "plain.pftrace"), filepath.Join(dir, "stages.pftrace")
			if err := os.WriteFile(plainPath, write(t, c), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stagesPath, writeOpt(t, c, Options{RenderStages: true}), 0o644); err != nil {
				t.Fatal(err)
			}
			s := tpcheck.Check(t, stagesPath)
			if r := s.MustQuery(quietStats + ` or (name like 'gpu%' and value > 0)`); len(r) > 0 {
				t.Errorf("the trace processor counted problems: %v", r)
			}
			x := expect(c)

			// One gpu_slice a GPU zone.
			var want []string
			devices := map[string]string{} // queue name -> device
			for _, b := range c.batches {
				for _, sp := range b.Spans {
					tr := b.Track(sp.Track)
					if tr == nil || (tr.Kind != timeline.TrackGPUQueue && tr.Kind != timeline.TrackGPULane) {
						continue
					}
					name, _, _ := strings.Cut(b.Name(sp.Name), "\x00")
					want = append(want, fmt.Sprintf("%s | %s | %d | %d | %d | %d", gpuQueueName(b, tr), name, sp.Start, sp.Dur(), uint32(sp.Frame), x.process.PID))
					devices[gpuQueueName(b, tr)] = tr.Queue.Device
				}
			}
			got := rows(t, s, `select t.name as hwq, s.name, s.ts, s.dur, s.submission_id, p.pid
				from gpu_slice s join track t on s.track_id = t.id left join process p on s.upid = p.upid`,
				"hwq", "name", "ts", "dur", "submission_id", "pid")
			diff(t, "gpu slices", got, sorted(want))

			// The work counters as GPU counters, one GPU a device.
			got = rows(t, s, `select t.name, c.ts, c.value from counter c join gpu_counter_track t on c.track_id = t.id`, "name", "ts", "value")
			diff(t, "gpu counters", got, wantGPUCounters(c))
			gpuOf := map[string]int64{}
			for _, r := range s.MustQuery(`select name, gpu_id from gpu_counter_track`) {
				name := r["name"].(string)
				for q, dev := range devices {
					if !strings.HasPrefix(name, q+" ") {
						continue
					}
					if id, ok := gpuOf[dev]; ok && id != r["gpu_id"] {
						t.Errorf("counter %q of device %q on GPU %v, another of it on %v", name, dev, r["gpu_id"], id)
					}
					gpuOf[dev] = r["gpu_id"].(int64)
				}
			}
			ids := map[int64]string{}
			for dev, id := range gpuOf {
				if other, ok := ids[id]; ok {
					t.Errorf("devices %q and %q share GPU %d", dev, other, id)
				}
				ids[id] = dev
			}

			// Everything else as without the option.
			queries := []struct {
				sql  string
				cols []string
			}{
				{`select t.name as track, s.name, s.ts, s.dur, s.depth, s.category from slice s join track t on s.track_id = t.id
					where t.type != 'gpu_render_stage'`, []string{"track", "name", "ts", "dur", "depth", "category"}},
				{`select s.name, s.ts, a.key, a.display_value from slice s join track t on s.track_id = t.id
					join args a on a.arg_set_id = s.arg_set_id where t.type != 'gpu_render_stage'`, []string{"name", "ts", "key", "display_value"}},
				{`select so.name as a, so.ts as ats, si.name as b, si.ts as bts from flow f
					join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id`, []string{"a", "ats", "b", "bts"}},
				{`select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id
					where t.type != 'gpu_counter' and t.name != 'framescope batches'`, []string{"name", "ts", "value"}},
				{`select t.name, t.type, p.name as parent from track t left join track p on t.parent_id = p.id
					where t.type not in ('gpu_render_stage', 'gpu_counter')`, []string{"name", "type", "parent"}},
			}
			var with [][]string
			for _, q := range queries {
				with = append(with, rows(t, s, q.sql, q.cols...))
			}
			plain := tpcheck.Load(t, plainPath)
			for i, q := range queries {
				diff(t, "without gpu data: "+q.sql, with[i], rows(t, plain, q.sql, q.cols...))
			}
		})
	}
}
