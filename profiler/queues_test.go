package profiler

import (
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Every queue with timestamps gets its own GPU track, named after the
// device and the queue's family, holding that queue's zones and nothing
// else. lavapipe has one queue; an H100 has five families.
func TestEveryQueueItsOwnTrack(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	dev := &Device{d: d}
	p := New(Options{})
	name := p.Name("work")
	type ctx struct {
		g *GPU
		q *vktest.Queue
	}
	var ctxs []ctx
	for i, q := range dev.Queues() {
		if q.ValidBits == 0 {
			continue
		}
		// Debug labels on: RenderDoc and Nsight would show the same names.
		g, err := p.GPU(dev, q, GPUOptions{FramesInFlight: 1, DebugLabels: true})
		if err != nil {
			t.Fatal(err)
		}
		ctxs = append(ctxs, ctx{g, vktest.NewQueue(t, d, d.Queues[i])})
	}
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(d.Handle)
		for _, c := range ctxs {
			c.g.Close()
		}
	})
	if len(ctxs) == 0 {
		t.Fatal("no queue writes timestamps")
	}
	p.BeginFrame()
	for i, c := range ctxs {
		cmd := c.q.Cmd()
		c.g.BeginFrame(cmd)
		if err := c.g.Err(); err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= i; k++ { // queue i records i+1 zones
			c.g.Zone(cmd, name).End()
		}
		c.g.EndFrame(cmd)
		c.q.Submit(nil, cmd)
	}
	p.EndFrame()
	vkg.DeviceWaitIdle(d.Handle)
	for i, c := range ctxs {
		zs, err := c.g.Drain(nil)
		if err != nil || len(zs) != i+1 {
			t.Fatalf("queue family %d: %d zones (%v), want %d", c.g.queue.Family, len(zs), err, i+1)
		}
	}
	tr := p.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	perTrack := map[timeline.TrackID]int{}
	for _, s := range tr.Spans {
		perTrack[s.Track]++
	}
	seen := map[timeline.TrackID]bool{}
	for i, c := range ctxs {
		tk := tr.Track(c.g.Track())
		if tk == nil || tk.Kind != timeline.TrackGPUQueue || tk.Queue.Family != c.g.queue.Family {
			t.Fatalf("queue family %d: track %+v", c.g.queue.Family, tk)
		}
		if seen[tk.ID] {
			t.Errorf("two queues share track %d", tk.ID)
		}
		seen[tk.ID] = true
		if perTrack[tk.ID] != i+1 {
			t.Errorf("track %q holds %d zones, want %d", tk.Name, perTrack[tk.ID], i+1)
		}
		t.Logf("track %q: %d zones", tk.Name, perTrack[tk.ID])
	}
	if !ctxs[0].g.labels && d.HasLabels() {
		t.Error("debug labels asked for and available, but off")
	}
}
