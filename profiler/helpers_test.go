package profiler

import (
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// rig is a profiler on a real device (lavapipe in CI) with validation on.
type rig struct {
	t   *testing.T
	q   *vktest.Queue
	dev *Device
	p   *Profiler
	g   *GPU
}

func newRig(t *testing.T, vcfg vk.Config, o GPUOptions) *rig {
	t.Helper()
	q := vktest.Graphics(t, vcfg)
	dev := &Device{d: q.Dev}
	p := New(Options{})
	g, err := p.GPU(dev, Queue{Handle: q.Q.Handle, Family: q.Q.Family, Flags: QueueFlags(q.Q.Bits), ValidBits: q.Q.ValidBits}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(q.Dev.Handle)
		g.Close()
	})
	return &rig{t: t, q: q, dev: dev, p: p, g: g}
}

// frame runs one frame: record(cmd) records into one command buffer, which
// is submitted and waited for; then everything is collected.
func (r *rig) frame(record func(cmd vkg.CommandBuffer)) []ZoneResult {
	r.t.Helper()
	zs, err := r.frameErr(record)
	if err != nil {
		r.t.Fatal(err)
	}
	return zs
}

// frameErr is frame, returning Drain's error.
func (r *rig) frameErr(record func(cmd vkg.CommandBuffer)) ([]ZoneResult, error) {
	r.t.Helper()
	r.p.BeginFrame()
	cmd := r.q.Cmd()
	r.g.BeginFrame(cmd)
	record(cmd)
	r.g.submitted([]vkg.CommandBuffer{cmd})
	r.g.EndFrame(cmd)
	r.p.EndFrame()
	r.q.SubmitWait(cmd)
	r.q.Free(cmd)
	return r.g.Drain(nil)
}

func sleepMs(d int) { time.Sleep(time.Duration(d) * time.Millisecond) }

var _ = timeline.Now

type vkgCmd = vkg.CommandBuffer

func timeTimeline() int64 { return timeline.Now() }

// queueIDs lists the queues d was created with, for WrapDevice.
func queueIDs(d *vk.Device) []QueueID {
	ids := make([]QueueID, len(d.Queues))
	for i, q := range d.Queues {
		ids[i] = QueueID{Family: q.Family, Index: q.Index}
	}
	return ids
}
