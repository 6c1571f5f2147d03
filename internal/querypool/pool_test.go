package querypool_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

const (
	top    = vkg.PipelineStageTopOfPipeBit
	bottom = vkg.PipelineStageBottomOfPipeBit
)

func newPool(t *testing.T, q *vktest.Queue, cfg querypool.Config) *querypool.Pool {
	t.Helper()
	if cfg.ValidBits == 0 {
		cfg.ValidBits = q.Q.ValidBits
	}
	p, err := querypool.New(q.Dev, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vkg.DeviceWaitIdle(q.Dev.Handle); p.Close() })
	return p
}

// collectAll drains the pool (the GPU is done: the caller waited on a
// fence) and checks the count.
func collectAll(t *testing.T, p *querypool.Pool, want int) []querypool.Result {
	t.Helper()
	out, err := p.Drain(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != want {
		t.Fatalf("collected %d results, want %d; stats %+v", len(out), want, p.Stats())
	}
	return out
}

func TestPairsReadBack(t *testing.T) {
	for _, hostReset := range []bool{true, false} {
		name := "hostReset"
		if !hostReset {
			name = "cmdReset"
		}
		t.Run(name, func(t *testing.T) {
			q := vktest.Graphics(t, vk.Config{NoHostQueryReset: !hostReset})
			if hostReset != q.Dev.HostQueryReset {
				t.Skipf("hostQueryReset is %v on %s", q.Dev.HostQueryReset, q.Dev.Caps.Name)
			}
			p := newPool(t, q, querypool.Config{Slots: 2, FramesInFlight: 1})
			f := q.Fence()
			// More frames than slots: slots are reused, and reset each time.
			for frame := uint64(1); frame <= 5; frame++ {
				cmd := q.Cmd()
				if !hostReset {
					if err := p.BeginFrame(frame, nil); !errors.Is(err, querypool.ErrNeedResetCmd) {
						t.Fatalf("BeginFrame without a command buffer: %v, want ErrNeedResetCmd", err)
					}
				}
				if err := p.BeginFrame(frame, cmd); err != nil {
					t.Fatal(err)
				}
				nested(t, p, cmd)
				p.EndFrame(cmd)
				q.Submit(f, cmd)
				q.Wait(f)
				rs := collectAll(t, p, 2)
				for _, r := range rs {
					if r.Frame != frame {
						t.Errorf("frame %d, want %d", r.Frame, frame)
					}
					if r.End < r.Begin {
						t.Errorf("end %d before begin %d", r.End, r.Begin)
					}
				}
				if rs[0].Name != 1 || rs[1].Name != 2 || rs[0].Seq != 0 || rs[1].Seq != 1 {
					t.Errorf("results out of order: %+v", rs)
				}
				if rs[1].Begin < rs[0].Begin || rs[1].End > rs[0].End {
					t.Errorf("inner [%d,%d] not inside outer [%d,%d]", rs[1].Begin, rs[1].End, rs[0].Begin, rs[0].End)
				}
				q.Free(cmd)
			}
			if s := p.Stats(); s.Pairs != 10 || s.Collected != 10 || s.QueryLimit+s.NoFrame+s.Misuse+s.Unended+s.Unsubmitted != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// A frame that outgrows its slot: without host query reset, the zones
// over the slot are refused and counted, and later frames get a larger
// slot; with it, the frame itself gets more queries, up to MaxQueries.
func TestOverflowCountedAndGrows(t *testing.T) {
	for _, hostReset := range []bool{false, true} {
		q := vktest.Graphics(t, vk.Config{NoHostQueryReset: !hostReset})
		if q.Dev.HostQueryReset != hostReset {
			t.Skipf("hostQueryReset is %v on %s", q.Dev.HostQueryReset, q.Dev.Caps.Name)
		}
		p := newPool(t, q, querypool.Config{Slots: 2, FramesInFlight: 1, Queries: 8, MaxQueries: 16})
		f := q.Fence()
		run := func(frame uint64, zones int) (got int) {
			cmd := q.Cmd()
			if err := p.BeginFrame(frame, cmd); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < zones; i++ {
				if pr, ok := p.Begin(cmd, top, uint32(i)); ok {
					p.End(pr, cmd, bottom)
				}
			}
			p.EndFrame(nil)
			q.Submit(f, cmd)
			q.Wait(f)
			defer q.Free(cmd)
			// The application goes on to its next frame, having waited
			// for this one: without host query reset and without a copy,
			// only then may the driver read it (its reset ran).
			p.Advance(frame + 1)
			rs, err := p.Drain(nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				if r.Seq != uint32(i) || r.Name != uint32(i) {
					t.Errorf("result %d is pair %d named %d", i, r.Seq, r.Name)
				}
			}
			return len(rs)
		}
		first, dropped := 4, uint64(6) // 8 queries: 4 pairs
		if hostReset {
			first, dropped = 8, 2 // grown in the frame to MaxQueries: 8 pairs
		}
		if got := run(1, 10); got != first {
			t.Errorf("host reset %v: frame 1: %d results, want %d", hostReset, got, first)
		}
		if s := p.Stats(); s.QueryLimit != dropped || (s.Extended != 0) != hostReset {
			t.Errorf("host reset %v: dropped %d, extended %d; want exactly %d dropped", hostReset, s.QueryLimit, s.Extended, dropped)
		}
		// The next slot taken is grown to 16 queries: 8 pairs.
		if got := run(2, 10); got != 8 {
			t.Errorf("host reset %v: frame 2: %d results, want 8 (grown)", hostReset, got)
		}
		s := p.Stats()
		if s.QueryLimit != dropped+2 || s.Grown == 0 {
			t.Errorf("host reset %v: after growth: dropped %d (want %d), grown %d", hostReset, s.QueryLimit, dropped+2, s.Grown)
		}
		// Never past MaxQueries.
		for _, c := range p.Slots() {
			if c > 16 {
				t.Errorf("slot of %d queries exceeds MaxQueries 16", c)
			}
		}
		if s.Pairs+s.QueryLimit != 20 {
			t.Errorf("handed out %d + dropped %d != 20 asked", s.Pairs, s.QueryLimit)
		}
	}
}

func TestCollectNeverWaits(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{})
	ev := q.Event()
	f := q.Fence()
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	pr, _ := p.Begin(cmd, top, 7)
	q.WaitEvent(cmd, ev)
	p.End(pr, cmd, bottom)
	p.EndFrame(nil)
	q.Submit(f, cmd)
	// The GPU is stuck on the event: Collect must return at once, empty.
	done := make(chan int)
	go func() {
		rs, err := p.Collect(nil)
		if err != nil {
			t.Error(err)
		}
		done <- len(rs)
	}()
	select {
	case n := <-done:
		if n != 0 {
			t.Errorf("collected %d results from a frame the GPU has not finished", n)
		}
	case <-time.After(5 * time.Second):
		vkg.SetEvent(q.Dev.Handle, ev)
		t.Fatal("Collect blocked on unfinished GPU work")
	}
	vkg.SetEvent(q.Dev.Handle, ev)
	q.Wait(f)
	rs := collectAll(t, p, 1)
	if rs[0].Name != 7 {
		t.Errorf("name %d", rs[0].Name)
	}
}

// Eight goroutines record at once, each into its own command buffer:
// every pair arrives once, whether the slot holds them all or, with host
// query reset, grows under them from 64 queries (the blocks made by
// whichever Begin finds the slot full, the others waiting for it), read
// back through the driver or from EndFrame's copy.
func TestConcurrentRecording(t *testing.T) {
	const workers, zones = 8, 200
	for _, c := range []struct {
		name    string
		queries uint32
		copy    bool
	}{{"room for all", 2 * workers * zones, false}, {"room for all, copied", 2 * workers * zones, true}, {"growing", 64, false}, {"growing, copied", 64, true}} {
		t.Run(c.name, func(t *testing.T) { concurrentRecording(t, workers, zones, c.queries, c.copy) })
	}
}

func concurrentRecording(t *testing.T, workers, zones int, queries uint32, copied bool) {
	q := vktest.Graphics(t, vk.Config{})
	if queries < uint32(2*workers*zones) && !q.Dev.HostQueryReset {
		t.Skipf("no host query reset on %s", q.Dev.Caps.Name)
	}
	p := newPool(t, q, querypool.Config{Queries: queries, FramesInFlight: 1})
	f := q.Fence()
	cmds := make([]vkg.CommandBuffer, workers)
	for w := range cmds {
		cmds[w] = vktest.NewQueue(t, q.Dev, q.Q).Cmd() // a command pool per goroutine, as Vulkan requires
	}
	if err := p.BeginFrame(1, cmds[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < zones; i++ {
				pr, ok := p.Begin(cmds[w], top, uint32(w*zones+i))
				if !ok {
					t.Errorf("worker %d zone %d refused", w, i)
					return
				}
				p.End(pr, cmds[w], bottom)
			}
		}(w)
	}
	wg.Wait()
	last := q.Cmd() // runs after the workers' command buffers: the copy goes there
	if copied {
		p.EndFrame(last)
	} else {
		p.EndFrame(nil)
	}
	q.Submit(f, append(cmds, last)...)
	q.Wait(f)
	var rs []querypool.Result
	if copied {
		// Frames with no zones follow, each with its copy: a copy that
		// ran before the workers' last timestamps landed (lavapipe runs
		// bottom-of-pipe timestamps late) is copied again, and one that
		// still lacks them is read by the pool's goroutine, which a
		// loaded machine may run only frames later: up to 200 frames.
		// While that goroutine holds the readback, Collect skips its
		// pass, and the ring of slots can fill: such a frame, with no
		// zones, goes without a slot (ErrNoFreeSlot), as the pool says
		// an application that falls behind does.
		for frame := uint64(2); frame < 200 && len(rs) < workers*zones; frame++ {
			if err := p.BeginFrame(frame, nil); err != nil && !errors.Is(err, querypool.ErrNoFreeSlot) {
				t.Fatal(err)
			}
			more, err := p.Collect(nil)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, more...)
			c := q.Cmd()
			p.EndFrame(c)
			q.Submit(f, c)
			q.Wait(f)
		}
		if len(rs) != workers*zones {
			t.Fatalf("collected %d results from the copies, want %d; stats %+v", len(rs), workers*zones, p.Stats())
		}
	} else {
		rs = collectAll(t, p, workers*zones)
	}
	seen := make(map[uint32]bool)
	for _, r := range rs {
		if seen[r.Name] {
			t.Fatalf("zone %d twice", r.Name)
		}
		seen[r.Name] = true
	}
	if len(seen) != workers*zones {
		t.Errorf("%d distinct zones, want %d", len(seen), workers*zones)
	}
	if st := p.Stats(); st.QueryLimit != 0 || (st.Extended == 0) != (queries >= uint32(2*workers*zones)) {
		t.Errorf("stats %+v", st)
	}
}

func TestMisuseIsCounted(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{StaleFrames: 3, FramesInFlight: 1})
	f := q.Fence()

	// Begin with no frame begun.
	if _, ok := p.Begin(q.Cmd(), top, 1); ok {
		t.Error("Begin outside a frame was accepted")
	}
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	a, _ := p.Begin(cmd, top, 1)
	if !p.End(a, cmd, bottom) {
		t.Error("first End refused")
	}
	if p.End(a, cmd, bottom) {
		t.Error("second End recorded")
	}
	if p.End(querypool.Pair{}, cmd, bottom) {
		t.Error("End of the zero Pair recorded")
	}
	never, _ := p.Begin(cmd, top, 2) // never ended
	p.EndFrame(nil)
	q.Submit(f, cmd)
	q.Wait(f)
	var rs []querypool.Result
	// The slot holds an open zone: nothing comes out until it is stale.
	for frame := uint64(2); frame <= 6; frame++ {
		c := q.Cmd()
		if err := p.BeginFrame(frame, c); err != nil {
			t.Fatal(err)
		}
		p.EndFrame(nil)
		q.Submit(f, c)
		q.Wait(f)
		var err error
		if rs, err = p.Collect(rs); err != nil {
			t.Fatal(err)
		}
	}
	if rs, err := p.Drain(rs); err != nil {
		t.Fatal(err)
	} else if len(rs) != 1 || rs[0].Name != 1 {
		t.Errorf("results %+v, want the one ended zone", rs)
	}
	// Ending the abandoned zone now records nothing.
	late := q.Cmd()
	if p.End(never, late, bottom) {
		t.Error("End after the slot was given up recorded a write")
	}
	q.SubmitWait(late)
	s := p.Stats()
	if s.Misuse != 2 || s.Unended != 1 || s.LateEnds != 1 || s.NoFrame != 1 {
		t.Errorf("stats %+v: want Misuse 2, Unended 1, LateEnds 1, NoSlot 1", s)
	}
	// After Close everything is refused, nothing panics.
	vkg.DeviceWaitIdle(q.Dev.Handle)
	p.Close()
	if err := p.BeginFrame(9, nil); !errors.Is(err, querypool.ErrClosed) {
		t.Errorf("BeginFrame after Close: %v", err)
	}
	if _, err := p.Collect(nil); !errors.Is(err, querypool.ErrClosed) {
		t.Errorf("Collect after Close: %v", err)
	}
	if _, ok := p.Begin(late, top, 1); ok {
		t.Error("Begin after Close accepted")
	}
}

func TestBadConfig(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	for _, bits := range []uint32{65} {
		if _, err := querypool.New(q.Dev, querypool.Config{ValidBits: bits}); err == nil {
			t.Errorf("ValidBits %d accepted", bits)
		}
	}
}

func TestValuesMasked(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{ValidBits: 12})
	f := q.Fence()
	cmd := q.Cmd()
	p.BeginFrame(1, cmd)
	for i := 0; i < 20; i++ {
		pr, _ := p.Begin(cmd, top, uint32(i))
		p.End(pr, cmd, bottom)
	}
	p.EndFrame(nil)
	q.Submit(f, cmd)
	q.Wait(f)
	for _, r := range collectAll(t, p, 20) {
		if r.Begin >= 1<<12 || r.End >= 1<<12 {
			t.Fatalf("value past 12 bits: %+v", r)
		}
	}
}

// With the copy recorded by EndFrame, Collect alone brings every result
// back, FramesInFlight frames later, without any driver call.
func TestCollectReadsCopies(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	const inFlight = 2
	p := newPool(t, q, querypool.Config{FramesInFlight: inFlight})
	var fences [inFlight]vkg.Fence
	var cmds [inFlight]vkg.CommandBuffer
	for i := range fences {
		fences[i] = q.Fence()
	}
	var got []querypool.Result
	const frames = 50
	for f := uint64(1); f <= frames+inFlight; f++ {
		i := f % inFlight
		if f > inFlight {
			q.Wait(fences[i])
			q.Free(cmds[i])
		}
		cmds[i] = q.Cmd()
		if err := p.BeginFrame(f, cmds[i]); err != nil {
			t.Fatal(err)
		}
		if f <= frames {
			for z := 0; z < 3; z++ {
				pr, _ := p.Begin(cmds[i], top, uint32(z))
				p.End(pr, cmds[i], bottom)
			}
		}
		p.EndFrame(cmds[i])
		q.Submit(fences[i], cmds[i])
		var err error
		if got, err = p.Collect(got); err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.Frame+inFlight > f {
				t.Fatalf("frame %d: result of frame %d read before the application waited for it", f, r.Frame)
			}
		}
	}
	t.Logf("%d results, stats %+v", len(got), p.Stats())
	if len(got) != 3*frames {
		t.Fatalf("%d results, want %d; stats %+v", len(got), 3*frames, p.Stats())
	}
	for k, r := range got {
		if r.Frame != uint64(k/3+1) || r.Name != uint32(k%3) || r.End < r.Begin {
			t.Fatalf("result %d: %+v", k, r)
		}
	}
}

// Closing the device closes the pool first (its query pools go while the
// device exists); afterwards every call is refused, none touches Vulkan.
func TestDeviceCloseClosesPool(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	q := vktest.NewQueue(t, d, d.Queues[0])
	p, err := querypool.New(d, querypool.Config{ValidBits: q.Q.ValidBits, FramesInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	open, _ := p.Begin(cmd, top, 1)
	q.Destroy()
	d.Close()
	if err := p.BeginFrame(2, nil); !errors.Is(err, querypool.ErrClosed) {
		t.Errorf("BeginFrame: %v", err)
	}
	if _, ok := p.Begin(nil, top, 2); ok {
		t.Error("Begin accepted")
	}
	if p.End(open, nil, bottom) {
		t.Error("End recorded")
	}
	p.EndFrame(nil)
	if _, err := p.Collect(nil); !errors.Is(err, querypool.ErrClosed) {
		t.Errorf("Collect: %v", err)
	}
	if _, err := p.Drain(nil); !errors.Is(err, querypool.ErrClosed) {
		t.Errorf("Drain: %v", err)
	}
	p.Close()
	if s := p.Stats(); s.Closed != 1 || s.LateEnds != 1 {
		t.Errorf("stats %+v: want Closed 1, LateEnds 1", s)
	}
	if _, err := querypool.New(d, querypool.Config{ValidBits: 64}); !errors.Is(err, vk.ErrDeviceClosed) {
		t.Errorf("New on a closed device: %v", err)
	}
}

// A slot recycled (its generation renewed), then a frame that outgrows it:
// the block made then hands out pairs of the slot's generation, so every
// End records and every zone arrives. (Blocks once started at generation
// 0: after a recycle their pairs' Ends were refused, and the pairs counted
// nowhere.)
func TestGrowthAfterRecycle(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HostQueryReset {
		t.Skipf("no host query reset on %s", q.Dev.Caps.Name)
	}
	p := newPool(t, q, querypool.Config{Slots: 1, MaxSlots: 1, FramesInFlight: 1, Queries: 8, MaxQueries: 64})
	f := q.Fence()
	for frame, zones := range []int{2, 2, 20, 20} {
		cmd := q.Cmd()
		if err := p.BeginFrame(uint64(frame+1), cmd); err != nil {
			t.Fatal(err)
		}
		for i := range zones {
			pr, ok := p.Begin(cmd, top, uint32(i))
			if !ok {
				t.Fatalf("frame %d: zone %d refused", frame+1, i)
			}
			if !p.End(pr, cmd, bottom) {
				t.Fatalf("frame %d: zone %d's End refused; stats %+v", frame+1, i, p.Stats())
			}
		}
		p.EndFrame(nil)
		q.Submit(f, cmd)
		q.Wait(f)
		collectAll(t, p, zones)
	}
	if st, inFlight, _ := p.Account(); st.Pairs != st.Collected || inFlight != 0 || st.LateEnds != 0 {
		t.Errorf("stats %+v, %d in flight", st, inFlight)
	}
}

// Without host query reset, Drain does not read through the driver a
// frame the application has not waited for: its reset is in its first
// command buffer, and read before that ran, its queries may hold the last
// frame's values, marked available (NVIDIA hands them over; the
// render-loop checker's seed 54 got zones 9 ms before their submission).
// lavapipe's driver read waits for the device instead, so here the old
// Drain hung on a GPU held by an event; now it leaves the frame, and reads
// it once the application has gone on to its next frame.
func TestDrainLeavesFramesNotWaitedFor(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{NoHostQueryReset: true})
	if q.Dev.HostQueryReset {
		t.Skip("host query reset is on")
	}
	p := newPool(t, q, querypool.Config{FramesInFlight: 1})
	ev, f := q.Event(), q.Fence()
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	q.WaitEvent(cmd, ev)
	pr, _ := p.Begin(cmd, top, 7)
	p.End(pr, cmd, bottom)
	p.EndFrame(nil)
	q.Submit(f, cmd)
	done := make(chan int, 1)
	go func() {
		rs, _ := p.Drain(nil)
		done <- len(rs)
	}()
	select {
	case n := <-done:
		if n != 0 {
			t.Errorf("Drain read %d results of a frame the application had not waited for", n)
		}
	case <-time.After(3 * time.Second):
		vkg.SetEvent(q.Dev.Handle, ev)
		<-done
		t.Fatal("Drain read through the driver a frame the application had not waited for (and waited for the GPU)")
	}
	vkg.SetEvent(q.Dev.Handle, ev)
	q.Wait(f)
	p.Advance(2)
	collectAll(t, p, 1)
}

// The results a caller holds are never written by the pool, whatever
// buffer it hands the next call: the last result (as GPU does), none, or
// an older result it lets go.
func TestCollectBuffersNotShared(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{FramesInFlight: 1})
	frame := func(id uint64) {
		cmd := q.Cmd()
		if err := p.BeginFrame(id, cmd); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			pr, _ := p.Begin(cmd, top, 1)
			p.End(pr, cmd, bottom)
		}
		p.EndFrame(nil)
		f := q.Fence()
		q.Submit(f, cmd)
		q.Wait(f)
	}
	held := map[uint64][]querypool.Result{} // by frame: what the caller holds
	var last []querypool.Result
	for id := uint64(1); id <= 12; id++ {
		frame(id)
		var buf []querypool.Result
		switch id % 3 {
		case 0:
			buf = last[:0] // the caller lets its last result go
			delete(held, id-1)
		case 1:
			if old, ok := held[id-2]; ok {
				buf = old[:0] // an older one
				delete(held, id-2)
			}
		}
		rs, err := p.Drain(buf)
		if err != nil {
			t.Fatal(err)
		}
		held[id], last = rs, rs
		for f, rs := range held {
			if len(rs) != 3 || rs[0].Frame != f || rs[1].Frame != f || rs[2].Frame != f {
				t.Fatalf("after frame %d, frame %d's results read %+v: the pool wrote what the caller holds", id, f, rs)
			}
		}
	}
}

// TestEndsRacingAcrossCommandBuffers ends every pair twice at once: on one
// thread in the command buffer it began in (End's path without a locked
// instruction) and on another in a second command buffer (EndIn's, with
// one). Exactly one of each two records its timestamp, the other is
// misuse, and the frame reads back whole.
func TestEndsRacingAcrossCommandBuffers(t *testing.T) {
	const pairs = 4000
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{Queries: 2 * pairs, FramesInFlight: 1})
	f := q.Fence()
	own := q.Cmd()
	other := vktest.NewQueue(t, q.Dev, q.Q).Cmd() // its own command pool: recorded on another thread
	if err := p.BeginFrame(1, own); err != nil {
		t.Fatal(err)
	}
	prs := make([]querypool.Pair, pairs)
	for i := range prs {
		pr, ok := p.Begin(own, top, uint32(i))
		if !ok {
			t.Fatalf("pair %d refused", i)
		}
		prs[i] = pr
	}
	var wins [2][pairs]bool
	var start, wg sync.WaitGroup
	start.Add(1)
	for k, cmd := range []vkg.CommandBuffer{own, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start.Wait()
			for i := range prs {
				wins[k][i] = p.End(prs[i], cmd, bottom)
			}
		}()
	}
	start.Done()
	wg.Wait()
	both, neither, elsewhere := 0, 0, 0
	for i := range prs {
		switch {
		case wins[0][i] && wins[1][i]:
			both++
		case !wins[0][i] && !wins[1][i]:
			neither++
		case wins[1][i]:
			elsewhere++
		}
	}
	if both != 0 || neither != 0 {
		t.Fatalf("of %d pairs, %d recorded twice and %d not at all", pairs, both, neither)
	}
	t.Logf("%d of %d pairs ended in the other command buffer", elsewhere, pairs)
	p.EndFrame(nil)
	q.Submit(f, own, other)
	q.Wait(f)
	rs := collectAll(t, p, pairs)
	seen := make(map[uint32]bool, pairs)
	for _, r := range rs {
		if seen[r.Name] || r.End < r.Begin {
			t.Fatalf("zone %d read back twice, or ending before it began: %+v", r.Name, r)
		}
		seen[r.Name] = true
	}
	if st := p.Stats(); st.Misuse != pairs {
		t.Errorf("stats %+v: want Misuse %d, one End of each pair", st, pairs)
	}
}
