// Package benchgpu reports GPU time in Go benchmarks, so that benchstat
// compares GPU passes the way Go users already compare CPU time:
//
//	func BenchmarkShadowPass(b *testing.B) {
//		m := benchgpu.New(gpu, shadow) // shadow: a profiler.Name
//		for i := 0; i < b.N; i++ {
//			renderFrame()               // records zones named shadow
//			m.Collect()                 // never waits
//		}
//		vkDeviceWaitIdle(...)
//		m.Report(b)                     // gpu-ns/op and gpu-zones/op
//	}
//
// A Meter takes over its GPU context's Collect for the benchmark: every
// zone read back is looked at, and those of its name are counted.
//
// With GPUOptions.PipelineStatistics, the zones' work is reported too,
// per iteration, one metric a statistic under its key:
// "fragment_shader_invocations/op", "compute_shader_invocations/op", ...
// (timeline.StatKey). Unlike time, work is exact on most drivers, so
// benchstat calls a change in it from few runs. Zones of the name without
// counts (timeline.Work.Missing) are reported as "gpu-work-missing".
package benchgpu

import (
	"testing"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// Meter sums the GPU time of the zones of one name.
type Meter struct {
	g      *profiler.GPU
	name   profiler.Name
	buf    []profiler.ZoneResult
	total  int64 // ns, converted zones
	zones  int
	errors int
	// work sums the counts of the zones that have them, stats the
	// statistics they had; missing counts those that had none.
	work    [timeline.NumPipelineStats]uint64
	stats   timeline.PipelineStats
	missing int
}

// New returns a Meter for the zones named name on g.
func New(g *profiler.GPU, name profiler.Name) *Meter { return &Meter{g: g, name: name} }

// Collect takes the zones read back so far. It never waits; call it once
// per iteration or frame.
func (m *Meter) Collect() {
	m.buf = m.g.Collect(m.buf[:0])
	m.add(nil)
}

// Drain waits for the readback of everything the GPU has finished (call it
// once the device is idle) and takes it.
func (m *Meter) Drain() {
	var err error
	m.buf, err = m.g.Drain(m.buf[:0])
	m.add(err)
}

func (m *Meter) add(err error) {
	if err != nil {
		m.errors++
	}
	for _, z := range m.buf {
		if z.Name != m.name {
			continue
		}
		m.zones++
		m.addWork(z.Work)
		if z.Converted {
			m.total += z.Dur()
		} else {
			m.errors++
		}
	}
}

// addWork adds a zone's work, if its context counts any.
func (m *Meter) addWork(w *timeline.Work) {
	switch {
	case w == nil:
	case w.Missing != timeline.WorkCounted:
		m.missing++
	default:
		m.stats |= w.Stats
		for i, v := range w.Count {
			m.work[i] += v
		}
	}
}

// Work returns the counts of the zones counted so far, by statistic (its
// bit position), and the statistics they had.
func (m *Meter) Work() (counts [timeline.NumPipelineStats]uint64, stats timeline.PipelineStats) {
	return m.work, m.stats
}

// Total returns the GPU ns and the number of zones counted so far.
func (m *Meter) Total() (ns int64, zones int) { return m.total, m.zones }

// Report drains what is left and reports, per benchmark iteration, the
// zones' GPU time as "gpu-ns/op" and their count as "gpu-zones/op". Zones
// that could not be placed on the host clock, and readback errors, are
// reported as "gpu-errors" when there are any.
func (m *Meter) Report(b *testing.B) {
	m.Drain()
	if b.N == 0 {
		return
	}
	b.ReportMetric(float64(m.total)/float64(b.N), "gpu-ns/op")
	b.ReportMetric(float64(m.zones)/float64(b.N), "gpu-zones/op")
	if m.g.Err() != nil {
		m.errors++ // a lasting fault of the context (GPU.Err)
	}
	if m.errors > 0 {
		b.ReportMetric(float64(m.errors), "gpu-errors")
	}
	m.stats.Each(func(i int) {
		b.ReportMetric(float64(m.work[i])/float64(b.N), timeline.StatKey(i)+"/op")
	})
	if m.missing > 0 {
		b.ReportMetric(float64(m.missing), "gpu-work-missing")
	}
}
