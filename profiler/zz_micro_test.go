package profiler

import (
	"testing"

	"github.com/framescope/framescope/clock"
	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

func BenchmarkZZConvertLoop(b *testing.B) {
	m, _ := clock.New(clock.Options{PeriodNs: 1, ValidBits: 64})
	for i := int64(1); i <= 10; i++ {
		m.Add(clock.Sample{Device: uint64(i * 999_980_000), Host: i * 1e9, Deviation: 3000})
	}
	g := &GPU{clock: m}
	raw := make([]querypool.Result, 1000)
	for i := range raw {
		t := uint64(12e9 + i*1000)
		raw[i] = querypool.Result{Frame: 7, Host: 12e9, Name: 1, Seq: uint32(i), Cmd: 99, Begin: t, End: t + 500, Key: 3, Submitted: true}
		if i%2 == 1 {
			raw[i].Begin, raw[i].End = raw[i-1].Begin+100, raw[i-1].End-100
		}
	}
	dst := make([]ZoneResult, 0, 1000)
	var sum int64
	var floor, conv int64
	for i := 0; i < b.N; i++ {
		t0 := timeline.Now()
		for j := range raw {
			s, e, errNs, _ := m.ConvertSpan(raw[j].Begin, raw[j].End, raw[j].Host)
			sum += e - s + errNs
		}
		t1 := timeline.Now()
		var sp []record.GPUSpan
		dst, sp = g.convert(raw, dst[:0], true)
		g.spans = sp[:0]
		conv += timeline.Now() - t1
		floor += t1 - t0
	}
	b.ReportMetric(float64(floor)/float64(b.N)/1000, "floor-ns/zone")
	b.ReportMetric(float64(conv)/float64(b.N)/1000, "conv-ns/zone")
	b.ReportMetric(float64(conv)/float64(floor), "x")
	_ = sum
}
