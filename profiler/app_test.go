package profiler_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/testkit/leakcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// app is an application that profiles its own render loop the way the
// public API allows: its own device (made by vktest, validation on) handed
// to the profiler with WrapDevice, its own command buffers and fences, a
// ring of FramesInFlight frames, a CPU span around each submission marked
// with the submission's key. It counts what it recorded, so that a test
// can compare the trace with it.
type app struct {
	t    *testing.T
	q    *vktest.Queue
	dev  *profiler.Device
	p    *profiler.Profiler
	g    *profiler.GPU
	main profiler.CPUTrack

	opts   profiler.GPUOptions // g's
	labels bool                // the device was wrapped with DebugUtils

	cmds     []vkg.CommandBuffer // one per frame the application keeps in flight
	fences   []vkg.Fence
	inFlight []bool
	frames   int

	submit, frameZone, pass, draw profiler.Name

	goroutines int // before the profiler was made

	zones     int // zones ended in submitted command buffers: each should arrive, with its flow
	cpuSpans  int // CPU spans ended
	collected int // zones Collect returned
	converted int // of them, on the host clock
}

// appConfig sets an app up.
type appConfig struct {
	vk       vk.Config
	gpu      profiler.GPUOptions
	recorder record.Options
	ring     int // command buffers in flight; 0: gpu.FramesInFlight (or 3)
	labels   bool
	// apiVersion, when set, is what the application tells WrapDevice of
	// its instance's version; else the version it was made with.
	apiVersion *uint32
}

// wrapWith hands the application's device to WrapDevice, with every
// queue it made.
func wrapWith(t *testing.T, q *vktest.Queue, labels bool, api ...uint32) *profiler.Device {
	t.Helper()
	d := q.Dev
	version := d.Instance.APIVersion
	if len(api) > 0 {
		version = api[0]
	}
	ids := make([]profiler.QueueID, len(d.Queues))
	for i, x := range d.Queues {
		ids[i] = profiler.QueueID{Family: x.Family, Index: x.Index}
	}
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: ids,
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", DebugUtils: labels && d.Instance.DebugUtils,
		APIVersion: version,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A test that fails half-way still closes the wrapper (and its
	// contexts) before vktest destroys the device.
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(d.Handle)
		dev.Close()
	})
	return dev
}

// goroutines counts the goroutines of the process, once they have settled.
func goroutines() int {
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	return runtime.NumGoroutine()
}

func newApp(t *testing.T, c appConfig) *app {
	t.Helper()
	q := vktest.Graphics(t, c.vk)
	leakcheck.Check(t, 2*time.Second) // the profiler's goroutines end with it
	g0 := goroutines()
	var api []uint32
	if c.apiVersion != nil {
		api = append(api, *c.apiVersion)
	}
	dev := wrapWith(t, q, c.labels, api...)
	gq, err := dev.Queue(q.Q.Family, q.Q.Index)
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.NewWith(c.recorder)
	c.gpu.DebugLabels = c.labels
	g, err := p.GPU(dev, gq, c.gpu)
	if err != nil {
		t.Fatal(err)
	}
	ring := c.ring
	if ring == 0 {
		ring = max(c.gpu.FramesInFlight, 1)
		if c.gpu.FramesInFlight == 0 {
			ring = 3
		}
	}
	a := &app{t: t, q: q, dev: dev, p: p, g: g, opts: c.gpu, labels: c.labels, main: p.CPUTrack("main"), goroutines: g0,
		cmds: q.Cmds(ring), inFlight: make([]bool, ring),
		submit: p.Name("submit"), frameZone: p.Name("frame"), pass: p.Name("pass"), draw: p.Name("draw")}
	for _, c := range a.cmds {
		vkg.EndCommandBuffer(c) // vktest hands them out begun: frame begins them again
		a.fences = append(a.fences, q.Fence())
	}
	return a
}

// work records a frame's zones into cmd: a frame zone holding two passes
// of two draws, 7 zones, each with a little GPU work (a buffer fill would
// need a buffer; a pipeline barrier is enough to order the timestamps).
func (a *app) work(cmd vkg.CommandBuffer) {
	defer a.g.Zone(cmd, a.frameZone).End()
	for range 2 {
		func() {
			defer a.g.Zone(cmd, a.pass).End()
			for range 2 {
				a.g.Zone(cmd, a.draw).End()
			}
		}()
	}
	a.zones += 7
}

// frame runs one frame: waits for the command buffer's last use, records
// record (the frame's zones) between the GPU context's BeginFrame and
// EndFrame, submits inside a CPU span marked with the submission's key,
// and collects.
func (a *app) frame(record func(cmd vkg.CommandBuffer)) { a.frameWith(frameOpts{}, record) }

// frameOpts are the ways a frame can stray from frame's.
type frameOpts struct {
	noBegin   bool // no GPU.BeginFrame
	tryBegin  bool // GPU.BeginFrame may fail
	nilEnd    bool // GPU.EndFrame(nil)
	noCollect bool
	// boundary: the loop of the README, four calls a frame beside zones
	// and spans (Profiler.BeginFrame, GPU.BeginFrame, GPU.EndFrame,
	// GPU.Submit): no Profiler.EndFrame, no Collect.
	boundary bool
	// submitted, when set, gives the command buffers to name to
	// GPU.Submit for the frame's command buffer cmd.
	submitted func(cmd vkg.CommandBuffer) []vkg.CommandBuffer
}

func (a *app) frameWith(o frameOpts, record func(cmd vkg.CommandBuffer)) {
	a.t.Helper()
	i := a.frames % len(a.cmds)
	if a.inFlight[i] {
		a.q.Wait(a.fences[i])
	}
	cmd := a.cmds[i]
	a.q.Begin(cmd)
	a.p.BeginFrame()
	if !o.noBegin {
		a.g.BeginFrame(cmd)
		if err := a.g.Err(); err != nil && !o.tryBegin {
			a.t.Fatalf("frame %d: GPU.BeginFrame: %v", a.frames+1, err)
		}
	}
	record(cmd)
	if o.nilEnd {
		a.g.EndFrame(nil)
	} else {
		a.g.EndFrame(cmd)
	}
	s := a.main.Span(a.submit)
	named := []vkg.CommandBuffer{cmd}
	if o.submitted != nil {
		named = o.submitted(cmd)
	}
	a.g.Submit(s, named...)
	a.q.Submit(a.fences[i], cmd)
	a.inFlight[i] = true
	s.End()
	a.cpuSpans++
	a.frames++
	if o.boundary {
		return
	}
	a.p.EndFrame()
	if !o.noCollect {
		a.collect()
	}
}

func (a *app) collect() {
	a.t.Helper()
	zs, err := a.g.Collect(nil), a.g.Err()
	if err != nil {
		a.t.Fatalf("Collect: %v", err)
	}
	a.collected += len(zs)
	for _, z := range zs {
		if z.Converted {
			a.converted++
		}
	}
}

// finish waits for the GPU, closes the profiler without Drain (Close
// collects what the GPU finished) and returns the trace as the Perfetto
// writer wrote it and its reader read it back, after checking that the
// Chrome JSON writer carries the same counts.
func (a *app) finish() *timeline.Trace {
	a.t.Helper()
	vkg.DeviceWaitIdle(a.q.Dev.Handle)
	if err := a.p.Close(); err != nil {
		a.t.Fatalf("Profiler.Close: %v", err)
	}
	if n := goroutines(); n > a.goroutines {
		a.t.Errorf("%d goroutines after Close, %d before the profiler", n, a.goroutines)
	}
	tr := a.p.Dump()
	var pb, js bytes.Buffer
	if err := perfetto.Write(&pb, tr); err != nil {
		a.t.Fatal(err)
	}
	if err := chrome.Write(&js, tr); err != nil {
		a.t.Fatal(err)
	}
	pt, err := perfetto.Read(&pb)
	if err != nil {
		a.t.Fatalf("reading the Perfetto trace: %v", err)
	}
	ct, err := chrome.Read(&js)
	if err != nil {
		a.t.Fatalf("reading the Chrome trace: %v", err)
	}
	if p, c := countTrace(pt), countTrace(ct); p != c {
		a.t.Errorf("Perfetto trace %+v, Chrome trace %+v: they differ", p, c)
	}
	return pt
}

// counts is what a trace holds.
type counts struct {
	GPU, CPU, Flows, Frames int
	Drops                   timeline.Drops
}

func countTrace(t *timeline.Trace) counts {
	kind := map[timeline.TrackID]timeline.TrackKind{}
	for _, tr := range t.Tracks {
		kind[tr.ID] = tr.Kind
	}
	c := counts{Flows: len(t.Flows), Frames: len(t.Frames), Drops: t.Drops}
	for _, s := range t.Spans {
		switch kind[s.Track] {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			c.GPU++
		case timeline.TrackCPU:
			c.CPU++
		}
	}
	return c
}

// expect checks the trace against what the application recorded: every
// zone it ended and submitted is a GPU slice with a flow from its submit
// span, every CPU span and frame is there, and the drops are want.
func (a *app) expect(tr *timeline.Trace, lost int, want timeline.Drops) {
	a.t.Helper()
	c := countTrace(tr)
	a.t.Logf("recorded %d zones, %d CPU spans, %d frames; the trace has %d GPU slices, %d flows, %d CPU slices, %d frames; drops %s",
		a.zones, a.cpuSpans, a.frames, c.GPU, c.Flows, c.CPU, c.Frames, pprof.DropsComment(c.Drops))
	if c.GPU != a.zones-lost || c.Flows != a.zones-lost || c.CPU != a.cpuSpans || c.Frames != a.frames {
		a.t.Errorf("trace has %d GPU slices, %d flows, %d CPU slices, %d frames; the application recorded %d zones (%d of them lost), %d CPU spans, %d frames",
			c.GPU, c.Flows, c.CPU, c.Frames, a.zones, lost, a.cpuSpans, a.frames)
	}
	if c.Drops != want {
		a.t.Errorf("trace drops %+v, want %+v", c.Drops, want)
	}
	checkBooks(a.t, tr, a.g.Stats())
}

// checkBooks checks a closed profiler's books: its context's balance with
// nothing open, and the trace's ledger, which balances against its drops
// with nothing open and delivered what the trace holds.
func checkBooks(t *testing.T, tr *timeline.Trace, st profiler.Stats) {
	t.Helper()
	if !st.Balanced() || st.Open != 0 {
		t.Errorf("the context's book: %d issued = %d delivered + %d open + lost (%+v): does not balance, or something is open",
			st.Issued, st.Delivered, st.Open, st)
	}
	c := countTrace(tr)
	l := tr.Ledger
	if u := books.Unbalanced(&l, tr.Drops); len(u) > 0 || l.Zones.Open+l.Spans.Open+l.Flows.Open != 0 {
		t.Errorf("the trace's books %v do not balance or are open: %+v against %+v", u, l, tr.Drops)
	}
	if l.Zones.Delivered != uint64(c.GPU) || l.Spans.Delivered != uint64(c.CPU) || l.Flows.Delivered != uint64(c.Flows) {
		t.Errorf("the books delivered %d zones, %d spans, %d flows; the trace holds %d, %d, %d",
			l.Zones.Delivered, l.Spans.Delivered, l.Flows.Delivered, c.GPU, c.CPU, c.Flows)
	}
}

// Every frames-in-flight setting from 1 to 16 delivers every zone, with
// its flow, and loses nothing: the recorder waits for the queue's word,
// not for a fixed number of frames.
func TestAppFramesInFlight(t *testing.T) {
	for _, fif := range []int{1, 2, 3, 4, 8, 16} {
		t.Run(strconv.Itoa(fif), func(t *testing.T) {
			a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: fif}})
			for range 2*fif + 8 {
				a.frame(a.work)
			}
			a.expect(a.finish(), 0, timeline.Drops{})
			// Collect returned the frames the application had waited for;
			// Close put the rest on the timeline.
			if a.collected < a.zones-7*fif || a.converted != a.collected {
				t.Errorf("Collect returned %d zones, %d converted; %d recorded, %d frames in flight", a.collected, a.converted, a.zones, fif)
			}
		})
	}
}

// An application that waits each fence as late as its FramesInFlight
// allows, right before it reuses the command buffer, and collects before
// it waits: every zone and flow still arrives.
func TestAppFencesWaitedLate(t *testing.T) {
	for _, fif := range []int{1, 3} {
		t.Run(fmt.Sprint(fif), func(t *testing.T) {
			a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: fif}})
			for range 25 {
				a.collect()
				i := a.frames % len(a.cmds)
				if a.inFlight[i] {
					a.q.Wait(a.fences[i])
					a.inFlight[i] = false
				}
				a.frame(a.work)
			}
			a.expect(a.finish(), 0, timeline.Drops{})
		})
	}
}

// The README's loop: Profiler.BeginFrame is the frame boundary (it ends
// the last frame and collects the context without waiting), Close ends the
// last frame; nothing else but GPU.BeginFrame, EndFrame and Submit. Every
// zone, arrow and frame arrives, at every frames-in-flight setting, and
// zones come back while the loop runs, not only at Close.
func TestAppFrameBoundary(t *testing.T) {
	for _, fif := range []int{1, 3, 16} {
		t.Run(fmt.Sprint(fif), func(t *testing.T) {
			a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: fif}})
			for range 40 {
				a.frameWith(frameOpts{boundary: true}, a.work)
			}
			if st := a.g.Stats(); st.Delivered == 0 {
				t.Errorf("no zone delivered while the loop ran: %+v", st)
			}
			a.expect(a.finish(), 0, timeline.Drops{})
			if err := a.g.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

// Close without Drain, right after the last submit: Close collects the
// frames still in flight.
func TestAppCloseWithoutDrain(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 3}})
	for range 4 {
		a.frame(a.work)
	}
	if a.collected == a.zones {
		t.Fatalf("all %d zones collected before Close: the case tests nothing", a.zones)
	}
	a.expect(a.finish(), 0, timeline.Drops{})
}

// Zones begun and ended after the context's Close reach the trace's books
// as they reach the context's Stats: each begun one under Drops.Closed,
// each ended one (a zone begun before Close) under Drops.Misuse. The
// context made its last delivery at Close; what it refuses later still
// gets to the recorder.
func TestAppZonesAfterCloseCounted(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	for range 4 {
		a.frame(a.work)
	}
	var open profiler.Zone
	a.frame(func(cmd vkg.CommandBuffer) {
		a.work(cmd)
		open = a.g.Zone(cmd, a.draw) // ended after Close
	})
	vkg.DeviceWaitIdle(a.q.Dev.Handle)
	a.g.Close()
	before := a.g.Stats()
	const late = 3 * 5
	for range 3 {
		a.frame(func(cmd vkg.CommandBuffer) {
			for range 5 {
				a.g.Zone(cmd, a.draw).End()
			}
		})
	}
	open.End()
	tr := a.finish()
	st := a.g.Stats()
	if st.Drops.Closed-before.Drops.Closed != late || st.Drops.Misuse-before.Drops.Misuse != 1 {
		t.Fatalf("context counted %d refusals and %d misuse after Close, want %d and 1 (%+v)",
			st.Drops.Closed-before.Drops.Closed, st.Drops.Misuse-before.Drops.Misuse, late, st.Drops)
	}
	if tr.Drops.Closed != st.Drops.Closed || tr.Drops.Misuse != st.Drops.Misuse {
		t.Errorf("trace counts %d closed, %d misuse; the context %d, %d", tr.Drops.Closed, tr.Drops.Misuse, st.Drops.Closed, st.Drops.Misuse)
	}
	checkBooks(t, tr, st)
}

// One zone left open every 10th frame costs that zone alone: later frames
// keep all theirs, and the open zones are counted as never ended.
func TestAppUnendedZones(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	open := 0
	for i := range 100 {
		a.frame(func(cmd vkg.CommandBuffer) {
			a.work(cmd)
			if i%10 == 0 {
				a.g.Zone(cmd, a.draw) // never ended
				open++
			}
		})
	}
	if st := a.g.Stats(); st.Drops.NoFrame != 0 || st.Behind != 0 {
		t.Errorf("stats %+v: later frames were refused", st)
	}
	a.expect(a.finish(), 0, timeline.Drops{Unended: uint64(open)})
}

// Ending twice and ending the zero Zone lose nothing: misuse, not loss.
func TestAppEndTwiceAndZeroZone(t *testing.T) {
	a := newApp(t, appConfig{})
	for range 5 {
		a.frame(func(cmd vkg.CommandBuffer) {
			a.work(cmd)
			z := a.g.Zone(cmd, a.draw)
			z.End()
			z.End()
			a.zones++
			var zero profiler.Zone
			zero.End()
		})
	}
	a.expect(a.finish(), 0, timeline.Drops{Misuse: 5}) // the zero Zone's End does nothing
}

// Zones recorded outside the GPU context's frame are refused, counted as
// NoFrame, and cost no other zone.
func TestAppZonesOutsideFrame(t *testing.T) {
	a := newApp(t, appConfig{})
	for range 5 {
		a.frame(func(cmd vkg.CommandBuffer) {
			a.work(cmd)
			a.g.EndFrame(cmd)
			if a.g.Zone(cmd, a.draw).Valid() {
				t.Error("a zone after EndFrame was accepted")
			}
		})
	}
	a.expect(a.finish(), 0, timeline.Drops{NoFrame: 5})
}

// Collect before anything was submitted returns nothing and no error.
func TestAppCollectBeforeSubmit(t *testing.T) {
	a := newApp(t, appConfig{})
	for range 3 {
		a.collect()
	}
	if a.collected != 0 {
		t.Fatalf("%d zones before any frame", a.collected)
	}
	for range 5 {
		a.frame(a.work)
	}
	a.expect(a.finish(), 0, timeline.Drops{})
}

// An application that does not collect for 10,000 frames: the zones of the
// frames that found no free slot are refused and counted, in the trace
// before any Collect; the first frames' zones still arrive.
func TestAppNoCollectFor10000Frames(t *testing.T) {
	frames := 10000
	if testing.Short() {
		frames = 2000
	}
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	a.collect() // the application collects: Profiler.BeginFrame leaves the context to it
	for range frames {
		// BeginFrame fails once every slot waits for a Collect.
		a.frameWith(frameOpts{tryBegin: true, noCollect: true}, a.work)
	}
	refused := a.g.Stats().Drops.NoFrame
	if refused == 0 || refused%7 != 0 {
		t.Fatalf("NoFrame %d: want whole frames of 7 zones refused", refused)
	}
	// Refusals reach the trace at the next BeginFrame: all but the last
	// frame's, with no Collect at all.
	if d := a.p.Dump().Drops; d.NoFrame != refused-7 {
		t.Errorf("before any Collect the trace counts NoSlot %d, the context %d (7 of them in the last frame)", d.NoFrame, refused)
	}
	a.collect()
	tr := a.finish()
	c := countTrace(tr)
	if c.GPU+int(refused) != a.zones {
		t.Errorf("%d zones arrived and %d were refused; %d recorded", c.GPU, refused, a.zones)
	}
	if c.Drops.NoFrame != refused || c.Drops.Total() != refused+c.Drops.Untimed+c.Drops.Flows {
		t.Errorf("trace drops %+v: want NoSlot %d and, for the late zones, Untimed and Flows only", c.Drops, refused)
	}
}

// Devices without host query reset, and without calibrated timestamps
// (the application calibrates itself), deliver every zone.
func TestAppDeviceFeatures(t *testing.T) {
	t.Run("no host query reset", func(t *testing.T) {
		a := newApp(t, appConfig{vk: vk.Config{NoHostQueryReset: true}, gpu: profiler.GPUOptions{FramesInFlight: 2}})
		for range 12 {
			a.frame(a.work)
		}
		a.expect(a.finish(), 0, timeline.Drops{})
	})
	t.Run("no calibrated timestamps", func(t *testing.T) {
		a := newApp(t, appConfig{vk: vk.Config{NoCalibrated: true}, gpu: profiler.GPUOptions{FramesInFlight: 2}})
		for range 3 {
			if err := a.g.Calibrate(); err != nil {
				t.Fatal(err)
			}
		}
		for range 12 {
			a.frame(a.work)
		}
		a.expect(a.finish(), 0, timeline.Drops{})
	})
	t.Run("no calibration at all", func(t *testing.T) {
		a := newApp(t, appConfig{vk: vk.Config{NoCalibrated: true}, gpu: profiler.GPUOptions{FramesInFlight: 1}})
		a.frame(a.work) // its zones come once the application has waited for it
		a.q.Wait(a.fences[0])
		a.inFlight[0] = false
		zs, err := a.g.Drain(nil)
		if len(zs) != 7 || !errors.Is(err, profiler.ErrNoCalibration) {
			t.Fatalf("Drain of uncalibrated zones: %d zones, error %v: want 7 and ErrNoCalibration", len(zs), err)
		}
		a.collected += len(zs)
		tr := a.finish()
		if c := countTrace(tr); c.GPU != 0 || c.Drops.Uncalibrated != uint64(a.zones) {
			t.Errorf("trace: %d GPU slices, drops %+v: want every zone Unconverted", c.GPU, c.Drops)
		}
	})
	t.Run("no debug utils", func(t *testing.T) {
		q := vktest.Graphics(t, vk.Config{})
		d := q.Dev
		dev, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
			Queues: []profiler.QueueID{{Family: q.Q.Family, Index: q.Q.Index}}, APIVersion: d.Instance.APIVersion})
		if err != nil {
			t.Fatal(err)
		}
		gq, _ := dev.Queue(q.Q.Family, q.Q.Index)
		p := profiler.New(profiler.Options{})
		if _, err := p.GPU(dev, gq, profiler.GPUOptions{DebugLabels: true}); err == nil {
			t.Error("DebugLabels without VK_EXT_debug_utils was accepted")
		}
		p.Close()
	})
}

// A queue the device was not created with, or has no timestamps, is
// refused with an error; so are Existing.Queues that do not exist.
func TestAppBadQueue(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	d := q.Dev
	base := profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, APIVersion: d.Instance.APIVersion}
	none := base
	if _, err := profiler.WrapDevice(none); err == nil {
		t.Error("WrapDevice without Existing.Queues accepted")
	}
	bad := base
	bad.Queues = []profiler.QueueID{{Family: 7, Index: 3}}
	if _, err := profiler.WrapDevice(bad); err == nil {
		t.Error("WrapDevice with a queue the device lacks accepted")
	}
	good := base
	good.Queues = []profiler.QueueID{{Family: q.Q.Family, Index: q.Q.Index}}
	dev, err := profiler.WrapDevice(good)
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	defer p.Close()
	gq, err := dev.Queue(q.Q.Family, q.Q.Index)
	if err != nil {
		t.Fatal(err)
	}
	for name, bq := range map[string]profiler.Queue{
		"family 7 index 3": {Family: 7, Index: 3, Flags: profiler.QueueGraphics, ValidBits: 64},
		"index 1":          {Family: gq.Family, Index: 1, ValidBits: 64},
		"another handle":   {Handle: vkg.Queue(vkg.NullHandle), Family: gq.Family, Index: gq.Index},
	} {
		if name == "another handle" {
			bq.Handle = vkg.Queue(unsafe.Pointer(&bq))
		}
		if g, err := p.GPU(dev, bq, profiler.GPUOptions{}); err == nil {
			g.Close()
			t.Errorf("%s: accepted", name)
		}
	}
	// Empty flags in the caller's Queue: the device's own are used.
	bq := gq
	bq.Flags = 0
	g, err := p.GPU(dev, bq, profiler.GPUOptions{})
	if err != nil {
		t.Fatalf("a device queue with empty flags: %v", err)
	}
	g.Close()
}

// Closing the device while another goroutine records zones never
// crashes: Close waits for the recording calls in progress, and later ones
// are refused and counted.
func TestAppDeviceClosedMidFrame(t *testing.T) {
	// The code before the fix crashed in every run of 40 rounds. Each round
	// is a subtest, so that its device is gone before the next is made.
	for round := range 40 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { deviceClosedMidFrame(t, round) })
	}
}

func deviceClosedMidFrame(t *testing.T, round int) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	a.p.BeginFrame()
	a.g.BeginFrame(nil)
	if err := a.g.Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 { // each goroutine records its own command buffer, from its own pool
		cmd := vktest.NewQueue(t, a.q.Dev, a.q.Q).Cmd()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				a.g.Zone(cmd, a.draw).End()
			}
		}()
	}
	time.Sleep(time.Duration(round%3) * 200 * time.Microsecond)
	a.dev.Close()
	close(stop)
	wg.Wait()
	if z := a.g.Zone(a.cmds[0], a.draw); z.Valid() {
		t.Fatal("a zone after Device.Close was accepted")
	}
	a.p.Close() // the command buffers are never submitted: freed with their pool
}

// The application submits from two goroutines under its own lock while
// the profiler calibrates by submit-and-wait on the same queue from its
// own goroutine, holding that lock: the validation layer's thread-safety
// check sees no overlap, and every zone arrives.
func TestAppSubmitsWhileLibraryCalibrates(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{NoCalibrated: true})
	q.Lock = new(sync.Mutex)
	d := q.Dev
	dev, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues: []profiler.QueueID{{Family: q.Q.Family, Index: q.Q.Index}}, HostQueryReset: d.HostQueryReset, APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	gq, _ := dev.Queue(q.Q.Family, q.Q.Index)
	p := profiler.New(profiler.Options{})
	if _, err := p.GPU(dev, gq, profiler.GPUOptions{FallbackQueue: &gq}); err == nil {
		t.Fatal("FallbackQueue without FallbackLock accepted")
	}
	g, err := p.GPU(dev, gq, profiler.GPUOptions{FramesInFlight: 2,
		FallbackQueue: &gq, FallbackLock: q.Lock, CalibrateEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	name := p.Name("upload")
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := 0
	// Both goroutines submit until the library has calibrated twice more
	// (on a loaded machine its goroutine may wait for many frames), at
	// most maxFrames frames each.
	const maxFrames = 2000
	var calibrated atomic.Bool
	for w := range 2 {
		wq := q // each goroutine has its own command pool and fences
		if w > 0 {
			wq = vktest.NewQueue(t, d, q.Q)
			wq.Lock = q.Lock
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range maxFrames {
				if calibrated.Load() {
					return
				}
				// The second goroutine submits plain work: no frame of its own.
				cmd := wq.Cmd() // begun
				if w == 0 {
					mu.Lock()
					p.BeginFrame()
					g.BeginFrame(cmd)
					if err := g.Err(); err != nil {
						t.Error(err)
					}
					g.Zone(cmd, name).End()
					recorded++
					g.EndFrame(cmd)
					p.EndFrame()
					mu.Unlock()
				}
				f := wq.Fence()
				wq.Submit(f, cmd)
				wq.Wait(f)
				if w == 0 {
					if _, err := g.Collect(nil), g.Err(); err != nil {
						t.Error(err)
					}
					calibrated.Store(g.Stats().Calibrations >= 3)
				}
			}
		}()
	}
	wg.Wait()
	if st := g.Stats(); st.Calibrations < 3 {
		t.Errorf("stats %+v: the library did not calibrate meanwhile", st)
	}
	q.Lock.Lock()
	vkg.DeviceWaitIdle(d.Handle)
	q.Lock.Unlock()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if c := countTrace(p.Dump()); c.GPU != recorded || c.Drops.Total() != 0 {
		t.Errorf("trace: %d GPU slices of %d, drops %+v", c.GPU, recorded, c.Drops)
	}
}

// A frame whose GPU context's BeginFrame is missing loses that frame's
// zones alone (NoSlot); EndFrame with a nil command buffer loses nothing
// (its results are read through the driver).
func TestAppMissingBeginFrameAndNilEndFrame(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	refused := 0
	for i := range 30 {
		o := frameOpts{noBegin: i%5 == 4, nilEnd: i%3 == 0}
		if o.noBegin {
			refused += 7
		}
		a.frameWith(o, a.work)
	}
	a.expect(a.finish(), refused, timeline.Drops{NoFrame: uint64(refused)})
}
