package querypool

import (
	"math/rand/v2"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// older agrees with its definition on generations around every boundary
// the lazy scheme crosses: 0, a stamp, and the 30-bit wrap.
func TestOlder(t *testing.T) {
	for _, g := range []uint32{0, 1, genStamp - 1, genStamp, genStamp + 1, genMask - 1, genMask, genMask + 1, genMask + 2} {
		g &= genMask
		for _, back := range []uint32{0, 1, 2, genStamp, 1<<(genBits-1) - 1, 1 << (genBits - 1), genMask} {
			w := (g - back) & genMask
			want := back != 0 && back < 1<<(genBits-1)
			if got := older(w, g); got != want {
				t.Errorf("older(%d, %d) = %v, want %v (%d generations back)", w, g, got, want, back)
			}
		}
	}
}

// A slot recycled across a stamp and across the generation counter's wrap,
// one slot recycled every frame: every End of a pair of the frame records
// once, an End of an earlier frame's pair is refused as late, an End twice
// is misuse, and every pair handed out is collected.
func TestLazyGenerationsAcrossStampAndWrap(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HostQueryReset {
		t.Skipf("no host query reset on %s", q.Dev.Caps.Name)
	}
	for _, start := range []uint32{genStamp - 3, 1<<genBits - 3} {
		p, err := New(q.Dev, Config{ValidBits: q.Q.ValidBits, Slots: 1, MaxSlots: 1, FramesInFlight: 1, Queries: 16})
		if err != nil {
			t.Fatal(err)
		}
		s := p.ring[0]
		s.gen.Store(start)
		for j := range s.meta {
			s.meta[j].state.Store(pairWord(start-1, pairEnded)) // as a recycle left them
		}
		lazyFrames(t, p, q, start)
		vkg.DeviceWaitIdle(q.Dev.Handle)
		p.Close()
	}
}

func lazyFrames(t *testing.T, p *Pool, q *vktest.Queue, start uint32) {
	f := q.Fence()
	rng := rand.New(rand.NewPCG(uint64(start), 7))
	var stale []Pair
	var ended, twice, late uint64
	for frame := uint64(1); frame <= 8; frame++ {
		cmd := q.Cmd()
		if err := p.BeginFrame(frame, cmd); err != nil {
			t.Fatal(err)
		}
		for _, pr := range stale { // the last frame's pairs, ended again
			if p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit) {
				t.Fatalf("generation %d: a stale End recorded", start)
			}
			late++
		}
		stale = stale[:0]
		for i := range 1 + rng.IntN(7) {
			pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, uint32(i))
			if !ok {
				t.Fatalf("generation %d, frame %d: zone %d refused; %+v", start, frame, i, p.Stats())
			}
			if !p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit) {
				t.Fatalf("generation %d, frame %d: zone %d's End refused; %+v", start, frame, i, p.Stats())
			}
			ended++
			if rng.IntN(3) == 0 {
				p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit)
				twice++
			}
			stale = append(stale, pr)
		}
		p.EndFrame(nil)
		q.Submit(f, cmd)
		q.Wait(f)
		if _, err := p.Drain(nil); err != nil {
			t.Fatal(err)
		}
	}
	st := p.Stats()
	if st.Pairs != ended || st.Collected != ended || st.Misuse != twice || st.LateEnds != late {
		t.Errorf("generation %d: %+v; want Pairs = Collected = %d, Misuse %d, LateEnds %d", start, st, ended, twice, late)
	}
	if g := p.ring[0].gen.Load(); g-start < 7 {
		t.Errorf("generation %d: the slot was recycled %d times, want 7 or more", start, g-start)
	}
}
