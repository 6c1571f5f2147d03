package querypool

import (
	"testing"
	"time"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
)

// BenchmarkReadRun times readRunLocked, which reads a recording's last
// execution when its command buffer is recorded again (on the
// application's thread, under a layer), on 256 pairs: handed over to
// Collect (ns/pair), and, beside it, made into results there as it was
// before (results-ns/pair) and its floor in the same run, reading each
// pair's values and availability words (floor-ns/pair). No Vulkan: the
// host copy is plain memory.
func BenchmarkReadRun(b *testing.B) {
	const pairs = 256
	s := bareSlot(pairs, 0)
	mem := make([]uint64, 4*pairs)
	s.block.buf = &vk.HostBuffer{Ptr: unsafe.Pointer(&mem[0]), Size: uint64(8 * len(mem))}
	r := &recording{cmd: 99, s: s, wrote: 2 * pairs}
	for j := range uint32(pairs) {
		r.pairs = append(r.pairs, recPair{j: j, name: j % 7})
	}
	p := &Pool{mask: ^uint64(0), ready: make([]Result, 0, 4*pairs)}
	var sum uint64
	var floor, read, made time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for j := range pairs {
			mem[4*j], mem[4*j+1], mem[4*j+2], mem[4*j+3] = uint64(1000+j), 1, uint64(2000+j), 1
		}
		r.runv = execution{frame: 7, key: 3, begun: 7}
		r.run = &r.runv
		p.ready = p.ready[:0]
		p.dropDeferredLocked()
		t0 := time.Now()
		for j := 0; j < pairs; j++ {
			if mem[4*j+1] != 0 && mem[4*j+3] != 0 {
				sum += mem[4*j] + mem[4*j+2]
			}
		}
		t1 := time.Now()
		p.readRunLocked(r, runRecord)
		t2 := time.Now()
		r.run = &r.runv
		p.resultsLocked(r, mem, true)
		made += time.Since(t2)
		read += t2.Sub(t1)
		floor += t1.Sub(t0)
		if p.deferredN != pairs || len(p.ready) != pairs {
			b.Fatalf("handed over %d zones and made %d results, want %d", p.deferredN, len(p.ready), pairs)
		}
	}
	b.ReportMetric(float64(read)/float64(b.N)/pairs, "ns/pair")
	b.ReportMetric(float64(made)/float64(b.N)/pairs, "results-ns/pair")
	b.ReportMetric(float64(floor)/float64(b.N)/pairs, "floor-ns/pair")
	benchSum = sum
}
