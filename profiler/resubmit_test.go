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
// balance, and Stats.Resubmitted says what it saw.
func TestResubmittedWithoutRecord(t *testing.T) {
	t.Run("host reset", func(t *testing.T) { resubmitWithoutRecord(t, vk.Config{}) })
	t.Run("command reset", func(t *testing.T) { resubmitWithoutRecord(t, vk.Config{NoHostQueryReset: true}) })
}

func resubmitWithoutRecord(t *testing.T, cfg vk.Config) {
	d, q, p, g := uncheckedGPU(t, cfg, 2)
	static, own := p.Name("static"), p.Name("own")
	submit := p.Name("submit")
	main := p.CPUTrack("main")
	const frames = 200
	fences := [2]vkg.Fence{q.Fence(), q.Fence()}
	cmds := q.Cmds(2)
	q.End(cmds...)
	var inFlight [2]bool
	st := q.Cmd()
	q.End(st)
	for f := range frames {
		slot := f % 2
		if inFlight[slot] {
			q.Wait(fences[slot])
		}
		p.BeginFrame()
		cmd := cmds[slot]
		q.Begin(cmd)
		g.BeginFrame(cmd)
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
		g.Submit(s, st, cmd)
		q.Resubmit(fences[slot], st, cmd)
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
	if stats.Resubmitted != frames-1 || !stats.Balanced() || stats.Issued != 3+3*frames {
		t.Errorf("stats %+v: want %d resubmitted, %d issued, balanced", stats, frames-1, 3+3*frames)
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
