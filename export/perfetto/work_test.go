package perfetto

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/encoding/protowire"
)

// ann is a debug annotation of a hand-made slice: by literal name, an
// unsigned or a string value.
type ann struct {
	name string
	u    uint64
	s    string
	str  bool
	// i and d, where set (isInt, isDouble), make an int_value or a
	// double_value annotation.
	i               int64
	d               float64
	isInt, isDouble bool
}

// workSlices builds a trace of one GPU queue track and, for each list of
// annotations, a slice 10 ns long carrying them, one after another.
func workSlices(anns ...[]ann) []byte {
	h := new(handTrace).track(1, "q", `framescope kind=gpu-queue id=1 order=0 lane=0 family=0 index=0 flags="graphics" device="d"`)
	for i, as := range anns {
		e := protowire.AppendTag(nil, fTEType, protowire.VarintType)
		e = protowire.AppendVarint(e, typeSliceBegin)
		e = protowire.AppendTag(e, fTETrackUuid, protowire.VarintType)
		e = protowire.AppendVarint(e, 1)
		e = protowire.AppendTag(e, fTEName, protowire.BytesType)
		e = protowire.AppendString(e, "z")
		for _, a := range as {
			d := protowire.AppendTag(nil, fDAName, protowire.BytesType)
			d = protowire.AppendString(d, a.name)
			switch {
			case a.str:
				d = protowire.AppendTag(d, fDAString, protowire.BytesType)
				d = protowire.AppendString(d, a.s)
			case a.isInt:
				d = protowire.AppendTag(d, fDAInt, protowire.VarintType)
				d = protowire.AppendVarint(d, uint64(a.i))
			case a.isDouble:
				d = protowire.AppendTag(d, fDADouble, protowire.Fixed64Type)
				d = protowire.AppendFixed64(d, math.Float64bits(a.d))
			default:
				d = protowire.AppendTag(d, fDAUint, protowire.VarintType)
				d = protowire.AppendVarint(d, a.u)
			}
			e = protowire.AppendTag(e, fTEAnnotations, protowire.BytesType)
			e = protowire.AppendBytes(e, d)
		}
		p := protowire.AppendTag(nil, fPktTimestamp, protowire.VarintType)
		p = protowire.AppendVarint(p, uint64(100+20*i))
		p = protowire.AppendTag(p, fPktTrackEvent, protowire.BytesType)
		h.packet(protowire.AppendBytes(p, e))
		h.event(1, uint64(110+20*i), typeSliceEnd, 0)
	}
	return h.b
}

// TestReadWork: Read rebuilds a slice's Work from its annotations, and
// refuses work annotations that make no sense with an error saying which.
func TestReadWork(t *testing.T) {
	tr, err := readBytes(workSlices(
		[]ann{{name: "fragment_shader_invocations", u: 1<<63 + 5}, {name: "vertex_shader_invocations", u: 0}},
		[]ann{{name: "work_missing", s: "spent", str: true}, {name: "work_stats", s: "clipping_primitives,compute_shader_invocations", str: true}},
		[]ann{{name: "work_stats", s: "", str: true}},
		[]ann{{name: "frame", u: 3}},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []*timeline.Work{
		{Stats: timeline.FragmentShaderInvocations | timeline.VertexShaderInvocations, Count: [timeline.NumPipelineStats]uint64{7: 1<<63 + 5}},
		{Stats: timeline.ClippingPrimitives | timeline.ComputeShaderInvocations, Missing: timeline.WorkSpent},
		{},
		nil,
	}
	if len(tr.Spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(tr.Spans), len(want))
	}
	for i, s := range tr.Spans {
		if (s.Work == nil) != (want[i] == nil) || s.Work != nil && *s.Work != *want[i] {
			t.Errorf("span %d: work %+v, want %+v", i, s.Work, want[i])
		}
	}

	for _, tc := range []struct {
		name string
		anns []ann
		want string
	}{
		{"unknown reason", []ann{{name: "work_missing", s: "lost", str: true}}, `"work_missing" is "lost", not a reason a zone has no counts`},
		{"unknown statistic", []ann{{name: "work_missing", s: "spent", str: true}, {name: "work_stats", s: "pixels", str: true}}, `"pixels" is no pipeline statistic`},
		{"counts and a reason", []ann{{name: "clipping_primitives", u: 4}, {name: "work_missing", s: "frames", str: true}}, `"work_missing" with counts (of "clipping_primitives")`},
		// Issue 38: each was read, as a count of 2^64-1, as "counted, 0",
		// or dropped; the Chrome reader refuses each with these words
		// (TestReadBadWork there).
		{"negative count", []ann{{name: "fragment_shader_invocations", i: -1, isInt: true}}, `"fragment_shader_invocations" is -1, not a count`},
		{"fractional count", []ann{{name: "fragment_shader_invocations", d: 1.5, isDouble: true}}, `"fragment_shader_invocations" is 1.5, not a count`},
		{"reason as an integer", []ann{{name: "work_missing", u: 3}}, `"work_missing" is 3, not a reason`},
		{"counted as a reason", []ann{{name: "work_missing", s: "counted", str: true}}, `"work_missing" is "counted", not a reason`},
		{"statistics listed alone", []ann{{name: "work_stats", s: "fragment_shader_invocations", str: true}}, `"work_stats" says "fragment_shader_invocations", but the counts are of ""`},
		{"statistics listed against the counts", []ann{{name: "fragment_shader_invocations", u: 5}, {name: "work_stats", s: "clipping_primitives,fragment_shader_invocations", str: true}}, `"work_stats" says "clipping_primitives+fragment_shader_invocations", but the counts are of "fragment_shader_invocations"`},
		{"statistics list as an integer", []ann{{name: "work_stats", u: 1}}, `"work_stats" is 1, not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := readBytes(workSlices(tc.anns))
			if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want a corrupt trace error saying %q", tr, err, tc.want)
			}
		})
	}
}

// TestReadWorkMemory: a slice with all eleven counts costs Read at most
// 200 bytes more than one without, as Read's comment promises.
func TestReadWorkMemory(t *testing.T) {
	if unsafe.Sizeof(rev{}) != 32 {
		t.Errorf("a rev takes %d bytes, want 32", unsafe.Sizeof(rev{}))
	}
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	w := &timeline.Work{Stats: timeline.AllPipelineStats}
	for i := range w.Count {
		w.Count[i] = 1 << 62
	}
	tr := &timeline.Trace{Names: names("z"), Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q"}}}
	for i := range n {
		tr.Spans = append(tr.Spans, timeline.Span{Track: 1, Name: 1, Start: int64(10 * i), End: int64(10*i + 5), Work: w})
	}
	var buf bytes.Buffer
	if err := Write(&buf, tr); err != nil {
		t.Fatal(err)
	}
	var got *timeline.Trace
	var err error
	alloc := allocated(func() { got, err = Read(bytes.NewReader(buf.Bytes())) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != n || *got.Spans[n-1].Work != *w {
		t.Fatalf("read back %d spans, the last with work %+v", len(got.Spans), got.Spans[n-1].Work)
	}
	per := float64(alloc) / float64(n)
	t.Logf("%d bytes in, %d slices with work: %.0f bytes allocated a slice", buf.Len(), n, per)
	if per > 400 {
		t.Errorf("%.0f bytes allocated a slice with work, want at most 400", per)
	}
}

// TestInvalidWork: a Work with a reason out of range or bits past the
// last statistic is dropped and counted; its span is written without it.
func TestInvalidWork(t *testing.T) {
	good := &timeline.Work{Stats: timeline.ClippingInvocations, Count: [timeline.NumPipelineStats]uint64{5: 9}}
	b := &timeline.Trace{
		Names:  names("z"),
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q"}},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 10, End: 20, Work: &timeline.Work{Stats: timeline.ClippingInvocations, Missing: timeline.NumWorkMissing}},
			{Track: 1, Name: 1, Start: 30, End: 40, Work: &timeline.Work{Stats: 1 << 20}},
			{Track: 1, Name: 1, Start: 50, End: 60, Work: good},
		},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := w.Stats().Invalid; got != 2 {
		t.Errorf("Stats.Invalid = %d, want 2", got)
	}
	tr, err := readBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Spans) != 3 || tr.Spans[0].Work != nil || tr.Spans[1].Work != nil || tr.Spans[2].Work == nil || *tr.Spans[2].Work != *good {
		t.Errorf("read back %+v", tr.Spans)
	}
}

// TestNoWorkNoWorkNames: the work annotation names are interned only on
// sequences that write work, once on each: a trace without work holds
// none of them.
func TestNoWorkNoWorkNames(t *testing.T) {
	// The interned entry of work_missing's name.
	entry := protowire.AppendTag(nil, fInternIID, protowire.VarintType)
	entry = protowire.AppendVarint(entry, uint64(annWorkMissing))
	entry = protowire.AppendTag(entry, fInternName, protowire.BytesType)
	entry = protowire.AppendString(entry, keyWorkMissing)
	for _, c := range cases() {
		var buf bytes.Buffer
		w := NewWriter(&buf, Options{})
		hasWork := false
		for _, b := range c.batches {
			w.Write(b)
			for _, s := range b.Spans {
				hasWork = hasWork || s.Work != nil
			}
		}
		w.Close()
		n := bytes.Count(buf.Bytes(), entry)
		switch {
		case hasWork && (n == 0 || uint64(n) > w.Stats().Sequences):
			t.Errorf("%s: the work names interned %d times on %d sequences", c.name, n, w.Stats().Sequences)
		case !hasWork && (n > 0 || bytes.Contains(buf.Bytes(), []byte(timeline.StatKey(0)))):
			t.Errorf("%s: work names in a trace without work", c.name)
		}
	}
}

// workBatches are frameBatches whose GPU zones count work.
func workBatches(n int) []*timeline.Trace {
	bs := frameBatches(n)
	w := &timeline.Work{Stats: timeline.GraphicsPipelineStats}
	for i := range w.Count {
		w.Count[i] = uint64(1000 * i)
	}
	for _, b := range bs {
		for i := range b.Spans {
			switch b.Spans[i].Track {
			case benchspans.GraphicsQueue, benchspans.GraphicsLane, benchspans.ComputeQueue:
				b.Spans[i].Work = w
			}
		}
	}
	return bs
}

// TestWriterSteadyStateAllocsWork: with work, render stages and GPU
// counters, the writer still allocates nothing per batch once its
// buffers have grown.
func TestWriterSteadyStateAllocsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in long mode")
	}
	batches := workBatches(64)
	first, last := span(batches)
	w := NewWriter(io.Discard, Options{RenderStages: true})
	for _, b := range batches {
		w.Write(b)
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		if i%len(batches) == 0 {
			shift(batches, last-first+16_666_667)
		}
		if err := w.Write(batches[i%len(batches)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("Write allocates %v times a batch in steady state, want 0", allocs)
	}
}

// TestReadAdvancesIncrementalClock: a packet with a timestamp on the
// sequence's incremental clock moves that clock on even when it holds no
// track event (another data source's packet), as in the trace processor.
func TestReadAdvancesIncrementalClock(t *testing.T) {
	pkt := func(fields ...[]byte) []byte {
		var p []byte
		for _, f := range fields {
			p = append(p, f...)
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, fTracePacket, protowire.BytesType), p)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	msg := func(num protowire.Number, body ...[]byte) []byte {
		var b []byte
		for _, x := range body {
			b = append(b, x...)
		}
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
	}
	var data []byte
	data = append(data, new(handTrace).track(5, "cpu", "framescope kind=cpu id=1").b...)
	data = append(data, pkt(varint(fPktSequenceID, 1), varint(fPktSequenceFlags, seqIncrementalStateCleared),
		msg(fPktClockSnapshot, msg(fSnapClocks, varint(fClockID, clockIncremental), varint(fClockTimestamp, 1000), varint(fClockIncremental, 1))),
		msg(fPktDefaults, varint(fDefTimestampClockID, clockIncremental)))...)
	// A packet of another data source, 500 ns on.
	data = append(data, pkt(varint(fPktSequenceID, 1), varint(fPktTimestamp, 500), msg(fPktGpuRenderStage, varint(fRSEventID, 1)))...)
	// A packet on the MONOTONIC clock itself leaves it as it is.
	data = append(data, pkt(varint(fPktSequenceID, 1), varint(fPktTimestamp, 99), varint(fPktTimestampClockID, clockMonotonic))...)
	ev := func(typ uint64) []byte {
		body := append(varint(fTEType, typ), varint(fTETrackUuid, 5)...)
		if typ == typeSliceBegin {
			body = append(body, msg(fTEName, []byte("s"))...)
		}
		return msg(fPktTrackEvent, body)
	}
	data = append(data, pkt(varint(fPktSequenceID, 1), varint(fPktTimestamp, 100), ev(typeSliceBegin))...)
	data = append(data, pkt(varint(fPktSequenceID, 1), varint(fPktTimestamp, 10), ev(typeSliceEnd))...)
	tr, err := readBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Spans) != 1 || tr.Spans[0].Start != 1600 || tr.Spans[0].End != 1610 {
		t.Errorf("spans %+v, want one at [1600, 1610]", tr.Spans)
	}
}
