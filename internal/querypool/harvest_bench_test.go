package querypool

import (
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
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

// BenchmarkHarvestWork times harvestWork, the readback's pass that gives
// each zone its work, on 1,000 zones nested two deep in 500 chains (each
// zone owning a chain or splitting its owner's), counting all 11
// statistics, beside harvest's own pass over the same slot. No Vulkan:
// the statistics are in plain memory.
func BenchmarkHarvestWork(b *testing.B) {
	const pairs = 1000
	s := bareSlot(pairs, 0)
	s.block.results = make([]uint64, 4*pairs)
	g := uint32(5)
	s.gen.Store(g)
	const n = timeline.NumPipelineStats
	w := &workSlot{cap: 2 * pairs, n: n, prev: make([]uint32, 2*pairs), results: make([]uint64, 2*pairs*(n+1))}
	s.work, s.block.work = w, make([]zoneWork, pairs)
	// Chains of an owner and one nested zone: segments owner..nested
	// begin, nested, nested end..owner end: 3 a chain.
	seg := uint32(0)
	for j := 0; j < pairs; j += 2 {
		for k := uint32(0); k < 3; k++ {
			w.prev[seg+k] = noSeg
			if k > 0 {
				w.prev[seg+k] = seg + k - 1
			}
			r := w.results[(seg+k)*(n+1):]
			for i := range n {
				r[i] = uint64(i + 1)
			}
			r[n] = 1
		}
		s.block.work[j] = zoneWork{gen: g, state: workEnded, first: seg, last: seg + 2}
		s.block.work[j+1] = zoneWork{gen: g, state: workEnded, first: seg + 1, last: seg + 1}
		seg += 3
	}
	w.next.Store(seg)
	for j := range s.block.meta {
		s.block.meta[j].state.Store(pairWord(g, pairEnded))
		s.block.meta[j].cmd = 99
		r := s.block.results[4*j:]
		r[0], r[1], r[2], r[3] = uint64(1000+j), 1, uint64(2000+j), 1
	}
	s.used = 2 * pairs
	p := &Pool{mask: ^uint64(0), cfg: Config{Stats: timeline.AllPipelineStats}}
	var harv, work time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		p.ready = p.ready[:0]
		p.harvest(s)
		t1 := time.Now()
		p.harvestWork(s, p.ready)
		work += time.Since(t1)
		harv += t1.Sub(t0)
	}
	if wk := p.ready[0].Work; wk == nil || wk.Count[0] != 3 || p.ready[1].Work.Count[10] != 11 {
		b.Fatalf("work %+v, %+v", p.ready[0].Work, p.ready[1].Work)
	}
	b.ReportMetric(float64(work)/float64(b.N)/pairs, "work-ns/zone")
	b.ReportMetric(float64(harv)/float64(b.N)/pairs, "harvest-ns/zone")
}
