package querypool

import (
	"testing"
	"time"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// BenchmarkZonePath times Begin and End (EndQuiet, as GPU.EndIn without
// debug labels calls it) with a driver that does nothing,
// beside two calls of that driver from Go (the floor: the cgo calls a
// zone cannot avoid), on a slot made here, with no device: what the zone
// path adds to the driver's own cost, on this machine. It reports ns a
// zone, ns a floor pair and their difference.
func BenchmarkZonePath(b *testing.B) {
	initGuard()
	const pairs = 1 << 14
	p := &Pool{writeTS: noopTimestamp()}
	s := bareSlot(pairs, p.writeTS)
	s.state.Store(slotRecording)
	p.cur.Store(s)
	var fake [64]byte // the command buffer handle: never dereferenced
	cmd := vkg.CommandBuffer(unsafe.Pointer(&fake[0]))
	const block = 256
	var zoneNs, floorNs int64
	var zones int
	for b.Loop() {
		if s.next.Load()+2*block > s.cap {
			for i := range s.cursors {
				s.cursors[i] = cursor{}
			}
			s.next.Store(0)
			s.gen.Add(1) // every pair open again
		}
		t0 := time.Now().UnixNano()
		for range block {
			pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, 1)
			if !ok {
				b.Fatal("refused")
			}
			p.EndQuiet(pr, cmd, vkg.PipelineStageTopOfPipeBit)
		}
		t1 := time.Now().UnixNano()
		for j := range uint32(block) {
			callTimestamp(p.writeTS, cmd, vkg.PipelineStageTopOfPipeBit, 2*j)
			callTimestamp(p.writeTS, cmd, vkg.PipelineStageTopOfPipeBit, 2*j+1)
		}
		t2 := time.Now().UnixNano()
		zoneNs += t1 - t0
		floorNs += t2 - t1
		zones += block
	}
	if st := p.Stats(); st.Misuse+st.LateEnds != 0 {
		b.Fatalf("Ends refused: %+v", st)
	}
	b.ReportMetric(float64(zoneNs)/float64(zones), "ns/zone")
	b.ReportMetric(float64(floorNs)/float64(zones), "floor-ns/pair")
	b.ReportMetric(float64(zoneNs-floorNs)/float64(zones), "added-ns/zone")
}
