package perfetto

import (
	"bytes"
	"cmp"
	"runtime"
	"slices"
	"testing"
	"time"

	pb "github.com/framescope/framescope/internal/perfettopb"
	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/timeline"
	"google.golang.org/protobuf/proto"
)

// frameBatches returns n one-frame batches of benchspans' timeline, each
// with its own slices.
func frameBatches(n int) []*timeline.Trace {
	g := benchspans.New(1)
	out := make([]*timeline.Trace, n)
	for i := range out {
		out[i] = g.Batch(&timeline.Trace{Process: timeline.Process{PID: 4242, Name: "triangle"}, Names: benchspans.Names, Tracks: benchspans.Tracks()})
		g.Frame(out[i])
	}
	return out
}

// shift moves every time in the batches later by d, so that a benchmark
// can write them again as new frames.
func shift(batches []*timeline.Trace, d int64) {
	for _, b := range batches {
		for i := range b.Spans {
			b.Spans[i].Start += d
			b.Spans[i].End += d
		}
		for i := range b.Frames {
			b.Frames[i].Start += d
			b.Frames[i].End += d
		}
		for i := range b.Samples {
			b.Samples[i].Time += d
		}
		for i := range b.Calibrations {
			b.Calibrations[i].Time += d
		}
	}
}

func span(batches []*timeline.Trace) (first, last int64) {
	return batches[0].Frames[0].Start, batches[len(batches)-1].Frames[0].End
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkPerfettoWriter streams one-frame batches (about 60 nested CPU
// and GPU spans each, with flows, a counter and a calibration) through a
// Writer, and reports per span: ns, bytes of trace, allocations, and how
// many times faster it is than building the same packets as generated
// structs and calling proto.Marshal (measured in the same run).
func BenchmarkPerfettoWriter(b *testing.B) {
	batches := frameBatches(256)
	first, last := span(batches)
	out := &countingWriter{}
	w := NewWriter(out, Options{})
	// Warm up: the first pass grows the buffers and interns the names.
	for _, bt := range batches {
		w.Write(bt)
	}
	shift(batches, last-first+16_666_667)
	out.n = 0
	spans := 0
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(batches)
		if k == 0 && i > 0 {
			b.StopTimer()
			shift(batches, last-first+16_666_667)
			b.StartTimer()
		}
		if err := w.Write(batches[k]); err != nil {
			b.Fatal(err)
		}
		spans += len(batches[k].Spans)
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	el := b.Elapsed()
	b.ReportMetric(float64(el.Nanoseconds())/float64(spans), "ns/span")
	b.ReportMetric(float64(out.n)/float64(spans), "bytes/span")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(spans), "allocs/span")

	// The peer: the same batches through proto.Marshal, on one sequence
	// as the Writer uses, times moving on as in the loop above.
	mspans := 0
	var m marshaler
	var marshalTime time.Duration
	for marshalTime < el/4+10*time.Millisecond {
		shift(batches, last-first+16_666_667)
		start := time.Now()
		for _, bt := range batches {
			if _, err := m.marshal(bt); err != nil {
				b.Fatal(err)
			}
			mspans += len(bt.Spans)
		}
		marshalTime += time.Since(start)
	}
	marshalNs := float64(marshalTime.Nanoseconds()) / float64(mspans)
	b.ReportMetric(marshalNs/(float64(el.Nanoseconds())/float64(spans)), "x-faster-than-marshal")
}

// BenchmarkPerfettoProtoMarshal encodes the same batches by filling the
// generated structs of package perfettopb and calling proto.Marshal.
func BenchmarkPerfettoProtoMarshal(b *testing.B) {
	batches := frameBatches(64)
	first, last := span(batches)
	spans, size := 0, 0
	var m marshaler
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(batches) == 0 && i > 0 {
			b.StopTimer()
			shift(batches, last-first+16_666_667)
			b.StartTimer()
		}
		bt := batches[i%len(batches)]
		out, err := m.marshal(bt)
		if err != nil {
			b.Fatal(err)
		}
		spans += len(bt.Spans)
		size += len(out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
	b.ReportMetric(float64(size)/float64(spans), "bytes/span")
}

// marshaler is the straightforward encoder the Writer is measured
// against, used as a careful user of the generated structs would: one
// packet sequence, started once, names interned on it once, timestamps
// incremental, and per slice what the Writer writes (interned name and
// category, track, frame, err_ns and queue args where they change on the
// track, flows, found through maps built once per batch), and counters.
type marshaler struct {
	started  bool
	last     int64
	interned []bool
	args     map[timeline.TrackID]*marshalArgs
	queues   map[timeline.TrackID]string
	from, to map[int][]uint64 // per batch: span -> flow ids
	flowID   uint64
}

type marshalArgs struct {
	frame uint64
	err   uint32
	queue bool
}

func (m *marshaler) marshal(bt *timeline.Trace) ([]byte, error) {
	const seq = 1
	tr := &pb.Trace{}
	if !m.started {
		m.started = true
		m.args = map[timeline.TrackID]*marshalArgs{}
		m.queues = map[timeline.TrackID]string{}
		m.from, m.to = map[int][]uint64{}, map[int][]uint64{}
		if len(bt.Spans) > 0 {
			m.last = bt.Spans[0].Start
		}
		in := &pb.InternedData{}
		for iid := 1; iid < len(categoryNames); iid++ {
			in.EventCategories = append(in.EventCategories, &pb.EventCategory{Iid: proto.Uint64(uint64(iid)), Name: proto.String(categoryNames[iid])})
		}
		for iid := 1; iid < len(annotationNames); iid++ {
			in.DebugAnnotationNames = append(in.DebugAnnotationNames, &pb.DebugAnnotationName{Iid: proto.Uint64(uint64(iid)), Name: proto.String(annotationNames[iid])})
		}
		tr.Packet = append(tr.Packet, &pb.TracePacket{
			TrustedPacketSequenceId: proto.Uint32(seq),
			SequenceFlags:           proto.Uint32(1),
			Timestamp:               proto.Uint64(uint64(m.last)),
			TimestampClockId:        proto.Uint32(clockMonotonic),
			ClockSnapshot: &pb.ClockSnapshot{Clocks: []*pb.ClockSnapshot_Clock{
				{ClockId: proto.Uint32(clockMonotonic), Timestamp: proto.Uint64(uint64(m.last))},
				{ClockId: proto.Uint32(clockIncremental), Timestamp: proto.Uint64(uint64(m.last)), IsIncremental: proto.Bool(true)},
			}},
			TracePacketDefaults: &pb.TracePacketDefaults{TimestampClockId: proto.Uint32(clockIncremental)},
			InternedData:        in,
		})
		for _, t := range bt.Tracks {
			if t.Kind == timeline.TrackGPUQueue || t.Kind == timeline.TrackGPULane {
				m.queues[t.ID] = queueString(t.Queue)
			}
		}
	}
	clear(m.from)
	clear(m.to)
	for _, f := range bt.Flows {
		m.flowID++
		m.from[f.From] = append(m.from[f.From], m.flowID)
		m.to[f.To] = append(m.to[f.To], m.flowID)
	}
	type ev struct {
		ts    int64
		i     int
		begin bool
	}
	evs := make([]ev, 0, 2*len(bt.Spans)+len(bt.Samples))
	for i, s := range bt.Spans {
		evs = append(evs, ev{s.Start, i, true}, ev{s.End, i, false})
	}
	for i, s := range bt.Samples {
		evs = append(evs, ev{s.Time, -1 - i, false})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		if a.begin == b.begin {
			return 0
		}
		if a.begin {
			return 1
		}
		return -1
	})
	for _, e := range evs {
		pkt := &pb.TracePacket{
			TrustedPacketSequenceId: proto.Uint32(seq),
			Timestamp:               proto.Uint64(uint64(e.ts - m.last)),
		}
		m.last = e.ts
		tr.Packet = append(tr.Packet, pkt)
		if e.i < 0 {
			s := bt.Samples[-1-e.i]
			pkt.TrackEvent = &pb.TrackEvent{Type: pb.TrackEvent_TYPE_COUNTER.Enum(), TrackUuid: proto.Uint64(trackUUID(s.Track)),
				CounterValue: proto.Int64(int64(s.Value))}
			continue
		}
		s := bt.Spans[e.i]
		te := &pb.TrackEvent{TrackUuid: proto.Uint64(trackUUID(s.Track))}
		pkt.TrackEvent = te
		if !e.begin {
			te.Type = pb.TrackEvent_TYPE_SLICE_END.Enum()
			continue
		}
		if int(s.Name) >= len(m.interned) {
			m.interned = append(m.interned, make([]bool, int(s.Name)+1-len(m.interned))...)
		}
		if !m.interned[s.Name] {
			m.interned[s.Name] = true
			pkt.InternedData = &pb.InternedData{EventNames: []*pb.EventName{{Iid: proto.Uint64(uint64(s.Name) + 1), Name: proto.String(bt.Names[s.Name])}}}
		}
		te.Type = pb.TrackEvent_TYPE_SLICE_BEGIN.Enum()
		te.NameIid = proto.Uint64(uint64(s.Name) + 1)
		te.CategoryIids = []uint64{catCPU}
		a := m.args[s.Track]
		if a == nil {
			a = &marshalArgs{}
			m.args[s.Track] = a
		}
		if s.Frame != a.frame {
			a.frame = s.Frame
			te.DebugAnnotations = append(te.DebugAnnotations, &pb.DebugAnnotation{NameIid: proto.Uint64(annFrame), UintValue: proto.Uint64(s.Frame)})
		}
		if s.ErrNs != a.err {
			a.err = s.ErrNs
			te.DebugAnnotations = append(te.DebugAnnotations, &pb.DebugAnnotation{NameIid: proto.Uint64(annErrNs), UintValue: proto.Uint64(uint64(s.ErrNs))})
		}
		if q, ok := m.queues[s.Track]; ok && !a.queue {
			a.queue = true
			te.DebugAnnotations = append(te.DebugAnnotations, &pb.DebugAnnotation{NameIid: proto.Uint64(annQueue), StringValue: proto.String(q)})
		}
		te.FlowIds = m.from[e.i]
		te.TerminatingFlowIds = m.to[e.i]
	}
	return proto.Marshal(tr)
}

// BenchmarkPerfettoRead reads back the trace of 64 realistic frames, and
// reports ns per span and its time as a ratio to proto.Unmarshal of the
// same bytes into the generated structs (which builds no timeline),
// measured in the same run.
func BenchmarkPerfettoRead(b *testing.B) {
	batches := frameBatches(64)
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	spans := 0
	for _, bt := range batches {
		w.Write(bt)
		spans += len(bt.Spans)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	readNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N*spans)
	b.ReportMetric(readNs, "ns/span")
	n := 0
	start := time.Now()
	for time.Since(start) < b.Elapsed()/4+10*time.Millisecond {
		var tr pb.Trace
		if err := proto.Unmarshal(data, &tr); err != nil {
			b.Fatal(err)
		}
		n++
	}
	unmarshalNs := float64(time.Since(start).Nanoseconds()) / float64(n*spans)
	b.ReportMetric(readNs/unmarshalNs, "x-unmarshal-time")
}
