package querypool

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Begin's result survives its goroutine's stack moving just before the
// cgo call (a goroutine's stack grows, or the collector shrinks it, at a
// function's entry): fresh goroutines begin zones at many stack depths
// while the collector runs, and every pair they get is a pair C handed
// out, each once. The result used to come back through a stack address
// passed as an integer, which a move left stale: the Begin got the
// word's old value, pair 0 of generation 0, handed out twice (a zone
// lost and uncounted, its End counted as misuse), and C wrote into a
// stack that was no longer the goroutine's.
func TestBeginResultSurvivesStackMoves(t *testing.T) {
	initGuard()
	const pairs = 1 << 14
	p := &Pool{writeTS: noopTimestamp()}
	s := bareSlot(pairs, p.writeTS)
	s.state.Store(slotRecording)
	s.gen.Store(1) // a stale word of 0 would read as generation 0
	p.cur.Store(s)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer close(stop)
	var mu sync.Mutex
	seen := map[uint32]bool{}
	var wg sync.WaitGroup
	for g := range 4000 {
		if s.next.Load()+64 > s.cap {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fake [8]byte
			cmd := vkg.CommandBuffer(unsafe.Pointer(&fake[0]))
			pr := deepBegin(p, cmd, g%97)
			runtime.KeepAlive(&fake)
			if !pr.Valid() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if pr.gen != 1 || seen[pr.q] {
				t.Errorf("Begin gave pair %d of generation %d: not one C handed out (slot generation 1)", pr.q, pr.gen)
			}
			seen[pr.q] = true
		}()
	}
	wg.Wait()
}

// deepBegin calls Begin depth frames down, so that Begins start near
// every place a stack may have to grow.
func deepBegin(p *Pool, cmd vkg.CommandBuffer, depth int) Pair {
	if depth > 0 {
		var pad [64]byte
		pr := deepBegin(p, cmd, depth-1)
		runtime.KeepAlive(&pad)
		return pr
	}
	pr, _ := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, 1)
	return pr
}
