package querypool

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
			if got := olderC(w, g); got != want {
				t.Errorf("C's older(%d, %d) = %v, want %v (%d generations back)", w, g, got, want, back)
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

// Frames end, and the pool closes, while goroutines hand out pairs on
// their own command buffers (never submitted: their slots go stale and
// are given up): every Begin that returned a pair is counted once in
// Pairs, none lost to a frame that ended under it, and each is accounted
// for by a cause once the pool has closed. Two pools on one device run at
// once, so that their frames' ends wait for Begins at the same time. The
// zone path's C half runs here (a device with vkCmdWriteTimestamp
// loaded). A stress test: each of about 1,500 frames ends while the
// goroutines are inside Begin; with fs_guard_sync made to return at once,
// most runs lose a pair and fail.
func TestFramesEndUnderBegins(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HostQueryReset {
		t.Skipf("no host query reset on %s", q.Dev.Caps.Name)
	}
	for round := range 4 {
		var wg sync.WaitGroup
		for pool := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				framesEndUnderBegins(t, q, round, pool)
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}

func framesEndUnderBegins(t *testing.T, q *vktest.Queue, round, pool int) {
	p, err := New(q.Dev, Config{ValidBits: q.Q.ValidBits, FramesInFlight: 1, StaleFrames: 1, Queries: 64})
	if err != nil {
		t.Error(err)
		return
	}
	defer p.Close()
	if p.writeTS == 0 {
		t.Error("the zone path's C half is not in use: no vkCmdWriteTimestamp loaded")
		return
	}
	if err := p.BeginFrame(1, nil); err != nil {
		t.Error(err)
		return
	}
	const workers, zones = 3, 5000
	var wg sync.WaitGroup
	var begun [workers]uint64
	stop := make(chan struct{})
	for w := range workers {
		cmd := vktest.NewQueue(t, q.Dev, q.Q).Cmd()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for begun[w] < zones {
				select {
				case <-stop:
					return
				default:
				}
				pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, uint32(begun[w]))
				if !ok {
					runtime.Gosched()
					continue
				}
				begun[w]++
				p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	closing := round%2 == 1 // close while a frame records and goroutines begin
frames:
	for frame := uint64(2); frame < 2000; frame++ {
		// End the frame while the goroutines are handing out pairs.
		for i := 0; i < 1e4; i++ {
			if s := p.cur.Load(); s == nil || s.next.Load() >= 16 {
				break
			}
			runtime.Gosched()
		}
		if closing && frame == 40 {
			break
		}
		p.EndFrame(nil)
		if _, err := p.Drain(nil); err != nil {
			t.Error(err)
			break
		}
		if err := p.BeginFrame(frame, nil); err != nil && !errors.Is(err, ErrNoFreeSlot) {
			t.Error(err)
			break
		}
		select {
		case <-done:
			break frames
		default:
		}
	}
	p.Close()
	close(stop)
	<-done
	var n uint64
	for _, b := range begun {
		n += b
	}
	st := p.Stats()
	if st.Pairs != n || n == 0 {
		t.Errorf("round %d, pool %d: %d pairs handed out, Stats.Pairs %d: %+v", round, pool, n, st.Pairs, st)
	}
	if causes := st.Collected + st.Unended + st.Unsubmitted + st.Pending; causes != n {
		t.Errorf("round %d, pool %d: %d pairs handed out, %d accounted for: %+v", round, pool, n, causes, st)
	}
	t.Logf("round %d, pool %d: %+v", round, pool, st)
}

// A pool closed with a frame's results unread counts each pair under what
// happened to it: ended ones as Pending, one never ended as Unended (the
// slot's release keeps the frame's generation for that count).
func TestCloseCountsEndedAsPending(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p, err := New(q.Dev, Config{ValidBits: q.Q.ValidBits, FramesInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, uint32(i))
		if !ok {
			t.Fatal("refused")
		}
		if i < 2 {
			p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit)
		}
	}
	p.EndFrame(nil) // never submitted
	p.Close()
	if st := p.Stats(); st.Pairs != 3 || st.Pending != 2 || st.Unended != 1 || st.Collected+st.Unsubmitted != 0 {
		t.Fatalf("stats %+v: want 3 pairs, 2 pending, 1 unended", st)
	}
}

// Threads that record a zone and then end leave their guard record for the
// next thread (a goroutine that ends locked to its thread ends the
// thread), so the records never outnumber the threads alive at once.
func TestGuardRecordsReused(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p, err := New(q.Dev, Config{ValidBits: q.Q.ValidBits, FramesInFlight: 1, Queries: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cmd := q.Cmd()
	if err := p.BeginFrame(1, cmd); err != nil {
		t.Fatal(err)
	}
	zone := func() {
		if pr, ok := p.Begin(cmd, vkg.PipelineStageTopOfPipeBit, 0); ok {
			p.End(pr, cmd, vkg.PipelineStageBottomOfPipeBit)
		}
	}
	zone()
	before, _ := guardRecords()
	const threads = 64
	for range threads {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			zone()
		}()
		<-done // cmd is recorded by one goroutine at a time
	}
	after, used := guardRecords()
	t.Logf("guard records: %d before, %d after %d threads ended (%d held); membarrier: %v", before, after, threads, used, guardFenceless)
	if after-before > 8 {
		t.Fatalf("%d guard records after %d threads ended, %d before: an ended thread's record is not reused", after, threads, before)
	}
}

// The guard's path where membarrier is missing: every Begin fences. The
// test runs the stress test and the concurrent recording tests again in a
// process with GuardFenceEnv set.
func TestGuardFenceMode(t *testing.T) {
	initGuard()
	if os.Getenv(GuardFenceEnv) == "1" {
		if guardFenceless {
			t.Fatalf("%s=1, and Begin goes without a fence", GuardFenceEnv)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^(TestFramesEndUnderBegins|TestConcurrentRecording|TestGuardFenceMode)$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), GuardFenceEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with %s=1: %v\n%s", GuardFenceEnv, err, out)
	}
	for _, name := range []string{"TestFramesEndUnderBegins", "TestConcurrentRecording", "TestGuardFenceMode"} {
		if !bytes.Contains(out, []byte("--- PASS: "+name)) {
			t.Errorf("with %s=1, %s did not pass:\n%s", GuardFenceEnv, name, out)
		}
	}
}
