package querypool_test

import (
	"sync"
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

// Collect makes no host reset and ResetDue makes them,
// on any goroutine; a ResetDue running while the pool closes neither
// touches a destroyed query pool (the validation layer would report it)
// nor races (-race).
func TestCollectLeavesResets(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HostQueryReset {
		t.Skipf("no hostQueryReset on %s", q.Dev.Caps.Name)
	}
	p := newPool(t, q, querypool.Config{FramesInFlight: 1, Slots: 3, MaxSlots: 3, Queries: 2000})
	f := q.Fence()
	var got []querypool.Result
	zones := 3
	frame := func(id uint64) {
		t.Helper()
		cmd := q.Cmd()
		if err := p.BeginFrame(id, cmd); err != nil {
			t.Fatal(err)
		}
		for z := range zones {
			pr, _ := p.Begin(cmd, top, uint32(z))
			p.End(pr, cmd, bottom)
		}
		p.EndFrame(cmd)
		q.Submit(f, cmd)
		q.Wait(f)
		q.Free(cmd)
		p.Advance(id + 1) // the application waited for frame id
		var err error
		if got, err = p.Collect(got); err != nil {
			t.Fatal(err)
		}
	}
	for id := uint64(1); id <= 4; id++ {
		frame(id)
	}
	if _, queries := p.ResetCost(); queries != 0 {
		t.Fatalf("Collect reset %d queries on the host", queries)
	}
	p.ResetDue(true)
	if _, queries := p.ResetCost(); queries == 0 {
		t.Fatalf("ResetDue reset nothing; slots %v", p.Debug())
	}
	if len(got) != 12 {
		t.Fatalf("%d results, want 12; %+v", len(got), p.Stats())
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p.ResetDue(true)
			p.ResetDue(false)
		}
	}()
	// Large frames, whose resets take long on lavapipe: the Close is
	// likely to come while one is inside vkResetQueryPool.
	zones = 1000
	for id := uint64(5); id <= 8; id++ {
		frame(id)
	}
	p.Close()
	p.ResetDue(true) // after Close: nothing
	close(stop)
	wg.Wait()
	if len(got) != 12+4*1000 {
		t.Fatalf("%d results, want %d; %+v", len(got), 12+4*1000, p.Stats())
	}
}
