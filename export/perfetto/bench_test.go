package perfetto

import (
	"bytes"
	"cmp"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/benchspans"
	pb "github.com/framescope/framescope/proto"
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

	// The peer: the same batches through proto.Marshal.
	mspans := 0
	start := time.Now()
	for time.Since(start) < el/4+10*time.Millisecond {
		for _, bt := range batches[:32] {
			if _, err := marshalBatch(bt); err != nil {
				b.Fatal(err)
			}
			mspans += len(bt.Spans)
		}
	}
	marshalNs := float64(time.Since(start).Nanoseconds()) / float64(mspans)
	b.ReportMetric(marshalNs/(float64(el.Nanoseconds())/float64(spans)), "x-faster-than-marshal")
}

// BenchmarkPerfettoProtoMarshal encodes the same batches by filling the
// generated structs of package proto and calling proto.Marshal.
func BenchmarkPerfettoProtoMarshal(b *testing.B) {
	batches := frameBatches(64)
	spans, size := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt := batches[i%len(batches)]
		out, err := marshalBatch(bt)
		if err != nil {
			b.Fatal(err)
		}
		spans += len(bt.Spans)
		size += len(out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
	b.ReportMetric(float64(size)/float64(spans), "bytes/span")
}

// marshalBatch is the straightforward encoder the Writer is measured
// against: the same packets (interned names, incremental timestamps,
// slices with annotations and flows, counters) as generated structs.
func marshalBatch(bt *timeline.Trace) ([]byte, error) {
	const seq = 1
	tr := &pb.Trace{}
	last := int64(0)
	if len(bt.Spans) > 0 {
		last = bt.Spans[0].Start
	}
	snap := &pb.TracePacket{
		TrustedPacketSequenceId: proto.Uint32(seq),
		SequenceFlags:           proto.Uint32(1),
		Timestamp:               proto.Uint64(uint64(last)),
		TimestampClockId:        proto.Uint32(clockMonotonic),
		ClockSnapshot: &pb.ClockSnapshot{Clocks: []*pb.ClockSnapshot_Clock{
			{ClockId: proto.Uint32(clockMonotonic), Timestamp: proto.Uint64(uint64(last))},
			{ClockId: proto.Uint32(clockIncremental), Timestamp: proto.Uint64(uint64(last)), IsIncremental: proto.Bool(true)},
		}},
		TracePacketDefaults: &pb.TracePacketDefaults{TimestampClockId: proto.Uint32(clockIncremental)},
		InternedData:        &pb.InternedData{},
	}
	for i, n := range bt.Names {
		snap.InternedData.EventNames = append(snap.InternedData.EventNames, &pb.EventName{Iid: proto.Uint64(uint64(i) + 1), Name: proto.String(n)})
	}
	tr.Packet = append(tr.Packet, snap)
	type ev struct {
		ts    int64
		i     int
		begin bool
	}
	evs := make([]ev, 0, 2*len(bt.Spans))
	for i, s := range bt.Spans {
		evs = append(evs, ev{s.Start, i, true}, ev{s.End, i, false})
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
		s := bt.Spans[e.i]
		te := &pb.TrackEvent{TrackUuid: proto.Uint64(trackUUID(s.Track))}
		if e.begin {
			te.Type = pb.TrackEvent_TYPE_SLICE_BEGIN.Enum()
			te.NameIid = proto.Uint64(uint64(s.Name) + 1)
			te.CategoryIids = []uint64{catCPU}
			te.DebugAnnotations = []*pb.DebugAnnotation{{NameIid: proto.Uint64(annFrame), UintValue: proto.Uint64(s.Frame)}}
			for fi, f := range bt.Flows {
				if f.From == e.i {
					te.FlowIds = append(te.FlowIds, uint64(fi+1))
				}
				if f.To == e.i {
					te.TerminatingFlowIds = append(te.TerminatingFlowIds, uint64(fi+1))
				}
			}
		} else {
			te.Type = pb.TrackEvent_TYPE_SLICE_END.Enum()
		}
		tr.Packet = append(tr.Packet, &pb.TracePacket{
			TrustedPacketSequenceId: proto.Uint32(seq),
			Timestamp:               proto.Uint64(uint64(e.ts - last)),
			TrackEvent:              te,
		})
		last = e.ts
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
