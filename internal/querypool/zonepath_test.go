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

// TestSlotMem checks that the zone path's C half finds a slot's cursors
// and pair records where Go keeps them (slotMem): Begins in C on two
// command buffers leave each pair's record, and each command buffer's
// cursor, where Go reads them, and an End in C marks the record Go reads.
func TestSlotMem(t *testing.T) {
	initGuard()
	p := &Pool{writeTS: noopTimestamp()}
	s := bareSlot(64, p.writeTS)
	s.state.Store(slotRecording)
	p.cur.Store(s)
	var fake [2][64]byte
	cmds := []vkg.CommandBuffer{vkg.CommandBuffer(unsafe.Pointer(&fake[0][0])), vkg.CommandBuffer(unsafe.Pointer(&fake[1][0]))}
	for i := range 10 {
		cmd := cmds[i%2]
		pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, uint32(100+i))
		if !ok {
			t.Fatalf("Begin %d refused", i)
		}
		m := &s.block.meta[pr.q/2]
		if m.name != uint32(100+i) || m.cmd != uint64(uintptr(unsafe.Pointer(cmd))) {
			t.Fatalf("Begin %d: query %d's record in Go is name %d, cmd %#x; want %d, %p", i, pr.q, m.name, m.cmd, 100+i, cmd)
		}
		p.EndQuiet(pr, cmd, vkg.PipelineStageBottomOfPipeBit)
		if got := m.state.Load(); got != pairWord(pr.gen, pairEnded) {
			t.Fatalf("End %d: query %d's state word in Go is %#x, want ended (%#x)", i, pr.q, got, pairWord(pr.gen, pairEnded))
		}
	}
	found := 0
	for i := range s.cursors {
		if k := s.cursors[i].cmd.Load(); k != 0 {
			found++
			if k != uint64(uintptr(unsafe.Pointer(cmds[0]))) && k != uint64(uintptr(unsafe.Pointer(cmds[1]))) {
				t.Errorf("cursor %d holds %#x, neither command buffer", i, k)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d cursors in Go hold a command buffer, want 2", found)
	}
	// The first command buffer took the cursor where guard.c's probe
	// starts (fs_cursor_hash): nothing had taken it.
	k := uint64(uintptr(unsafe.Pointer(cmds[0])))
	if h := ((k >> 4) * 0x9E3779B97F4A7C15) >> 58; s.cursors[h].cmd.Load() != k {
		t.Errorf("cursor %d in Go holds %#x, want the first command buffer, %#x", h, s.cursors[h].cmd.Load(), k)
	}
	if st := p.Stats(); st.Misuse+st.LateEnds != 0 {
		t.Errorf("Ends refused: %+v", st)
	}
}
