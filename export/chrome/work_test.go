package chrome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// TestSliceArgsKeys: the reader's work fields are the statistics' keys,
// in bit order, then work_missing and work_stats.
func TestSliceArgsKeys(t *testing.T) {
	var a sliceArgs
	typ := reflect.TypeFor[sliceArgs]()
	fields := a.stats()
	for i, f := range fields {
		found := false
		for j := range typ.NumField() {
			sf := typ.Field(j)
			if reflect.ValueOf(&a).Elem().Field(j).Addr().Interface() == any(f) {
				found = true
				if tag := sf.Tag.Get("json"); tag != timeline.StatKey(i) {
					t.Errorf("statistic %d: field %s has key %q, want %q", i, sf.Name, tag, timeline.StatKey(i))
				}
			}
		}
		if !found {
			t.Errorf("statistic %d: no field", i)
		}
	}
	if f, _ := typ.FieldByName("WorkMissing"); f.Tag.Get("json") != argWorkMissing {
		t.Errorf("WorkMissing has key %q", f.Tag.Get("json"))
	}
	if f, _ := typ.FieldByName("WorkStats"); f.Tag.Get("json") != argWorkStats {
		t.Errorf("WorkStats has key %q", f.Tag.Get("json"))
	}
}

// workTrace writes tracecases.WorkTrace whole and returns the JSON.
func workJSON(t *testing.T, tr *timeline.Trace) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", buf.Bytes())
	}
	return buf.Bytes()
}

// TestWorkArgsWritten: the args of the work trace's zones are exactly
// those the package doc gives: counts as integer literals in bit order
// (the one past 2^53 whole), work_missing and work_stats for a zone
// without counts, nothing for a zone without Work.
func TestWorkArgsWritten(t *testing.T) {
	out := string(workJSON(t, tracecases.WorkTrace()))
	gfx := "input_assembly_vertices+vertex_shader_invocations+clipping_primitives+fragment_shader_invocations+compute_shader_invocations"
	for _, want := range []string{
		`"name":"frame","args":{"frame":1,"queue":"NVIDIA H200 queue 0.0 (graphics+compute)","err_ns":1500,` +
			`"input_assembly_vertices":18,"vertex_shader_invocations":18,"clipping_primitives":6,"fragment_shader_invocations":12582912,"compute_shader_invocations":0}}`,
		`"name":"cull","args":{"frame":1,"queue":"NVIDIA H200 queue 2.0 (compute)","err_ns":1500,"input_assembly_vertices":0,"vertex_shader_invocations":0,` +
			`"clipping_primitives":0,"fragment_shader_invocations":0,"compute_shader_invocations":1152921504606846979}}`,
		`"name":"post","args":{"frame":1,"queue":"NVIDIA H200 queue 2.0 (compute)","err_ns":1500}}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	reasons := 0
	for _, s := range tracecases.WorkTrace().Spans {
		if s.Work == nil || s.Work.Missing == timeline.WorkCounted {
			continue
		}
		reasons++
		want := `"err_ns":1500,"work_missing":"` + s.Work.Missing.String() + `","work_stats":"` + gfx + `"}}`
		if strings.Count(out, want) != 1 {
			t.Errorf("%s: want one zone with %s", s.Work.Missing, want)
		}
	}
	if reasons < 6 {
		t.Errorf("the work trace has %d zones without counts, want one for each reason", reasons)
	}
	// Counts are never written as floats, which lose 1<<60+3.
	if strings.Contains(out, "1.152921504606847e+18") {
		t.Errorf("a count written as a float")
	}
}

// TestWorkRoundTrip: Work comes back exactly, every count (0, 2^53+1,
// 2^64-1) and reason, a counted zone of no statistic, all statistics, on
// B slices and on X slices of another writer, and a slice without work
// keeps none.
func TestWorkRoundTrip(t *testing.T) {
	q := timeline.Queue{Device: "gpu", Flags: "graphics"}
	tr := &timeline.Trace{Names: []string{"", "z"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q", Queue: q}}}
	var works []*timeline.Work
	all := &timeline.Work{Stats: timeline.AllPipelineStats}
	for i := range timeline.NumPipelineStats {
		all.Count[i] = math.MaxUint64 - uint64(i)
	}
	works = append(works, all,
		&timeline.Work{Stats: timeline.FragmentShaderInvocations, Count: [11]uint64{7: 1<<53 + 1}},
		&timeline.Work{Stats: timeline.ComputeShaderInvocations},
		&timeline.Work{}, // counted, of no statistic
		nil)
	for m := timeline.WorkRenderPass; m < timeline.NumWorkMissing; m++ {
		works = append(works, &timeline.Work{Stats: timeline.GraphicsPipelineStats, Missing: m}, &timeline.Work{Missing: m})
	}
	for i, w := range works {
		tr.Spans = append(tr.Spans, timeline.Span{Track: 1, Name: 1, Start: int64(100 * i), End: int64(100*i + 50), Work: w})
	}
	got, err := Read(bytes.NewReader(workJSON(t, tr)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != len(works) {
		t.Fatalf("%d spans read, want %d", len(got.Spans), len(works))
	}
	for i, s := range got.Spans {
		if !reflect.DeepEqual(s.Work, works[i]) {
			t.Errorf("span %d: work %+v, want %+v", i, s.Work, works[i])
		}
	}

	// Another writer's X events, each with its own args.
	got, err = Read(strings.NewReader(`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"a","args":{"fragment_shader_invocations":18446744073709551615,"note":"x"}},
		{"ph":"X","pid":1,"tid":1,"ts":10,"dur":5,"name":"b","args":{"work_missing":"spent","work_stats":"compute_shader_invocations"}},
		{"ph":"X","pid":1,"tid":1,"ts":20,"dur":5,"name":"c","args":{"frame":3}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []*timeline.Work{
		{Stats: timeline.FragmentShaderInvocations, Count: [11]uint64{7: math.MaxUint64}},
		{Stats: timeline.ComputeShaderInvocations, Missing: timeline.WorkSpent},
		nil,
	}
	for i, s := range got.Spans {
		if !reflect.DeepEqual(s.Work, want[i]) {
			t.Errorf("X slice %d: work %+v, want %+v", i, s.Work, want[i])
		}
	}
}

// TestWorkKeyFails: the round-trip comparison (canon) tells apart traces
// whose work differs in any way: a Work lost, a count off by one, another
// reason, other statistics, a count outside Stats.
func TestWorkKeyFails(t *testing.T) {
	base := canon(tracecases.WorkTrace())
	for _, tc := range []struct {
		name   string
		change func(s []timeline.Span)
	}{
		{"work lost", func(s []timeline.Span) { s[1].Work = nil }},
		{"work made up", func(s []timeline.Span) { s[10].Work = &timeline.Work{} }},
		{"count past 2^53 off by one", func(s []timeline.Span) { s[9].Work.Count[10]-- }},
		{"count off by one", func(s []timeline.Span) { s[0].Work.Count[7]++ }},
		{"reason", func(s []timeline.Span) { s[3].Work.Missing = timeline.WorkSpent }},
		{"stats", func(s []timeline.Span) { s[3].Work.Stats &^= timeline.ClippingPrimitives }},
		{"count outside stats", func(s []timeline.Span) { s[1].Work.Count[1] = 1 }},
	} {
		tr := tracecases.WorkTrace()
		tc.change(tr.Spans)
		if got := canon(tr); fmt.Sprintf("%+v", got) == fmt.Sprintf("%+v", base) {
			t.Errorf("%s: canon does not tell the traces apart", tc.name)
		}
	}
}

// TestReadBadWork: work args that break the format fail Read with an
// error naming the event and what is wrong; args of the wrong type
// elsewhere, or args that are not an object, leave the work alone.
func TestReadBadWork(t *testing.T) {
	slice := func(args string) string {
		return `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"a"},{"ph":"B","pid":1,"tid":1,"ts":5,"name":"z","args":` + args + `},{"ph":"E","pid":1,"tid":1,"ts":9}]`
	}
	for _, tc := range []struct{ name, args, want string }{
		{"negative", `{"vertex_shader_invocations":-1}`, `event 1 (ph "B"): args: "vertex_shader_invocations" is -1, not a count`},
		{"fraction", `{"vertex_shader_invocations":1.5}`, `"vertex_shader_invocations" is 1.5, not a count`},
		{"exponent", `{"clipping_invocations":1e3}`, `"clipping_invocations" is 1e3, not a count`},
		{"float past 2^53", `{"fragment_shader_invocations":1.152921504606847e+18}`, `is 1.152921504606847e+18, not a count`},
		{"string", `{"fragment_shader_invocations":"5"}`, `"fragment_shader_invocations" is "5", not a count`},
		{"null", `{"fragment_shader_invocations":null}`, `is null, not a count`},
		{"past 2^64", `{"fragment_shader_invocations":18446744073709551616}`, `is 18446744073709551616, not a count`},
		{"long", `{"fragment_shader_invocations":` + strings.Repeat("9", 100000) + `}`, `is 9999999999999999999999999999999999999999999999999999999999999999..., not a count`},
		{"unknown reason", `{"work_missing":"lost","work_stats":""}`, `"work_missing" is "lost", not a reason a zone has no counts ("render_pass", "elsewhere", "spent", "frames", "unavailable", "misnested"`},
		{"counted as reason", `{"work_missing":"counted"}`, `"work_missing" is "counted", not a reason`},
		{"reason a number", `{"work_missing":3}`, `"work_missing" is 3, not a reason`},
		{"unknown stat", `{"work_missing":"spent","work_stats":"vertex_shader_invocations+mesh_shader_invocations"}`, `"work_stats": timeline: "mesh_shader_invocations" is no pipeline statistic`},
		{"long unknown stat", `{"work_missing":"spent","work_stats":"` + strings.Repeat("x", 100000) + `"}`, `: "` + strings.Repeat("x", 64) + `..." is no pipeline statistic`},
		{"stats a number", `{"work_stats":7}`, `"work_stats" is 7, not a string`},
		{"reason with counts", `{"work_missing":"spent","fragment_shader_invocations":5}`, `"work_missing" with counts (of "fragment_shader_invocations")`},
		{"stats other than counted", `{"work_stats":"clipping_primitives","fragment_shader_invocations":5}`, `"work_stats" says "clipping_primitives", but the counts are of "fragment_shader_invocations"`},
		{"stats without counts", `{"work_stats":"clipping_primitives"}`, `"work_stats" says "clipping_primitives", but the counts are of ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(slice(tc.args)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
	for _, tc := range []struct {
		name, args string
		frame      uint64
		work       *timeline.Work
	}{
		{"frame of the wrong type", `{"frame":"x","err_ns":5,"clipping_primitives":4}`, 0, &timeline.Work{Stats: timeline.ClippingPrimitives, Count: [11]uint64{6: 4}}},
		{"args an array", `[{"clipping_primitives":4}]`, 0, nil},
		{"args a string", `"clipping_primitives"`, 0, nil},
		{"other args", `{"frame":2,"clipping":4,"work":{"clipping_primitives":"x"}}`, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(slice(tc.args)))
			if err != nil {
				t.Fatal(err)
			}
			s := got.Spans[1]
			if s.Frame != tc.frame || !reflect.DeepEqual(s.Work, tc.work) {
				t.Errorf("frame %d, work %+v; want %d, %+v", s.Frame, s.Work, tc.frame, tc.work)
			}
		})
	}
}

// TestWriteInvalidWork: a Work that breaks the model (a reason out of
// range, bits past the last statistic) is not written, and is counted:
// in Invalid.Work and the running drops counter, which the reader does
// not count again as dropped spans once the writer closed.
func TestWriteInvalidWork(t *testing.T) {
	tr := tracecases.WorkTrace()
	tr.Spans[1].Work = &timeline.Work{Stats: timeline.VertexShaderInvocations, Missing: timeline.NumWorkMissing}
	tr.Spans[2].Work = &timeline.Work{Stats: 1 << 20, Count: [11]uint64{1}}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteBatch(tr); err != nil {
		t.Fatal(err)
	}
	// Before Close only the running counter says what was dropped: the
	// trace's 6 zones without counts and the 2 works refused.
	if got, err := Read(bytes.NewReader(buf.Bytes())); err != nil || got.Drops.Spans != 6+2 {
		t.Fatalf("before Close: %v, drops %+v; want 8, all that the counter counts", err, got.Drops)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Invalid() != (Invalid{Work: 2}) {
		t.Errorf("invalid %+v, want 2 works", w.Invalid())
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Drops != tr.Drops {
		t.Errorf("drops %+v, want the trace's %+v", got.Drops, tr.Drops)
	}
	for i, s := range got.Spans {
		if s.Name == 2 || s.Name == 3 {
			if s.Work != nil {
				t.Errorf("span %d: work %+v, want none", i, s.Work)
			}
		}
	}
}

// TestReadWorkLinear: reading work args costs memory in proportion to
// the input: slices with work, eight times as many allocate eight times
// as much, and one huge work_stats or count a bounded multiple of its
// bytes.
func TestReadWorkLinear(t *testing.T) {
	alloc := func(in []byte) (uint64, error) {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, err := Read(bytes.NewReader(in))
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc, err
	}
	zones := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("[")
		for i := range n {
			fmt.Fprintf(&b, `{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"z","args":{"fragment_shader_invocations":%d,"vertex_shader_invocations":3}},`, 2*i, i)
			fmt.Fprintf(&b, `{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"m","args":{"work_missing":"spent","work_stats":"vertex_shader_invocations+fragment_shader_invocations"}},`, 2*i+1)
		}
		b.WriteString(`{"ph":"i"}]`)
		return b.Bytes()
	}
	small, large := zones(5000), zones(40000)
	as, err := alloc(small)
	if err != nil {
		t.Fatal(err)
	}
	al, err := alloc(large)
	if err != nil {
		t.Fatal(err)
	}
	// Slices without work allocate about 4.5 bytes a byte of input.
	if per := float64(al) / float64(len(large)); per > 8 || float64(al) > 10*float64(as) {
		t.Errorf("%d bytes of input allocate %d, %d allocate %d (%.1f a byte): want at most 8 a byte, linear", len(small), as, len(large), al, per)
	}
	huge := 16 << 20
	for _, in := range []string{
		`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"z","args":{"work_missing":"spent","work_stats":"` + strings.Repeat("+", huge) + `"}}]`,
		`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"z","args":{"work_missing":"spent","work_stats":"` + strings.Repeat("clipping_primitives+", huge/20) + `"}}]`,
		`[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"z","args":{"clipping_primitives":` + strings.Repeat("7", huge) + `}}]`,
	} {
		a, _ := alloc([]byte(in))
		if a > uint64(8*huge) {
			t.Errorf("%.60s...: %d MB of input allocate %d MB", in, huge>>20, a>>20)
		}
	}
}
