package profiler

import (
	"testing"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// BenchmarkConvert times Collect's work after the readback, convert, on
// 1,000 pairs as the query pool returns them (nested two deep, in one
// command buffer), beside its floor in the same run: ConvertSpan of the
// same ticks and nothing else. No Vulkan: it is the CPU work a zone costs
// there, apart from the driver and the machine's GPU.
func BenchmarkConvert(b *testing.B) {
	m, err := clock.New(clock.Options{PeriodNs: 1, ValidBits: 64})
	if err != nil {
		b.Fatal(err)
	}
	for i := int64(1); i <= 10; i++ {
		m.Add(clock.Sample{Device: uint64(i * 999_980_000), Host: i * 1e9, Deviation: 3000})
	}
	g := &GPU{clock: m}
	raw := make([]querypool.Result, 1000)
	for i := range raw {
		t := uint64(12e9 + i*1000)
		raw[i] = querypool.Result{Frame: 7, Host: 12e9, Name: 1, Seq: uint32(i), Cmd: 99, Begin: t, End: t + 500, Key: 3, Submitted: true}
		if i%2 == 1 { // inside the zone before
			raw[i].Begin, raw[i].End = raw[i-1].Begin+100, raw[i-1].End-100
		}
	}
	dst := make([]ZoneResult, 0, len(raw))
	var sum, floor, conv int64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t0 := timeline.Now()
		for j := range raw {
			s, e, errNs, _ := m.ConvertSpan(raw[j].Begin, raw[j].End, raw[j].Host)
			sum += e - s + errNs
		}
		t1 := timeline.Now()
		var spans []record.GPUSpan
		dst, spans = g.convert(raw, dst[:0], true)
		g.spans = spans[:0]
		conv += timeline.Now() - t1
		floor += t1 - t0
	}
	if len(dst) != len(raw) || sum == 0 {
		b.Fatalf("%d results of %d", len(dst), len(raw))
	}
	n := float64(b.N) * float64(len(raw))
	b.ReportMetric(float64(conv)/n, "ns/zone")
	b.ReportMetric(float64(floor)/n, "floor-ns/zone")
	b.ReportMetric(float64(conv)/float64(floor), "convert/floor")
}
