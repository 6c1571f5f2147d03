package clock

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var benchSink int64

// benchModel returns a model fed for two minutes at 1 Hz, with a full
// window and a chain of segments, and the clock it follows.
func benchModel(b *testing.B, bits uint, window int, dur time.Duration) (*Model, lineClock) {
	b.Helper()
	clk := lineClock{period: 1, rate: 1 + 9.8e-6, tick0: 1 << 44}
	now := 0.0
	m, err := New(Options{PeriodNs: 1, ValidBits: bits, Window: window, WindowDur: dur,
		Now: func() int64 { return int64(now) }})
	if err != nil {
		b.Fatal(err)
	}
	mask := uint64(math.MaxUint64)
	if bits < 64 {
		mask = 1<<bits - 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 1; i <= 120; i++ {
		h := float64(i) * 1e9
		now = h + 100e3
		if err := m.Add(clk.sample(rng, h, 2600, mask)); err != nil {
			b.Fatal(err)
		}
	}
	return m, clk
}

// convertFloor is the least a conversion can do: one multiply-add on a
// tick already extended.
//
//go:noinline
func convertFloor(g *clockSeg, x int64) int64 {
	return g.h0 + int64(float64(x-g.x0)*g.slope)
}

// BenchmarkClockConvert converts ticks written in the last 10 ms, as
// Collect does, and reports ns/tick next to the floor measured in the same
// run, and their ratio.
func BenchmarkClockConvert(b *testing.B) {
	for _, bits := range []uint{64, 32} {
		b.Run(map[uint]string{64: "64bit", 32: "32bit"}[bits], func(b *testing.B) {
			m, clk := benchModel(b, bits, 0, 0)
			const n = 1024
			var raws [n]uint64
			for i := range raws {
				raws[i] = uint64(clk.tick(120.5e9+float64(i)*10e3)) & m.mask
			}
			hint := int64(120.5e9)
			g := &m.snap.Load().segs[len(m.snap.Load().segs)-1]
			var xs [n]int64
			for i := range xs {
				xs[i] = int64(raws[i] - m.base)
			}

			start := time.Now()
			var sum int64
			for i := 0; i < b.N; i++ {
				sum += convertFloor(g, xs[i%n])
			}
			floor := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h, _, _ := m.Convert(raws[i%n], hint)
				sum += h
			}
			b.StopTimer()
			benchSink = sum
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per, "ns/tick")
			b.ReportMetric(floor, "floor-ns/tick")
			b.ReportMetric(per/floor, "x-floor")
		})
	}
}

// BenchmarkClockConvertFloor is the floor on its own: a multiply-add.
func BenchmarkClockConvertFloor(b *testing.B) {
	m, _ := benchModel(b, 64, 0, 0)
	g := &m.snap.Load().segs[len(m.snap.Load().segs)-1]
	var sum int64
	x := g.x0
	for i := 0; i < b.N; i++ {
		sum += convertFloor(g, x+int64(i&1023)*10e3)
	}
	benchSink = sum
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/tick")
}

// BenchmarkClockConvertSpan converts a zone's two ticks with ConvertSpan
// and reports ns/span next to two Convert calls on the same ticks in the
// same run, and their ratio.
func BenchmarkClockConvertSpan(b *testing.B) {
	for _, bits := range []uint{64, 32} {
		b.Run(map[uint]string{64: "64bit", 32: "32bit"}[bits], func(b *testing.B) {
			m, clk := benchModel(b, bits, 0, 0)
			const n = 1024
			var raws [n + 1]uint64
			for i := range raws {
				raws[i] = uint64(clk.tick(120.5e9+float64(i)*10e3)) & m.mask
			}
			hint := int64(120.5e9)
			start := time.Now()
			var sum int64
			for i := 0; i < b.N; i++ {
				s, e1, _ := m.Convert(raws[i%n], hint)
				e, e2, _ := m.Convert(raws[i%n+1], hint)
				sum += e - s + max(e1, e2)
			}
			two := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, e, errNs, _ := m.ConvertSpan(raws[i%n], raws[i%n+1], hint)
				sum += e - s + errNs
			}
			b.StopTimer()
			benchSink = sum
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per, "ns/span")
			b.ReportMetric(two, "two-converts-ns")
			b.ReportMetric(per/two, "x-two")
		})
	}
}

// BenchmarkClockAdd is one recalibration round with a full window of 32
// samples: extend, screen, robust fit, least squares, bound, publish. It
// is compared with a plain weighted least-squares pass over the same
// window measured in the same run.
func BenchmarkClockAdd(b *testing.B) {
	m, clk := benchModel(b, 64, 32, time.Hour)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 4096
	var ss [n]Sample
	for i := range ss {
		ss[i] = clk.sample(rng, 121e9+float64(i)*1e9, 2600, math.MaxUint64)
	}
	win := append([]clockPoint(nil), m.win...)

	start := time.Now()
	var acc float64
	for i := 0; i < b.N; i++ {
		acc += plainWLS(win)
	}
	floor := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	benchSink = int64(acc)

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%n == 0 && i > 0 {
			b.StopTimer()
			m, _ = benchModel(b, 64, 32, time.Hour)
			b.StartTimer()
		}
		s := ss[i%n]
		if err := m.Add(s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if q := m.Quality(); q.Samples != 32 {
		b.Fatalf("window holds %d samples, want 32", q.Samples)
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per/1e3, "us/refit")
	b.ReportMetric(per/floor, "x-wls")
}

// plainWLS is a weighted least-squares slope over ps, nothing else.
//
//go:noinline
func plainWLS(ps []clockPoint) float64 {
	var s, sx, sy float64
	for _, p := range ps {
		w := 1 / (p.dev * p.dev)
		s += w
		sx += w * float64(p.x)
		sy += w * float64(p.h)
	}
	xb, yb := sx/s, sy/s
	var sxx, sxy float64
	for _, p := range ps {
		w := 1 / (p.dev * p.dev)
		d := float64(p.x) - xb
		sxx += w * d * d
		sxy += w * d * (float64(p.h) - yb)
	}
	return sxy / sxx
}
