package querypool

import (
	"testing"
	"time"
)

// BenchmarkHarvest times harvest, the readback's pass over a slot, on
// 1,000 ended pairs of one command buffer, beside its floor in the same
// run: reading each pair's values and availability words and nothing
// else. No Vulkan: the slot's results are in plain memory.
func BenchmarkHarvest(b *testing.B) {
	const pairs = 1000
	s := bareSlot(pairs, 0)
	s.block.results = make([]uint64, 4*pairs)
	g := uint32(5)
	s.gen.Store(g)
	for j := range s.block.meta {
		s.block.meta[j].state.Store(pairWord(g, pairEnded))
		s.block.meta[j].name = uint32(j % 7)
		s.block.meta[j].cmd = 99
		r := s.block.results[4*j:]
		r[0], r[1], r[2], r[3] = uint64(1000+j), 1, uint64(2000+j), 1
	}
	s.used = 2 * pairs
	s.subs = []submission{{cmd: 99, key: 3}}
	s.submitted = true
	p := &Pool{mask: ^uint64(0)}
	var sum uint64
	var floor, harv time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		vals := s.block.results
		for j := 0; j < pairs; j++ {
			if vals[4*j+1] != 0 && vals[4*j+3] != 0 {
				sum += vals[4*j] + vals[4*j+2]
			}
		}
		t1 := time.Now()
		p.ready = p.ready[:0]
		if h := p.harvest(s); h.collected != pairs {
			b.Fatalf("harvest %+v", h)
		}
		harv += time.Since(t1)
		floor += t1.Sub(t0)
	}
	b.ReportMetric(float64(harv)/float64(b.N)/pairs, "ns/pair")
	b.ReportMetric(float64(floor)/float64(b.N)/pairs, "floor-ns/pair")
	benchSum = sum
}

var benchSum uint64
