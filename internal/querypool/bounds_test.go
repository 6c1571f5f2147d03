package querypool_test

import (
	"sync"
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

// Refused zones do not move a frame's query counter on: it stays within a
// pair per concurrent Begin of the capacity, so that no number of
// refusals can wrap it and hand out query 0 again (a uint32 counter wrapped
// after 2^31 refusals).
func TestRefusalsDoNotWrapTheCounter(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{Queries: 4, MaxQueries: 4, FramesInFlight: 1})
	if err := p.BeginFrame(1, nil); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 50000
	var wg sync.WaitGroup
	for range workers {
		cmd := vktest.NewQueue(t, q.Dev, q.Q).Cmd() // a command pool per goroutine
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				p.Begin(cmd, top, 1) // all but two refused; never ended
			}
		}()
	}
	wg.Wait()
	next, capacity := p.CurrentNext()
	if next > capacity+2*workers {
		t.Errorf("after %d refusals the counter is at %d, capacity %d: it grows with refusals", workers*each-2, next, capacity)
	}
	if st := p.Stats(); st.QueryLimit != workers*each-2 {
		t.Errorf("Dropped %d, want %d", st.QueryLimit, workers*each-2)
	}
}

// A late End of a pair whose slot is being replaced by a larger one races
// with nothing: the replaced slot's fields are never written again (the
// race detector is the assertion), and the End is refused and counted.
func TestLateEndWhileSlotsGrow(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{Queries: 2, MaxQueries: 1 << 10, FramesInFlight: 1, Slots: 1, MaxSlots: 1})
	var late []querypool.Pair
	lateEnds := 0
	for f := uint64(1); f <= 8; f++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func(pairs []querypool.Pair) { // Ends of the last frame's pairs, again
			defer wg.Done()
			for _, pr := range pairs {
				if p.End(pr, nil, bottom) {
					t.Error("a late End recorded")
				}
			}
		}(late)
		lateEnds += len(late)
		err := p.BeginFrame(f, nil) // grows the slot: the last frame was refused zones
		wg.Wait()
		if err != nil {
			t.Fatalf("frame %d: %v", f, err)
		}
		cmd := q.Cmd()
		late = nil
		for range 1 << f {
			if pr, ok := p.Begin(cmd, top, 1); ok {
				p.End(pr, cmd, bottom)
				late = append(late, pr)
			}
		}
		p.EndFrame(nil)
		q.SubmitWait(cmd)
		collectAll(t, p, len(late))
	}
	if st := p.Stats(); st.Grown == 0 || st.LateEnds != uint64(lateEnds) {
		t.Errorf("stats %+v: want slots grown and %d late Ends", st, lateEnds)
	}
}
