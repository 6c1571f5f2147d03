package profiler_test

import (
	"cmp"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/testkit/czcall"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// reusable records the recording's zones into cmd, begun to be submitted
// many times: a frame zone holding two draws, 3 zones.
func (a *app) reusable(cmd vkg.CommandBuffer) {
	a.q.BeginWith(cmd, 0)
	rec := a.g.Record(cmd)
	func() {
		defer a.g.Zone(cmd, a.frameZone).End()
		a.g.Zone(cmd, a.draw).End()
		a.g.Zone(cmd, a.draw).End()
	}()
	rec.End()
	a.q.End(cmd)
}

// resubmit runs one frame that submits the recorded cmds (and, when
// fresh is set, a command buffer recorded in the frame, with its zones,
// first), waiting first for the frame slot's last use.
func (a *app) resubmit(slot int, fresh bool, cmds ...vkg.CommandBuffer) {
	a.t.Helper()
	var record func() vkg.CommandBuffer
	if fresh {
		record = func() vkg.CommandBuffer {
			cmd := a.cmds[slot]
			a.q.Begin(cmd)
			a.g.BeginFrame(cmd)
			a.work(cmd)
			a.g.EndFrame(cmd)
			a.q.End(cmd)
			return cmd
		}
	}
	a.runFrame(slot, 3*len(cmds), record, cmds...)
}

// runFrame runs one frame on slot, waiting first for the slot's last
// use: it submits cmds, which hold zones zones, after the command buffer
// record (nil: none) records in the frame, with its own zones.
func (a *app) runFrame(slot, zones int, record func() vkg.CommandBuffer, cmds ...vkg.CommandBuffer) {
	a.t.Helper()
	if a.inFlight[slot] {
		a.q.Wait(a.fences[slot])
	}
	a.p.BeginFrame()
	all := cmds
	if record != nil {
		all = append([]vkg.CommandBuffer{record()}, cmds...)
	}
	s := a.main.Span(a.submit)
	a.g.Submit(s, all...)
	a.q.Resubmit(a.fences[slot], all...)
	a.inFlight[slot] = true
	s.End()
	a.cpuSpans++
	a.frames++
	a.zones += zones
	a.p.EndFrame()
}

// Command buffers recorded once and submitted every frame, as vkcube and
// the Vulkan tutorials do (one per frame slot), and beside command
// buffers recorded every frame (a static one per slot, as engines keep
// for what does not change): every execution's zones reach the trace, in
// the frame of their submission with its arrow, and the validation layer
// says nothing (no query written without a reset).
func TestRecordingsRunManyTimes(t *testing.T) {
	for _, c := range []struct {
		name  string
		fif   int
		fresh bool
	}{{"per slot", 3, false}, {"per slot, one in flight", 1, false}, {"beside per-frame ones", 2, true}} {
		t.Run(c.name, func(t *testing.T) {
			a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: c.fif}})
			static := a.q.Cmds(len(a.cmds))
			for _, cmd := range static {
				a.q.End(cmd) // vktest hands them out begun
				a.reusable(cmd)
			}
			for f := range 60 {
				a.resubmit(f%len(static), c.fresh, static[f%len(static)])
			}
			tr := a.finish()
			a.expect(tr, 0, timeline.Drops{})
			want := 3
			if c.fresh {
				want += 7
			}
			zonesByFrame(t, tr, 60, want)
		})
	}
}

// A recording recorded again (Record again after vkBeginCommandBuffer)
// reads its last execution first and goes on; one never submitted is
// counted Unsubmitted at Close, its zones once.
func TestRecordingRecordedAgain(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	static := a.q.Cmds(2)
	for _, cmd := range static {
		a.q.End(cmd)
		a.reusable(cmd)
	}
	for f := range 40 {
		slot := f % 2
		if f%10 == 9 {
			a.q.Wait(a.fences[slot])
			a.inFlight[slot] = false
			a.reusable(static[slot])
		}
		a.resubmit(slot, false, static[slot])
	}
	never := a.q.Cmd()
	a.q.End(never)
	a.reusable(never)
	a.zones += 3
	a.expect(a.finish(), 3, timeline.Drops{Unsubmitted: 3})
}

// zonesByFrame checks that each of the trace's frames has want GPU zones.
func zonesByFrame(t *testing.T, tr *timeline.Trace, frames, want int) {
	t.Helper()
	gpu := map[timeline.TrackID]bool{}
	for _, k := range tr.Tracks {
		gpu[k.ID] = k.Kind == timeline.TrackGPUQueue || k.Kind == timeline.TrackGPULane
	}
	per := map[uint64]int{}
	for _, s := range tr.Spans {
		if gpu[s.Track] {
			per[s.Frame]++
		}
	}
	// Each execution's zones come after the span that submitted them:
	// a time given to another execution would not, one frame in two.
	for _, fl := range tr.Flows {
		from, to := tr.Spans[fl.From], tr.Spans[fl.To]
		if to.Start+int64(to.ErrNs) < from.Start {
			t.Errorf("a zone of frame %d starts %d ns before the span that submitted it", to.Frame, from.Start-to.Start)
			break
		}
	}
	if len(per) != frames {
		t.Errorf("GPU zones in %d frames, want %d", len(per), frames)
	}
	for f, n := range per {
		if n != want {
			t.Errorf("frame %d has %d GPU zones, want %d", f, n, want)
		}
	}
}

// A secondary command buffer recorded once (outside a render pass) and
// executed from a primary recorded every frame: its zones reach the trace
// at every execution, with the submission's arrow, and the validation
// layer says nothing.
func TestRecordingCachedSecondary(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	secs := a.q.Secondaries(len(a.cmds))
	for _, sec := range secs {
		a.q.BeginSecondaryWith(sec, 0)
		rec := a.g.Record(sec)
		func() {
			defer a.g.Zone(sec, a.frameZone).End()
			a.g.Zone(sec, a.draw).End()
			a.g.Zone(sec, a.draw).End()
		}()
		rec.End()
		a.q.End(sec)
	}
	for f := range 40 {
		slot := f % len(a.cmds)
		if a.inFlight[slot] {
			a.q.Wait(a.fences[slot])
		}
		a.p.BeginFrame()
		cmd := a.cmds[slot]
		a.q.Begin(cmd)
		a.g.BeginFrame(cmd)
		a.g.Zone(cmd, a.pass).End()
		vkg.CmdExecuteCommands(cmd, 1, secs[slot:slot+1])
		a.g.EndFrame(cmd)
		a.q.End(cmd)
		s := a.main.Span(a.submit)
		a.g.Submit(s, cmd, secs[slot])
		a.q.Resubmit(a.fences[slot], cmd)
		a.inFlight[slot] = true
		s.End()
		a.cpuSpans++
		a.frames++
		a.zones += 4
		a.p.EndFrame()
	}
	tr := a.finish()
	a.expect(tr, 0, timeline.Drops{})
	zonesByFrame(t, tr, 40, 4)
}

// A recording with the simultaneous-use flag submitted again while its
// last execution still runs (held on an event the host sets later): the
// two executions write the same queries, which Vulkan forbids, so neither
// is timed, and both are counted as Overlapped; nothing else is lost and
// the books balance. (The validation layer may report the queries: this
// is the pattern the docs refuse.)
func TestRecordingOverlapCounted(t *testing.T) {
	d, q, p, g := uncheckedGPU(t, vk.Config{}, 3)
	name, submit := p.Name("z"), p.Name("submit")
	main := p.CPUTrack("main")
	ev := q.Event()
	cmd := q.Cmd()
	q.End(cmd)
	q.BeginWith(cmd, vkg.CommandBufferUsageSimultaneousUseBit)
	rec := g.Record(cmd)
	q.WaitEvent(cmd, ev)
	for range 3 {
		g.Zone(cmd, name).End()
	}
	rec.End()
	q.End(cmd)
	for range 2 { // both pending at once: the first waits for the event
		p.BeginFrame()
		s := main.Span(submit)
		g.Submit(s, cmd)
		q.Resubmit(nil, cmd)
		s.End()
		p.EndFrame()
	}
	vkg.SetEvent(d.Handle, ev)
	vkg.DeviceWaitIdle(d.Handle)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	st := g.Stats()
	t.Logf("2 executions of 3 zones at once: %d issued, %d delivered, %d overlapped", st.Issued, st.Delivered, st.Drops.Overlapped)
	if st.Drops.Overlapped != 6 || st.Delivered != 0 || !st.Balanced() || st.Issued != 6 {
		t.Errorf("two overlapping executions of 3 zones: %+v", st)
	}
	tr := p.Dump()
	if tr.Drops.Overlapped != 6 || len(books.Unbalanced(&tr.Ledger, tr.Drops)) > 0 {
		t.Errorf("the trace: drops %+v, books %+v", tr.Drops, tr.Ledger)
	}
}

// A recording whose End never comes (the application ends the command
// buffer without it) has no copy of its results: each execution Submit
// names is counted, as Unended, and the books balance (they lost 1,188 of
// 1,200 zones without a count before).
func TestRecordingNeverEnded(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 1}})
	cmd := a.q.Cmd()
	a.q.End(cmd)
	a.q.BeginWith(cmd, 0)
	a.g.Record(cmd) // and no End
	for range 3 {
		a.g.Zone(cmd, a.draw).End()
	}
	a.q.End(cmd)
	for range 10 {
		a.resubmit(0, false, cmd)
	}
	a.expect(a.finish(), 30, timeline.Drops{Unended: 30})
}

// Command buffers made recordings and freed, many more than the 256
// recordings a context keeps at once, as a program under the layer does
// (which makes every command buffer a recording) when it allocates
// command buffers and frees them: each freed after its execution, with
// GPU.Freed, every zone reaches the trace and none is refused (without
// Freed, the 257th Record is refused and its zones counted NoFrame).
// They are allocated at once: the driver gives a freed handle out again,
// which makes a new recording of the old one's place.
func TestRecordingsFreed(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	cmds := a.q.Cmds(300) // all at once: a freed handle may come back
	for i, cmd := range cmds {
		slot := i % 2
		a.q.End(cmd)
		a.reusable(cmd)
		a.resubmit(slot, false, cmd)
		a.q.Wait(a.fences[slot])
		a.inFlight[slot] = false
		a.g.Freed(cmd)
		a.q.Free(cmd)
	}
	a.expect(a.finish(), 0, timeline.Drops{})
}

// reusableC records the recording's zones into cmd through its zone path
// for C (Recording.C, as C code calls it): a frame zone holding two draws.
func (a *app) reusableC(cmd vkg.CommandBuffer) {
	a.q.BeginWith(cmd, 0)
	rec := a.g.Record(cmd)
	z := rec.C()
	if z == nil {
		a.t.Fatal("Recording.C: nil for an open recording")
	}
	frame := czcall.Begin(z, cmd, uint32(a.frameZone))
	for range 2 {
		d := czcall.Begin(z, cmd, uint32(a.draw))
		if d < 0 {
			a.t.Fatalf("a draw's begin refused: %d", d)
		}
		czcall.End(z, d, cmd)
	}
	if frame < 0 {
		a.t.Fatalf("the frame zone's begin refused: %d", frame)
	}
	czcall.End(z, frame, cmd)
	rec.End()
	a.q.End(cmd)
}

// A recording whose zones C code records itself (Recording.C, the zone
// path the Vulkan layer calls from C with no call into Go a zone): every
// execution's zones reach the trace, nested, with their arrows, as
// through Zone, and the validation layer says nothing; a context that
// mirrors debug labels hands C no zone path (its zones need Go).
func TestRecordingC(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	static := a.q.Cmds(2)
	for _, cmd := range static {
		a.q.End(cmd)
		a.reusableC(cmd)
	}
	for f := range 30 {
		a.resubmit(f%2, false, static[f%2])
	}
	tr := a.finish()
	a.expect(tr, 0, timeline.Drops{})
	zonesByFrame(t, tr, 30, 3)

	b := newApp(t, appConfig{labels: true})
	cmd := b.q.Cmd()
	b.q.End(cmd)
	b.q.BeginWith(cmd, 0)
	rec := b.g.Record(cmd)
	if z := rec.C(); z != nil {
		t.Error("Recording.C handed C a zone path for a context that mirrors debug labels")
	}
	rec.End()
	b.q.End(cmd)
	b.expect(b.finish(), 0, timeline.Drops{})
}

// A context made in the application's 101st frame (as the layer makes
// one when a device is made again mid-run), whose first recording runs
// before the context has seen a frame begin, held back on the GPU (an
// event the host sets later) while Collect polls: the execution is still
// to come, not given up as never run, and its zone reaches the trace once
// it runs. The context's frame clock once started at 0, so that the
// first poll found the execution 100 frames old, past StaleFrames (64),
// and counted it Unsubmitted (found on an H100 by the checker's loops
// under the layer, TestCheckerLoopsUnderLayer seed 25, 1 run in 2).
func TestRecordingOfContextMadeLate(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	dev := wrapWith(t, q, false)
	gq, err := dev.Queue(q.Q.Family, q.Q.Index)
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	for range 100 {
		p.BeginFrame()
		p.EndFrame()
	}
	p.BeginFrame() // the context is made in a frame, as the layer makes it
	g, err := p.GPU(dev, gq, profiler.GPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, cmd, fence := q.Event(), q.Cmd(), q.Fence()
	q.End(cmd) // vktest hands it out begun
	q.BeginWith(cmd, 0)
	q.WaitEvent(cmd, ev)
	rec := g.Record(cmd)
	g.Zone(cmd, p.Name("held")).End()
	rec.End()
	q.End(cmd)
	s := p.CPUTrack("main").Span(p.Name("submit"))
	g.Submit(s, cmd)
	q.Resubmit(fence, cmd)
	s.End()
	g.Collect(nil) // the GPU waits for the event: nothing in yet
	vkg.SetEvent(q.Dev.Handle, ev)
	q.Wait(fence)
	g.Collect(nil)
	p.EndFrame()
	g.Close()
	tr := p.Dump()
	if d := tr.Drops; d.Total() != 0 {
		t.Errorf("drops %+v, want none", d)
	}
	n := 0
	for _, sp := range tr.Spans {
		if tr.Name(sp.Name) == "held" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d zones held, want 1", n)
	}
}

// A command buffer recorded again and again in one frame, as a program
// that submits and waits many times a frame does: each execution is read
// when its command buffer is recorded again, 300 of them before the frame
// is collected. Every zone reaches the trace with its own execution's
// times: each execution's outer zone after the last's.
func TestRecordingRecordedAgainManyTimesAFrame(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	cmd := a.q.Cmd()
	a.q.End(cmd)
	const runs = 300
	a.p.BeginFrame()
	for range runs {
		a.reusable(cmd)
		s := a.main.Span(a.submit)
		a.g.Submit(s, cmd)
		a.q.Resubmit(a.fences[0], cmd)
		s.End()
		a.q.Wait(a.fences[0])
		a.cpuSpans++
		a.zones += 3
	}
	a.frames++
	a.p.EndFrame()
	tr := a.finish()
	a.expect(tr, 0, timeline.Drops{})
	gpu := map[timeline.TrackID]bool{}
	for _, k := range tr.Tracks {
		gpu[k.ID] = k.Kind == timeline.TrackGPUQueue || k.Kind == timeline.TrackGPULane
	}
	var outer []timeline.Span
	for _, s := range tr.Spans {
		if gpu[s.Track] && s.Depth == 0 {
			outer = append(outer, s)
		}
	}
	slices.SortFunc(outer, func(x, y timeline.Span) int { return cmp.Compare(x.Start, y.Start) })
	if len(outer) != runs {
		t.Fatalf("%d outer zones, want %d", len(outer), runs)
	}
	for i := 1; i < len(outer); i++ {
		if prev := outer[i-1]; outer[i].Start < prev.End-int64(prev.ErrNs+outer[i].ErrNs) {
			t.Fatalf("execution %d's zone [%d, %d] overlaps the one before it, [%d, %d]: an execution given another's times",
				i, outer[i].Start, outer[i].End, prev.Start, prev.End)
		}
	}
}

// A device closed while its context's recordings still hold zone paths
// for C (a program under the layer that destroys its device with its
// command pools alive, which the driver tolerates): the context keeps
// them as Close does, and no collection finds a pinned pointer leaked.
// Before, the context was dropped with them, and the runtime's finalizer
// panicked ("found leaking pinned pointer") at a later collection.
func TestDeviceClosedWithZonePaths(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	cmds := a.q.Cmds(2)
	for i, cmd := range cmds {
		a.q.End(cmd)
		a.reusableC(cmd)
		a.resubmit(i, false, cmd)
	}
	vkg.DeviceWaitIdle(a.q.Dev.Handle)
	a.dev.Close() // the context goes with the device: not closed, never freed
	a.g = nil
	for range 5 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.p.Close(); err != nil {
		t.Fatal(err)
	}
}
