package profiler_test

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Two logical devices alive at once on one physical device, each with
// its own context on one Profiler, get a track each, named so that a
// reader tells them apart; each device's zones land on its own track and
// none on an overflow lane. A context closed and made again on the second
// device continues its track.
func TestTwoDevicesAliveAtOnce(t *testing.T) {
	twoDevices(t, []*vktest.Queue{vktest.Graphics(t, vk.Config{}), vktest.Graphics(t, vk.Config{})}, "", "(device 2)")
}

// Two GPUs of one model (two H100s), a device and a context on each: a
// track each, "(GPU 0)" and "(GPU 1)" after the model's name. Skipped on
// a machine without two devices of one model.
func TestTwoGPUsOfOneModel(t *testing.T) {
	q0 := vktest.Graphics(t, vk.Config{Device: "0"})
	if q0.Dev.Twins < 2 {
		t.Skipf("%s is the only device of its model here", q0.Dev.Caps.Name)
	}
	q1 := vktest.Graphics(t, vk.Config{Device: "1"})
	twoDevices(t, []*vktest.Queue{q0, q1}, "(GPU 0)", "(GPU 1)")
}

// twoDevices runs frames on both queues' devices at once, each wrapped
// with a context of one Profiler, and checks that each device's zones are
// on a track of its own, whose name has the suffix given.
func twoDevices(t *testing.T, qs []*vktest.Queue, suffix0, suffix1 string) {
	p := profiler.New(profiler.Options{})
	name := p.Name("draw")
	gpus := make([]*profiler.GPU, 2)
	open := func(i int) {
		dev := wrapWith(t, qs[i], false)
		q, err := dev.Queue(qs[i].Q.Family, qs[i].Q.Index)
		if err != nil {
			t.Fatal(err)
		}
		if gpus[i], err = p.GPU(dev, q, profiler.GPUOptions{FramesInFlight: 1}); err != nil {
			t.Fatal(err)
		}
	}
	open(0)
	open(1)
	first := []timeline.TrackID{gpus[0].Track(), gpus[1].Track()}
	if first[0] == first[1] {
		t.Fatalf("both devices on track %d", first[0])
	}
	zones := [2]int{}
	frames := func(n int) {
		for range n {
			p.BeginFrame()
			cmds := make([]vkg.CommandBuffer, 2)
			for i, g := range gpus {
				cmds[i] = qs[i].Cmd()
				g.BeginFrame(cmds[i])
				for range 3 {
					g.Zone(cmds[i], name).End()
					zones[i]++
				}
				g.EndFrame(cmds[i])
			}
			for i, g := range gpus {
				g.Submit(profiler.Span{}, cmds[i])
				qs[i].SubmitWait(cmds[i])
				qs[i].Free(cmds[i])
			}
			p.EndFrame()
		}
	}
	frames(20)
	// The second device's context is closed and made again: its track goes on.
	gpus[1].Close()
	open(1)
	if gpus[1].Track() != first[1] {
		t.Errorf("the context made again is on track %d, was on %d", gpus[1].Track(), first[1])
	}
	frames(20)
	for _, q := range qs {
		vkg.DeviceWaitIdle(q.Dev.Handle)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	tr := p.Dump()
	names := map[timeline.TrackID]string{}
	lanes := 0
	for _, k := range tr.Tracks {
		names[k.ID] = k.Name
		if k.Kind == timeline.TrackGPULane {
			lanes++
		}
	}
	got := map[timeline.TrackID]int{}
	for _, s := range tr.Spans {
		got[s.Track]++
	}
	t.Logf("tracks %q and %q", names[first[0]], names[first[1]])
	if names[first[0]] == names[first[1]] || !strings.Contains(names[first[0]], suffix0) || !strings.Contains(names[first[1]], suffix1) {
		t.Errorf("track names %q and %q do not tell the devices apart", names[first[0]], names[first[1]])
	}
	for i, id := range first {
		if got[id] != zones[i] {
			t.Errorf("device %d: %d zones recorded, %d on its track", i+1, zones[i], got[id])
		}
	}
	if lanes != 0 {
		t.Errorf("%d overflow lanes: zones of one device were pushed aside by the other's", lanes)
	}
}
