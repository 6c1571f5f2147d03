package benchgpu_test

import (
	"math"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/profiler/benchgpu"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// A benchmark whose every iteration renders a frame with one "pass" zone
// (and an unrelated "other" zone) reports the pass's GPU time per op, equal
// to the sum of the pass zones' durations over b.N.
func TestReportsGPUTimePerOp(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	q := vktest.NewQueue(t, d, d.Queues[0])
	dev, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues:         []profiler.QueueID{{Family: d.Queues[0].Family, Index: d.Queues[0].Index}},
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	pass, other := p.Name("pass"), p.Name("other")
	g, err := p.GPU(dev, dev.Queues()[0], profiler.GPUOptions{FramesInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vkg.DeviceWaitIdle(d.Handle); g.Close() })
	ev := q.Event()
	vkg.SetEvent(d.Handle, ev)
	var want int64
	var n int
	res := testing.Benchmark(func(b *testing.B) {
		m := benchgpu.New(g, pass)
		for i := 0; i < b.N; i++ {
			p.BeginFrame()
			cmd := q.Cmd()
			g.BeginFrame(cmd)
			z := g.Zone(cmd, pass)
			for k := 0; k < 4; k++ {
				q.WaitEvent(cmd, ev) // some GPU work
			}
			z.End()
			g.Zone(cmd, other).End()
			g.EndFrame(cmd)
			p.EndFrame()
			q.SubmitWait(cmd)
			q.Free(cmd)
			m.Collect()
		}
		m.Report(b)
		want, _ = m.Total()
		n = b.N
	})
	got := res.Extra["gpu-ns/op"]
	if n == 0 || got <= 0 {
		t.Fatalf("gpu-ns/op %v over %d iterations", got, n)
	}
	if math.Abs(got-float64(want)/float64(n)) > 1e-6 {
		t.Errorf("gpu-ns/op %v, want %v", got, float64(want)/float64(n))
	}
	if z := res.Extra["gpu-zones/op"]; z != 1 {
		t.Errorf("gpu-zones/op %v, want 1 (the other zone must not count)", z)
	}
	if _, ok := res.Extra["gpu-errors"]; ok {
		t.Errorf("gpu-errors reported: %v", res.Extra)
	}
	t.Logf("%d iterations: %.0f gpu-ns/op", n, got)
}

// With pipeline statistics, the zones' work is reported per op under the
// statistics' keys, and zones without counts as gpu-work-missing.
func TestReportsWorkPerOp(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	if !d.PipelineStatistics {
		t.Skip("no pipelineStatisticsQuery")
	}
	q := vktest.NewQueue(t, d, d.Queues[0])
	dev, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues:         []profiler.QueueID{{Family: d.Queues[0].Family, Index: d.Queues[0].Index}},
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", PipelineStatisticsQuery: true, APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	p := profiler.New(profiler.Options{})
	pass, other := p.Name("pass"), p.Name("other")
	stats := timeline.FragmentShaderInvocations | timeline.InputAssemblyVertices
	g, err := p.GPU(dev, dev.Queues()[0], profiler.GPUOptions{FramesInFlight: 1, PipelineStatistics: stats})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vkg.DeviceWaitIdle(d.Handle); g.Close() })
	for _, misnest := range []bool{false, true} {
		res := testing.Benchmark(func(b *testing.B) {
			m := benchgpu.New(g, pass)
			for i := 0; i < b.N; i++ {
				p.BeginFrame()
				cmd := q.Cmd()
				g.BeginFrame(cmd)
				o := g.Zone(cmd, other)
				z := g.Zone(cmd, pass)
				if misnest { // the zone around it ends first: pass has no counts
					o.End()
					z.End()
				} else {
					z.End()
					o.End()
				}
				g.EndFrame(cmd)
				p.EndFrame()
				q.SubmitWait(cmd)
				q.Free(cmd)
				m.Collect()
			}
			m.Report(b)
		})
		_, frag := res.Extra["fragment_shader_invocations/op"]
		_, ia := res.Extra["input_assembly_vertices/op"]
		_, vs := res.Extra["vertex_shader_invocations/op"]
		missing := res.Extra["gpu-work-missing"]
		switch {
		case !misnest && (!frag || !ia || vs || missing != 0):
			t.Errorf("counted zones: metrics %v, want the two statistics counted and nothing missing", res.Extra)
		case misnest && (frag || missing != float64(res.N)):
			t.Errorf("zones without counts: metrics %v over %d, want gpu-work-missing %d and no work", res.Extra, res.N, res.N)
		}
	}
}
