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
package benchgpu

import (
	"testing"

	"github.com/framescope/framescope/profiler"
)

// Meter sums the GPU time of the zones of one name.
type Meter struct {
	g      *profiler.GPU
	name   profiler.Name
	buf    []profiler.ZoneResult
	total  int64 // ns, converted zones
	zones  int
	errors int
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
		if z.Converted {
			m.total += z.Dur()
		} else {
			m.errors++
		}
	}
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
}
