package profiler_test

import (
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// A command buffer recorded once in a frame without GPU.Record and
// submitted again in every later frame, beside one recorded each frame:
// the pattern the docs refuse (its later executions are not timed, and
// write queries without a reset, which the validation layer reports). The
// library keeps the old frame's queries out of use once a Submit names the
// command buffer again: no later frame's zones share them, so each frame's
// own zones keep their times (three in a row, in recording order, inside
// their submission), no query the old command buffer writes is reset on
// the host while it runs (lavapipe's queue thread crashed), the books
// balance with every execution of the old command buffer's zones counted
// Resubmitted, in Stats and in the trace, and Stats.Resubmitted says
// how many command buffers it saw.
func TestResubmittedWithoutRecord(t *testing.T) {
	t.Run("host reset", func(t *testing.T) { resubmitWithoutRecord(t, vk.Config{}, 0) })
	t.Run("command reset", func(t *testing.T) { resubmitWithoutRecord(t, vk.Config{NoHostQueryReset: true}, 0) })
}

// The same command buffer, after its 100 executions, recorded again with
// no zone at all and submitted 100 times more: Submit cannot tell it from
// one submitted again, but the library counts an execution only once its
// timestamp is seen to change, so these 100 count nothing, and the books
// hold the GPU's executions exactly.
func TestRecordedAgainWithoutZonesNotCounted(t *testing.T) {
	resubmitWithoutRecord(t, vk.Config{}, 100)
}

// resubmitWithoutRecord runs 200 frames; with plain > 0, the static
// command buffer is recorded again without zones for the last plain.
func resubmitWithoutRecord(t *testing.T, cfg vk.Config, plain int) {
	d, q, p, g := uncheckedGPU(t, cfg, 2)
	static, own := p.Name("static"), p.Name("own")
	submit := p.Name("submit")
	main := p.CPUTrack("main")
	const frames = 200
	fences := [2]vkg.Fence{q.Fence(), q.Fence()}
	cmds, firsts := q.Cmds(2), q.Cmds(2)
	q.End(cmds...)
	q.End(firsts...)
	var inFlight [2]bool
	st := q.Cmd()
	q.End(st)
	for f := range frames {
		slot := f % 2
		if inFlight[slot] {
			q.Wait(fences[slot])
		}
		p.BeginFrame()
		// The frame's first command buffer, which the queue runs before
		// the static one: with command resets, BeginFrame records the
		// frame's query reset there.
		first, cmd := firsts[slot], cmds[slot]
		q.Begin(first)
		g.BeginFrame(first)
		q.End(first)
		q.Begin(cmd)
		if f == frames-plain && plain > 0 {
			q.Wait(fences[1-slot]) // its last execution is over
			inFlight[1-slot] = false
			q.BeginWith(st, 0)
			q.End(st)
		}
		if f == 0 {
			// Recorded in the first frame, first: its zones take the
			// frame's first queries, which each later frame's own zones
			// would take too.
			q.BeginWith(st, 0)
			outer := g.Zone(st, static)
			g.Zone(st, static).End()
			g.Zone(st, static).End()
			outer.End()
			q.End(st)
		}
		for range 3 {
			g.Zone(cmd, own).End()
		}
		g.EndFrame(cmd)
		q.End(cmd)
		s := main.Span(submit)
		g.Submit(s, first, st, cmd)
		q.Resubmit(fences[slot], first, st, cmd)
		inFlight[slot] = true
		s.End()
		p.EndFrame()
	}
	vkg.DeviceWaitIdle(d.Handle)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	stats := g.Stats()
	tr := p.Dump()
	t.Logf("%d frames: %d issued, %d delivered, %d resubmitted; drops %+v", frames, stats.Issued, stats.Delivered, stats.Resubmitted, tr.Drops)
	// Every execution of a zone is issued as the library sees it run:
	// the static command buffer's 3 in each frame, the frame's own 3;
	// those of the static one's executions after the first are counted
	// RunAgain, in Stats and in the trace's books. This loop submits the
	// static command buffer while its last execution may still be
	// pending (it lacks the simultaneous-use flag: Vulkan's rules are
	// broken twice), so the first executions may run before the library
	// reads the first one's time, and be unseen: never more counted than
	// ran, at most two executions fewer.
	executed := uint64(3*(frames-plain) + 3*frames)
	again := uint64(3 * (frames - plain - 1))
	drops := stats.Drops
	unseen := again - min(again, drops.RunAgain)
	t.Logf("%d zones executed: %d delivered, %d counted run again, %d unseen", executed, stats.Delivered, drops.RunAgain, unseen)
	if stats.Resubmitted != frames-1 || !stats.Balanced() || stats.Issued+unseen != executed ||
		drops.RunAgain > again || unseen > 6 || drops.Total() != drops.RunAgain {
		t.Errorf("stats %+v: want %d command buffers resubmitted, %d zones issued, %d counted run again (6 fewer at most) and nothing else, balanced",
			stats, frames-1, executed, again)
	}
	if tr.Drops.RunAgain != drops.RunAgain || tr.Ledger.Zones.Issued != stats.Issued {
		t.Errorf("the trace's books: %d issued, %d run again; the context's: %d, %d",
			tr.Ledger.Zones.Issued, tr.Drops.RunAgain, stats.Issued, drops.RunAgain)
	}
	if u := books.Unbalanced(&tr.Ledger, tr.Drops); len(u) > 0 {
		t.Errorf("the trace's books %v do not balance: %+v, %+v", u, tr.Ledger, tr.Drops)
	}
	ownInOrder(t, tr, p, frames)
}

// uncheckedGPU opens a device without the validation layer's check (for
// the patterns the docs refuse, which it reports), wraps it, and makes a
// profiler with a context of fif frames in flight on its graphics queue.
func uncheckedGPU(t *testing.T, cfg vk.Config, fif int) (*vk.Device, *vktest.Queue, *profiler.Profiler, *profiler.GPU) {
	t.Helper()
	d := vktest.OpenUnchecked(t, cfg)
	gq, ok := d.QueueFor("graphics")
	if !ok {
		gq = d.Queues[0]
	}
	q := vktest.NewQueue(t, d, gq)
	dev := wrapWith(t, q, false)
	pq, err := dev.Queue(gq.Family, gq.Index)
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	g, err := p.GPU(dev, pq, profiler.GPUOptions{FramesInFlight: fif})
	if err != nil {
		t.Fatal(err)
	}
	// Calibrated before the first frame: a zone read back before the
	// calibrator's first sample is counted Uncalibrated, which these
	// tests of resubmission do not allow for (under make test's load, 1
	// zone in 900 was).
	if err := g.Calibrate(); err != nil {
		t.Fatal(err)
	}
	return d, q, p, g
}

// ownInOrder checks each frame's three "own" zones: all there, one after
// the other in recording order (a zone given another's times overlaps its
// neighbours), each after the span that submitted it.
func ownInOrder(t *testing.T, tr *timeline.Trace, p *profiler.Profiler, frames int) {
	t.Helper()
	byFrame := map[uint64][]timeline.Span{}
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track).Kind; (k == timeline.TrackGPUQueue || k == timeline.TrackGPULane) && tr.Name(s.Name) == "own" {
			byFrame[s.Frame] = append(byFrame[s.Frame], s)
		}
	}
	submitted := map[uint64]int64{}
	for _, s := range tr.Spans {
		if tr.Name(s.Name) == "submit" {
			submitted[s.Frame] = s.Start
		}
	}
	if len(byFrame) != frames {
		t.Errorf("own zones in %d frames, want %d", len(byFrame), frames)
	}
	bad := 0
	for f, zs := range byFrame {
		ok := len(zs) == 3
		for i := 0; ok && i < len(zs); i++ {
			e := int64(zs[i].ErrNs)
			ok = zs[i].Start+e >= submitted[f] && (i == 0 || zs[i].Start+e >= zs[i-1].End)
		}
		if !ok {
			if bad++; bad <= 3 {
				t.Errorf("frame %d: own zones %+v, submitted at %d: not three in a row after it", f, zs, submitted[f])
			}
		}
	}
	if bad > 3 {
		t.Errorf("%d frames so in all", bad)
	}
}

// The patterns of an application that records command buffers once and
// submits them every frame without GPU.Record, as the docs of earlier
// versions let it: one per frame slot (the slot's only command buffer),
// one static command buffer with the simultaneous-use flag submitted in
// every frame beside one recorded each frame, and one static without it
// beside one recorded each frame. Every execution the GPU ran is
// delivered or counted (run again), nothing is counted that did not run,
// and the books balance; the log gives executed / delivered / counted and
// the validation layer's messages (its queries are written without a
// reset, which it reports).
func TestResubmittedShapes(t *testing.T) {
	for _, c := range []struct {
		name              string
		perSlot, simulUse bool
	}{{"per slot", true, false}, {"simultaneous use", false, true}, {"static beside per-frame", false, false}} {
		t.Run(c.name, func(t *testing.T) { resubmittedShape(t, c.perSlot, c.simulUse) })
	}
}

func resubmittedShape(t *testing.T, perSlot, simulUse bool) {
	const frames, fif = 300, 3
	w0, e0 := vk.ValidationCounts()
	d, q, p, g := uncheckedGPU(t, vk.Config{}, fif)
	static, own, submit := p.Name("static"), p.Name("own"), p.Name("submit")
	main := p.CPUTrack("main")
	var fences [fif]vkg.Fence
	var inFlight [fif]bool
	cmds := q.Cmds(fif)
	q.End(cmds...)
	for i := range fences {
		fences[i] = q.Fence()
	}
	st := q.Cmd()
	q.End(st)
	executed := uint64(0)
	for f := range frames {
		slot := f % fif
		if inFlight[slot] {
			q.Wait(fences[slot])
		}
		p.BeginFrame()
		cmd := cmds[slot]
		var subs []vkg.CommandBuffer
		switch {
		case perSlot && f < fif: // recorded once, in its slot's first frame
			q.Begin(cmd)
			g.BeginFrame(cmd)
			for range 3 {
				g.Zone(cmd, static).End()
			}
			g.EndFrame(cmd)
			q.End(cmd)
			subs = []vkg.CommandBuffer{cmd}
		case perSlot:
			g.BeginFrame(nil) // host query reset: no command buffer recorded
			g.EndFrame(nil)
			subs = []vkg.CommandBuffer{cmd}
		default:
			q.Begin(cmd)
			g.BeginFrame(cmd)
			if f == 0 { // in the frame's queries, as the frame's own
				var flags vkg.CommandBufferUsageFlagBits
				if simulUse {
					flags = vkg.CommandBufferUsageSimultaneousUseBit
				}
				q.BeginWith(st, flags)
				g.Zone(st, static).End()
				g.Zone(st, static).End()
				g.Zone(st, static).End()
				q.End(st)
			}
			for range 2 {
				g.Zone(cmd, own).End()
			}
			g.EndFrame(cmd)
			q.End(cmd)
			executed += 2
			subs = []vkg.CommandBuffer{st, cmd}
		}
		executed += 3
		if prev := (f + fif - 1) % fif; !perSlot && !simulUse && inFlight[prev] {
			// Without the simultaneous-use flag it may not be pending
			// when submitted again: its last execution is waited for.
			q.Wait(fences[prev])
			inFlight[prev] = false
		}
		s := main.Span(submit)
		g.Submit(s, subs...)
		q.Resubmit(fences[slot], subs...)
		inFlight[slot] = true
		s.End()
		p.EndFrame()
	}
	vkg.DeviceWaitIdle(d.Handle)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	st2, tr := g.Stats(), p.Dump()
	w1, e1 := vk.ValidationCounts()
	t.Logf("%d frames, %d in flight: %d zones executed, %d delivered, %d counted run again, %d counted otherwise; validation: %d errors, %d warnings",
		frames, fif, executed, st2.Delivered, st2.Drops.RunAgain, st2.Drops.Total()-st2.Drops.RunAgain, e1-e0, w1-w0)
	if st2.Issued != executed || st2.Delivered+st2.Drops.RunAgain != executed || !st2.Balanced() {
		t.Errorf("the GPU executed %d zones: %d issued, %d delivered, %d run again (%+v)", executed, st2.Issued, st2.Delivered, st2.Drops.RunAgain, st2)
	}
	if u := books.Unbalanced(&tr.Ledger, tr.Drops); len(u) > 0 || tr.Drops.RunAgain != st2.Drops.RunAgain {
		t.Errorf("the trace's books %v: %+v, %+v", u, tr.Ledger, tr.Drops)
	}
}
