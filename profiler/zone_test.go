package profiler

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// A zone around vkCmdWaitEvents measures the wait. The command buffer
// sets a "started" event right after the zone's begin timestamp, and the
// host sets the event the GPU waits on D ms after it saw "started"; so
// the GPU was inside the zone for all of [started, set] and no longer
// than [submitted, fence wait returned]. Those host readings bound the
// measurement both ways whatever the machine's load; the slack (2 ms
// below, 1 ms above) is for the clocks' rates and tick resolution, not
// for latency.
func TestZoneMeasuresEventWait(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{})
	wait := r.p.Name("wait")
	period := float64(r.dev.Caps().TimestampPeriod)
	h := r.q.Dev.Handle
	for _, d := range []int{5, 20, 50} {
		t.Run(fmt.Sprintf("%dms", d), func(t *testing.T) {
			ev, started := r.q.Event(), r.q.Event()
			f := r.q.Fence()
			r.p.BeginFrame()
			cmd := r.q.Cmd()
			r.g.BeginFrame(cmd)
			if err := r.g.Err(); err != nil {
				t.Fatal(err)
			}
			z := r.g.Zone(cmd, wait)
			vkg.CmdSetEvent(cmd, started, vkg.PipelineStageFlags(vkg.PipelineStageAllCommandsBit))
			r.q.WaitEvent(cmd, ev)
			z.End()
			r.g.EndFrame(cmd)
			r.p.EndFrame()
			submitted := timeline.Now()
			r.q.Submit(f, cmd)
			for deadline := time.Now().Add(time.Minute); vkg.GetEventStatus(h, started) != vkg.EventSet; {
				if time.Now().After(deadline) {
					vkg.SetEvent(h, ev)
					t.Fatal("the GPU did not start the command buffer in a minute")
				}
				time.Sleep(20 * time.Microsecond)
			}
			began := timeline.Now() // the zone's begin timestamp is written by now
			sleepMs(d)
			set := timeline.Now()
			vkg.SetEvent(h, ev)
			r.q.Wait(f)
			done := timeline.Now()
			zs, err := r.g.Drain(nil)
			if err != nil || len(zs) != 1 {
				t.Fatalf("zones %v, err %v", zs, err)
			}
			z0 := zs[0]
			measured := float64(z0.End-z0.Begin) * period
			inside, outside := float64(set-began), float64(done-submitted)
			t.Logf("D=%d ms: inside the zone for certain %.3f ms, measured %.3f ms (%+.3f ms), converted %.3f ms ± %d ns; at most %.3f ms",
				d, inside/1e6, measured/1e6, (measured-inside)/1e6, float64(z0.Dur())/1e6, z0.ErrNs, outside/1e6)
			if measured < inside-2e6 {
				t.Errorf("zone measured %.3f ms: less than the %.3f ms the GPU certainly spent in it, less 2 ms", measured/1e6, inside/1e6)
			}
			if measured > outside+1e6 {
				t.Errorf("zone measured %.3f ms: more than the %.3f ms from submit to the fence, plus 1 ms", measured/1e6, outside/1e6)
			}
			if !z0.Converted {
				t.Fatal("zone not converted to host time")
			}
			if diff := math.Abs(float64(z0.Dur()) - measured); diff > 1e5+2*float64(z0.ErrNs) {
				t.Errorf("converted duration %d ns differs from ticks x period %.0f ns by more than 100 µs + 2 x %d ns", z0.Dur(), measured, z0.ErrNs)
			}
			// On the host's clock, within the error bound: the zone began
			// after the submit and before the host saw "started", and ended
			// after the host set the event and before the fence wait returned.
			e := z0.ErrNs
			if z0.Start+e < submitted || z0.Start-e > began {
				t.Errorf("zone began at %d ± %d, not within [submitted %d, started seen %d]", z0.Start, e, submitted, began)
			}
			if z0.Stop+e < set || z0.Stop-e > done {
				t.Errorf("zone ended at %d ± %d, not within [event set %d, fence wait returned %d]", z0.Stop, e, set, done)
			}
			r.q.Free(cmd)
		})
	}
}

func TestNestedZonesInsideParents(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{})
	names := []Name{r.p.Name("frame"), r.p.Name("pass"), r.p.Name("draw"), r.p.Name("copy")}
	zs := r.frame(func(cmd vkg.CommandBuffer) {
		defer r.g.Zone(cmd, names[0]).End()
		for i := 0; i < 3; i++ {
			func() {
				defer r.g.Zone(cmd, names[1]).End()
				for j := 0; j < 2; j++ {
					r.g.Zone(cmd, names[2]).End()
				}
			}()
		}
		r.g.Zone(cmd, names[3]).End()
	})
	if len(zs) != 1+3+6+1 {
		t.Fatalf("%d zones, want 11", len(zs))
	}
	wantDepth := map[Name]uint16{names[0]: 0, names[1]: 1, names[2]: 2, names[3]: 1}
	for i, z := range zs {
		if z.Depth != wantDepth[z.Name] {
			t.Errorf("zone %d (%s): depth %d, want %d", i, r.p.rec.NameOf(z.Name), z.Depth, wantDepth[z.Name])
		}
		if z.End < z.Begin {
			t.Errorf("zone %d ends before it begins", i)
		}
	}
	outer := zs[0]
	for _, z := range zs[1:] {
		if z.Begin < outer.Begin || z.End > outer.End {
			t.Errorf("zone [%d,%d] outside the frame zone [%d,%d]", z.Begin, z.End, outer.Begin, outer.End)
		}
	}
	// Each draw lies inside the pass recorded around it.
	var pass ZoneResult
	for _, z := range zs[1:] {
		switch z.Name {
		case names[1]:
			pass = z
		case names[2]:
			if z.Begin < pass.Begin || z.End > pass.End {
				t.Errorf("draw [%d,%d] outside its pass [%d,%d]", z.Begin, z.End, pass.Begin, pass.End)
			}
		}
	}
	if err := r.p.Dump().Validate(); err != nil {
		t.Errorf("timeline: %v", err)
	}
}

func TestConcurrentCommandBuffersLoseNothing(t *testing.T) {
	const workers, zones = 8, 100
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, QueriesPerFrame: 4096})
	name := r.p.Name("work")
	queues := make([]*vktest.Queue, workers)
	for i := range queues {
		queues[i] = vktest.NewQueue(t, r.q.Dev, r.q.Q) // one command pool per goroutine
	}
	for frame := 0; frame < 3; frame++ {
		r.p.BeginFrame()
		r.g.BeginFrame(nil)
		if err := r.g.Err(); err != nil {
			t.Fatal(err)
		}
		cmds := make([]vkg.CommandBuffer, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			cmds[w] = queues[w].Cmd()
			wg.Add(1)
			go func(cmd vkg.CommandBuffer) {
				defer wg.Done()
				for i := 0; i < zones; i++ {
					z := r.g.Zone(cmd, name)
					if i%2 == 0 {
						r.g.Zone(cmd, name).End()
					}
					z.End()
				}
			}(cmds[w])
		}
		wg.Wait()
		r.g.submitted(cmds)
		r.g.EndFrame(nil)
		r.p.EndFrame()
		r.q.SubmitWait(cmds...)
		zs, err := r.g.Drain(nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := workers * zones * 3 / 2; len(zs) != want {
			t.Fatalf("frame %d: %d zones, want %d; stats %+v", frame, len(zs), want, r.g.Stats())
		}
		for _, z := range zs {
			if z.Key == 0 {
				t.Fatal("zone without its submission key")
			}
		}
	}
	if s := r.g.Stats(); s.Drops.Total()+s.Drops.Misuse != 0 {
		t.Errorf("lost zones: %+v", s)
	}
}

// A frame over its query budget: without host query reset, the zones over
// it are dropped and counted, and the next frames get more queries; with
// it, the frame gets them at once, up to MaxQueriesPerFrame, past which
// zones are dropped and counted.
func TestPoolOverflowCountedExactly(t *testing.T) {
	for _, hostReset := range []bool{false, true} {
		r := newRig(t, vk.Config{NoHostQueryReset: !hostReset}, GPUOptions{FramesInFlight: 1, QueriesPerFrame: 16, MaxQueriesPerFrame: 32})
		if r.q.Dev.HostQueryReset != hostReset {
			t.Skipf("hostQueryReset is %v on %s", r.q.Dev.HostQueryReset, r.q.Dev.Caps.Name)
		}
		name := r.p.Name("z")
		zs := r.frame(func(cmd vkg.CommandBuffer) {
			for i := 0; i < 21; i++ {
				r.g.Zone(cmd, name).End()
			}
		})
		fit, dropped := 8, uint64(13)
		if hostReset {
			fit, dropped = 16, 5
		}
		if len(zs) != fit || r.g.Stats().Drops.QueryLimit != dropped {
			t.Fatalf("host reset %v: %d zones and %d dropped, want %d and %d", hostReset, len(zs), r.g.Stats().Drops.QueryLimit, fit, dropped)
		}
		zs = r.frame(func(cmd vkg.CommandBuffer) { // grown to 32 queries
			for i := 0; i < 21; i++ {
				r.g.Zone(cmd, name).End()
			}
		})
		if len(zs) != 16 || r.g.Stats().Drops.QueryLimit != dropped+5 {
			t.Fatalf("host reset %v: after growth: %d zones and %d dropped, want 16 and %d", hostReset, len(zs), r.g.Stats().Drops.QueryLimit, dropped+5)
		}
		if got := r.p.Dump().Drops.QueryLimit; got != dropped+5 {
			t.Errorf("host reset %v: the timeline reports %d zones dropped, want %d", hostReset, got, dropped+5)
		}
	}
}

// 1000 frames, 3 in flight, each held on its own event: the host sets
// events[i] only just before it waits on fences[i], so whenever Collect
// runs none of the frames in flight can finish (the GPU is stuck on the
// oldest). A Collect that waited for any of them would deadlock; a
// watchdog then releases the GPU and fails the test. Every zone of every
// frame comes back, none before its frame could run.
func TestThousandFramesNeverBlock(t *testing.T) {
	const frames, inFlight = 1000, 3
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: inFlight})
	outer, inner := r.p.Name("frame"), r.p.Name("draw")
	h := r.q.Dev.Handle
	var fences [inFlight]vkg.Fence
	var events [inFlight]vkg.Event
	var cmds [inFlight]vkg.CommandBuffer
	for i := range fences {
		fences[i], events[i] = r.q.Fence(), r.q.Event()
	}
	release := func() {
		for _, e := range events {
			vkg.SetEvent(h, e)
		}
	}
	t.Cleanup(release) // however the test ends, the GPU can finish
	var got []ZoneResult
	var early int
	for f := 0; f < frames; f++ {
		i := f % inFlight
		if f >= inFlight {
			vkg.SetEvent(h, events[i]) // frame f-inFlight may run now
			r.q.Wait(fences[i])
			r.q.Free(cmds[i])
			vkg.ResetEvent(h, events[i])
		}
		id := r.p.BeginFrame()
		cmds[i] = r.q.Cmd()
		r.g.BeginFrame(cmds[i])
		if err := r.g.Err(); err != nil {
			t.Fatalf("frame %d: %v; slots %v", f, err, r.g.pool.Debug())
		}
		r.q.WaitEvent(cmds[i], events[i])
		z := r.g.Zone(cmds[i], outer)
		r.g.Zone(cmds[i], inner).End()
		z.End()
		r.g.submitted([]vkg.CommandBuffer{cmds[i]})
		r.g.EndFrame(cmds[i])
		r.p.EndFrame()
		r.q.Submit(fences[i], cmds[i])
		// Frames id-inFlight+1 .. id are held: Collect must not wait for
		// them. The watchdog is no timing assertion: a minute is for a
		// deadlock only.
		fired := make(chan struct{})
		watchdog := time.AfterFunc(time.Minute, func() { release(); close(fired) })
		n := len(got)
		var err error
		got, err = r.g.Collect(got), r.g.Err()
		if !watchdog.Stop() {
			<-fired
			t.Fatalf("frame %d: Collect waited for frames held on the GPU (the watchdog released them after a minute)", f)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, z := range got[n:] {
			if z.Frame+inFlight > id {
				early++
			}
		}
	}
	t.Logf("%d zones collected while their successors were held", len(got))
	release()
	vkg.DeviceWaitIdle(h)
	got, _ = r.g.Drain(got)
	if early != 0 {
		t.Errorf("%d zones came back before their frame's GPU work could run", early)
	}
	if len(got) != 2*frames {
		t.Errorf("%d zones, want %d; stats %+v", len(got), 2*frames, r.g.Stats())
	}
	seen := map[uint64]int{}
	for _, z := range got {
		seen[z.Frame]++
	}
	for f := uint64(1); f <= frames; f++ {
		if seen[f] != 2 {
			t.Fatalf("frame %d: %d zones, want 2", f, seen[f])
		}
	}
}

func TestMisuseNeverPanics(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1})
	name := r.p.Name("x")
	// Collect with nothing submitted.
	if zs, err := r.g.Collect(nil), r.g.Err(); err != nil || len(zs) != 0 {
		t.Errorf("empty Collect: %v, %v", zs, err)
	}
	// A zone outside any frame is refused and counted; its End is fine.
	if z := r.g.Zone(r.q.Cmd(), name); z.Valid() {
		t.Error("zone outside a frame accepted")
	} else {
		z.End()
	}
	var nilGPU *GPU
	if z := nilGPU.Zone(nil, name); z.Valid() {
		t.Error("nil GPU gave a zone")
	} else {
		z.End() // a nil GPU profiles nothing: not misuse
	}
	zs := r.frame(func(cmd vkg.CommandBuffer) {
		z := r.g.Zone(cmd, name)
		z.End()
		z.End() // twice
	})
	if len(zs) != 1 {
		t.Errorf("%d zones, want 1", len(zs))
	}
	st := r.g.Stats()
	if st.Drops.Misuse != 1 || st.Drops.NoFrame != 1 {
		t.Errorf("stats %+v: want Misuse 1 (End twice), NoFrame 1", st)
	}
	// Ending the zero Zone does nothing, as runtime/trace's no-op region.
	zs = r.frame(func(cmd vkg.CommandBuffer) {
		Zone{}.End()
		Zone{}.EndIn(cmd)
		var z Zone
		z.End()
	})
	if len(zs) != 0 {
		t.Errorf("%d zones, want none", len(zs))
	}
	st = r.g.Stats()
	if st.Drops.Misuse != 1 || st.Drops.NoFrame != 1 {
		t.Errorf("stats %+v: want Misuse still 1, NoFrame 1", st)
	}
	if d := r.p.Dump().Drops; d.Misuse != 1 || d.Unended != 0 {
		t.Errorf("timeline Drops %+v: want Misuse 1 (End twice), not losses", d)
	}
	// After Close: refused, counted, no panic, no use of the device.
	vkg.DeviceWaitIdle(r.q.Dev.Handle)
	r.g.Close()
	r.g.Close()
	r.g.BeginFrame(nil)
	if err := r.g.Err(); err != nil {
		t.Errorf("BeginFrame after Close: Err %v: closing is not a fault", err)
	}
	if z := r.g.Zone(r.q.Cmd(), name); z.Valid() {
		t.Error("Zone after Close accepted")
	}
	if zs, err := r.g.Collect(nil), r.g.Err(); err != nil || len(zs) != 0 {
		t.Errorf("Collect after Close: %d zones, Err %v", len(zs), err)
	}
	if err := r.g.Calibrate(); err != ErrClosed {
		t.Errorf("Calibrate after Close: %v", err)
	}
}

func TestZoneNeverEndedIsCounted(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1})
	name := r.p.Name("open")
	var open Zone
	r.frame(func(cmd vkg.CommandBuffer) { open = r.g.Zone(cmd, name) })
	for i := 0; i < 70; i++ { // past StaleFrames (64)
		r.frame(func(cmd vkg.CommandBuffer) {})
	}
	late := r.q.Cmd()
	open.EndIn(late) // after the slot was given up: records nothing
	r.q.SubmitWait(late)
	st := r.g.Stats()
	if st.Drops.Unended != 1 || st.Drops.Misuse != 1 {
		t.Errorf("stats %+v: want Unended 1, Misuse 1 (the late End)", st)
	}
	r.g.Collect(nil) // drops reach the timeline with the next Collect
	if d := r.p.Dump().Drops; d.Unended != 1 || d.Misuse != 1 {
		t.Errorf("timeline Drops %+v: want Unended 1 (never ended), Misuse 1 (the late End)", d)
	}
}
