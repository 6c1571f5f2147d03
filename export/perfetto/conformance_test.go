package perfetto

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
)

// TestTraceProcessor loads every case into Perfetto's own trace processor:
// it must import them without errors or data loss, and hold the slices
// (names, times to the ns, depths), flows, tracks and counters written.
func TestTraceProcessor(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "trace.pftrace")
			if err := os.WriteFile(p, write(t, c), 0o644); err != nil {
				t.Fatal(err)
			}
			s := tpcheck.Check(t, p)
			x := expect(c)
			checkProcessor(t, s, x)
			checkArgs(t, s, write(t, c), x)
			checkWorkArgs(t, s, x)
		})
	}
}

// workKeys are the args of a slice's work, as the trace processor names
// them.
func workKeys() []string {
	var k []string
	for i := range timeline.NumPipelineStats {
		k = append(k, "'debug."+timeline.StatKey(i)+"'")
	}
	return append(k, "'debug.work_missing'", "'debug.work_stats'")
}

// checkWorkArgs checks the slices' work args as the trace processor holds
// them: on each GPU zone with counts, one unsigned arg per statistic
// counted, with its exact count (past 2^53 too); on a zone without,
// work_missing and work_stats; on every other slice, none.
func checkWorkArgs(t *testing.T, s *tpcheck.Session, x expected) {
	t.Helper()
	var want []string
	for _, k := range x.spans {
		if !k.HasWork {
			continue
		}
		name, _, _ := strings.Cut(k.Name, "\x00")
		row := fmt.Sprintf("%s | %s | %d | %d | ", k.trackName, name, k.Start, k.Depth)
		if k.Work.Missing == timeline.WorkCounted && k.Work.Stats != 0 {
			k.Work.Stats.Each(func(i int) {
				want = append(want, row+fmt.Sprintf("debug.%s | uint | %d", timeline.StatKey(i), k.Work.Count[i]))
			})
			continue
		}
		if k.Work.Missing != timeline.WorkCounted {
			want = append(want, row+"debug.work_missing | string | "+k.Work.Missing.String())
		}
		want = append(want, row+"debug.work_stats | string | "+k.Work.Stats.String())
	}
	var got []string
	for _, r := range s.MustQuery(`select t.name as track, s.name, s.ts, s.depth, a.key, a.value_type, a.int_value, a.string_value
		from slice s join track t on s.track_id = t.id join args a on a.arg_set_id = s.arg_set_id
		where a.key in (` + strings.Join(workKeys(), ", ") + `)`) {
		v := r["string_value"]
		if n, ok := r["int_value"].(int64); ok {
			v = n
			if r["value_type"] == "uint" {
				v = uint64(n) // the processor keeps a uint in its int64 column
			}
		}
		got = append(got, fmt.Sprintf("%v | %v | %v | %v | %v | %v | %v", r["track"], r["name"], r["ts"], r["depth"], r["key"], r["value_type"], v))
	}
	diff(t, "work args", sorted(got), sorted(want))
}

// wantQueue is the queue arg of a GPU track's slices.
func wantQueue(tr timeline.Track) string {
	if tr.Kind != timeline.TrackGPUQueue && tr.Kind != timeline.TrackGPULane {
		return ""
	}
	q := fmt.Sprintf("%s queue %d.%d", tr.Queue.Device, tr.Queue.Family, tr.Queue.Index)
	if tr.Queue.Flags != "" {
		q += " (" + tr.Queue.Flags + ")"
	}
	return q
}

// checkArgs checks the slices' args as the trace processor holds them:
// frame, err_ns and queue are on exactly the slices that carry them in the
// file, with the values of their spans; and the rule of the package
// comment (a slice without one takes it from the nearest slice before it
// on its track, in time, that has it) gives every slice the frame, error
// bound and queue of its span.
func checkArgs(t *testing.T, s *tpcheck.Session, data []byte, x expected) {
	t.Helper()
	// The file: which args each slice begin carries.
	rd := newReader()
	rd.lim = Limits{}.clamp()
	if err := rd.parse(bufio.NewReader(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	trackName := map[timeline.TrackID]string{}
	for _, tr := range rd.t.Tracks {
		trackName[tr.ID] = tr.Name
	}
	var inFile []string
	for _, rt := range rd.order {
		name := trackName[rt.id]
		if rt.role == "frames-list" {
			name = "Frames"
		}
		for i := range rt.events.n {
			ev := *rt.events.at(int32(i))
			if ev.begin {
				n, _, _ := strings.Cut(rd.t.Names[ev.name], "\x00")
				inFile = append(inFile, fmt.Sprintf("%s | %s | %d | %03b", name, n, ev.ts, ev.args))
			}
		}
	}

	// What each slice should resolve to, by track, name, ts, dur, depth.
	type args struct {
		frame uint64
		err   uint32
		queue string
	}
	want := map[string][]args{}
	key := func(track, name string, ts, dur, depth int64) string {
		return fmt.Sprintf("%s | %s | %d | %d | %d", track, name, ts, dur, depth)
	}
	queues := map[string]string{}
	for _, tr := range x.tracks {
		queues[tr.Name] = wantQueue(tr)
	}
	for _, k := range x.spans {
		name, _, _ := strings.Cut(k.Name, "\x00")
		kk := key(k.trackName, name, k.Start, k.End-k.Start, int64(k.Depth))
		want[kk] = append(want[kk], args{k.Frame, k.ErrNs, queues[k.trackName]})
	}
	for _, f := range x.framesList {
		if f.End != 0 {
			kk := key("Frames", "frame", f.Start, f.End-f.Start, 0)
			want[kk] = append(want[kk], args{frame: f.ID})
		}
	}

	rows := s.MustQuery(`select t.id as track_id, t.name as track, s.name, s.ts, s.dur, s.depth,
		extract_arg(s.arg_set_id, 'debug.frame') as frame, extract_arg(s.arg_set_id, 'debug.err_ns') as err,
		extract_arg(s.arg_set_id, 'debug.queue') as queue
		from slice s join track t on s.track_id = t.id where t.name != 'framescope dropped'
		order by t.id, s.ts, s.depth, s.id`)
	var inTP []string
	var cur args
	lastTrack := int64(-1)
	for _, r := range rows {
		if id := r["track_id"].(int64); id != lastTrack {
			lastTrack, cur = id, args{}
		}
		bits := 0
		if v, ok := r["frame"].(int64); ok {
			bits |= 1
			cur.frame = uint64(v)
		}
		if v, ok := r["err"].(int64); ok {
			bits |= 2
			cur.err = uint32(v)
		}
		if v, ok := r["queue"].(string); ok {
			bits |= 4
			cur.queue = v
		}
		track, name := fmt.Sprint(r["track"]), fmt.Sprint(r["name"])
		inTP = append(inTP, fmt.Sprintf("%s | %s | %d | %03b", track, name, r["ts"], bits))
		kk := key(track, name, r["ts"].(int64), r["dur"].(int64), r["depth"].(int64))
		ws := want[kk]
		if len(ws) == 0 {
			t.Errorf("args: no span for slice %s", kk)
			continue
		}
		// Of spans alike but for their args, the one the rule picks.
		i := slices.Index(ws, cur)
		if i < 0 {
			t.Errorf("args: slice %s resolves to %+v by the rule, want %+v", kk, cur, ws[0])
			i = 0
		}
		want[kk] = slices.Delete(ws, i, i+1)
	}
	diff(t, "slices with args", sorted(inTP), sorted(inFile))
}

// row formats query rows as strings, for comparing multisets.
func rows(t *testing.T, s *tpcheck.Session, sql string, cols ...string) []string {
	t.Helper()
	var out []string
	for _, r := range s.MustQuery(sql) {
		var b strings.Builder
		for i, c := range cols {
			if i > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "%v", r[c])
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// quietStats are stats of severity info that a Framescope trace must
// still leave at zero: they mean names, clocks, slices or flows were lost.
const quietStats = `select name, value from stats where value > 0 and (name like '%interned%'
	or name like 'clock_sync_failure%' or name like 'track_event%' or name like 'flow%'
	or name like '%misplaced%' or name like '%packet_loss%' or name like '%skipped%')`

func checkProcessor(t *testing.T, s *tpcheck.Session, x expected) {
	t.Helper()
	if r := s.MustQuery(quietStats); len(r) > 0 {
		t.Errorf("the trace processor counted problems: %v", r)
	}
	// Slices, with the track they are on.
	var want []string
	for _, k := range x.spans {
		// The processor keeps strings NUL-terminated: a name stops at
		// its first NUL there (the file holds it whole; Read returns it).
		name, _, _ := strings.Cut(k.Name, "\x00")
		want = append(want, fmt.Sprintf("%s | %s | %d | %d | %d", k.trackName, name, k.Start, k.End-k.Start, k.Depth))
	}
	for _, f := range x.framesList {
		if f.End != 0 {
			want = append(want, fmt.Sprintf("Frames | frame | %d | %d | 0", f.Start, f.End-f.Start))
		}
	}
	got := rows(t, s, `select t.name as track, s.name, s.ts, s.dur, s.depth from slice s join track t on s.track_id = t.id
		where t.name != 'framescope dropped'`, "track", "name", "ts", "dur", "depth")
	diff(t, "slices", got, sorted(want))

	// Flows, from slice to slice, as the processor sees them.
	want = nil
	for _, f := range x.flows {
		a, b := f[0], f[1]
		if b.Start < a.Start {
			a, b = b, a // the processor links flows forwards in time only
		}
		want = append(want, fmt.Sprintf("%s@%d -> %s@%d", a.Name, a.Start, b.Name, b.Start))
	}
	got = nil
	for _, r := range s.MustQuery(`select so.name as a, so.ts as ats, si.name as b, si.ts as bts from flow f
		join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id`) {
		got = append(got, fmt.Sprintf("%v@%v -> %v@%v", r["a"], r["ats"], r["b"], r["bts"]))
	}
	diff(t, "flows", sorted(got), sorted(want))

	// Counter samples of timeline counter tracks.
	want = nil
	names := map[timeline.TrackID]string{}
	for _, tr := range x.tracks {
		names[tr.ID] = tr.Name
	}
	for _, smp := range x.samples {
		want = append(want, fmt.Sprintf("%s | %d | %v", names[smp.Track], smp.Time, smp.Value))
	}
	workTracks := []string{"''"}
	for _, w := range x.workTracks {
		name, _, _ := strings.Cut(w, " | ")
		workTracks = append(workTracks, "'"+strings.ReplaceAll(name, "'", "''")+"'")
	}
	got = rows(t, s, `select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id
		where t.name not like 'framescope dropped%' and t.name not like 'framescope ledger%' and t.name not like 'clock %'
		and t.name != 'framescope batches'
		and t.name not in (`+strings.Join(workTracks, ", ")+`)`, "name", "ts", "value")
	diff(t, "counters", got, sorted(want))

	// Work counters: per GPU queue and frame, the sums of its outermost
	// zones' counts, at their earliest start.
	got = rows(t, s, `select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id
		where t.name in (`+strings.Join(workTracks, ", ")+`)`, "name", "ts", "value")
	diff(t, "work counters", got, sorted(slices.Clone(x.workCounters)))

	// Calibrations: three counters under each queue track.
	want = nil
	for _, c := range x.calibs {
		q := names[c.Track]
		want = append(want, fmt.Sprintf("%s | clock error bound | %d | %v", q, c.Time, c.ErrNs),
			fmt.Sprintf("%s | clock drift | %d | %v", q, c.Time, c.DriftPPM),
			fmt.Sprintf("%s | clock samples | %d | %v", q, c.Time, float64(c.Samples)))
	}
	got = rows(t, s, `select p.name as queue, t.name, c.ts, c.value from counter c join track t on c.track_id = t.id
		join track p on t.parent_id = p.id where t.name like 'clock %'`, "queue", "name", "ts", "value")
	diff(t, "calibrations", got, sorted(want))

	// Drops: the last value of each drop counter.
	want = nil
	for i, v := range dropValues(x.drops, 0) {
		if v != 0 && dropFields[i] != "invalid" {
			want = append(want, fmt.Sprintf("framescope dropped: %s | %v", dropFields[i], float64(v)))
		}
	}
	got = rows(t, s, `select t.name, c.value from counter c join counter_track t on c.track_id = t.id
		where t.name like 'framescope dropped:%' and t.name != 'framescope dropped: invalid'
		and c.ts = (select max(ts) from counter c2 where c2.track_id = c.track_id)`, "name", "value")
	diff(t, "drops", got, sorted(want))

	// The ledger: the last value of each of its counters, under its group.
	want = nil
	for i, v := range ledgerValues(x.ledger) {
		if v != 0 {
			want = append(want, fmt.Sprintf("framescope ledger | framescope ledger: %s | %v", books.LedgerKey(i), float64(v)))
		}
	}
	got = rows(t, s, `select p.name as grp, t.name, c.value from counter c join track t on c.track_id = t.id
		join track p on t.parent_id = p.id where t.name like 'framescope ledger:%'
		and c.ts = (select max(ts) from counter c2 where c2.track_id = c.track_id)`, "grp", "name", "value")
	diff(t, "ledger", got, sorted(want))

	// Batch ends: the batches counter counts them, under the process.
	want = nil
	for i := range x.batches {
		want = append(want, fmt.Sprintf("framescope batches | %v", float64(i+1)))
	}
	got = rows(t, s, `select t.name, c.value from counter c join counter_track t on c.track_id = t.id
		where t.name = 'framescope batches' order by c.ts, c.value`, "name", "value")
	diff(t, "batch ends", got, sorted(want))

	// Track layout: queues under "GPU", lanes under their queue, in order.
	want = nil
	for _, tr := range x.tracks {
		switch tr.Kind {
		case timeline.TrackGPUQueue:
			want = append(want, fmt.Sprintf("%s | GPU", tr.Name))
		case timeline.TrackGPULane:
			want = append(want, fmt.Sprintf("%s | %s", tr.Name, names[tr.Parent]))
		}
	}
	want = append(want, x.workTracks...)
	got = rows(t, s, `select t.name, p.name as parent from track t join track p on t.parent_id = p.id
		where t.name not like 'clock %' and p.name != 'framescope ledger'`, "name", "parent")
	diff(t, "track parents", got, sorted(want))

	if x.process.PID != 0 {
		got = rows(t, s, "select pid, name from process where pid = "+fmt.Sprint(x.process.PID), "pid", "name")
		diff(t, "process", got, []string{fmt.Sprintf("%d | %s", x.process.PID, x.process.Name)})
	}
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s: the trace processor holds %d, want %d", what, len(got), len(want))
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("  first difference at %d:\n   got %.300q\n  want %.300q", i, g, w)
			return
		}
	}
}
