package live_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
	vkg "github.com/vulkan-go/vulkan"
)

// The hot path with the live view mounted and idle must cost what it costs
// without it: each benchmark runs "plain", "live-idle" (the handler
// mounted on a listening server, no request made) and "plain-again" in the
// same run, for benchstat to compare; go test repeats each sub-benchmark
// -count times before the next, so plain-again shows what order alone
// does.

var variants = []struct {
	name  string
	mount bool
}{{"plain", false}, {"live-idle", true}, {"plain-again", false}}

func mount(b *testing.B, p *profiler.Profiler) {
	mux := http.NewServeMux()
	mux.Handle("/debug/framescope/", live.Handler(p))
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
}

// rig is a device with one command buffer and a fence, and a profiler's
// GPU context on its graphics queue, as an application has them.
type rig struct {
	b   *testing.B
	dev *vk.Device
	q   vk.Queue
	cmd vkg.CommandBuffer
	fen vkg.Fence
	p   *profiler.Profiler
	g   *profiler.GPU
}

func newRig(b *testing.B, queries uint32, mounted bool) *rig {
	_ = vk.PinDrivers()
	d, err := vk.Open(vk.Config{})
	if err != nil {
		if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
			b.Fatal(err)
		}
		b.Skip(err)
	}
	q, _ := d.QueueFor("graphics")
	r := &rig{b: b, dev: d, q: q}
	var cp vkg.CommandPool
	vkg.CreateCommandPool(d.Handle, &vkg.CommandPoolCreateInfo{SType: vkg.StructureTypeCommandPoolCreateInfo,
		Flags: vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit), QueueFamilyIndex: q.Family}, nil, &cp)
	cmds := make([]vkg.CommandBuffer, 1)
	vkg.AllocateCommandBuffers(d.Handle, &vkg.CommandBufferAllocateInfo{SType: vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool: cp, Level: vkg.CommandBufferLevelPrimary, CommandBufferCount: 1}, cmds)
	r.cmd = cmds[0]
	var f vkg.Fence // a local: r holds Go pointers, which cgo refuses
	vkg.CreateFence(d.Handle, &vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}, nil, &f)
	r.fen = f
	pdev, err := profiler.WrapDevice(profiler.Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle,
		Queues: []profiler.QueueID{{Family: q.Family, Index: q.Index}}, HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", APIVersion: d.Instance.APIVersion})
	if err != nil {
		b.Fatal(err)
	}
	gq, err := pdev.Queue(q.Family, q.Index)
	if err != nil {
		b.Fatal(err)
	}
	r.p = profiler.New(profiler.Options{})
	r.g, err = r.p.GPU(pdev, gq, profiler.GPUOptions{FramesInFlight: 1, QueriesPerFrame: queries, MaxQueriesPerFrame: queries,
		BeginStage: vkg.PipelineStageTopOfPipeBit, EndStage: vkg.PipelineStageTopOfPipeBit,
		CalibrateEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	if mounted {
		mount(b, r.p)
	}
	b.Cleanup(func() {
		vkg.DeviceWaitIdle(d.Handle)
		r.p.Close()
		pdev.Close()
		vkg.DestroyFence(d.Handle, r.fen, nil)
		vkg.DestroyCommandPool(d.Handle, cp, nil)
		d.Close()
	})
	return r
}

func (r *rig) begin() {
	vkg.ResetCommandBuffer(r.cmd, 0)
	vkg.BeginCommandBuffer(r.cmd, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit)})
	r.p.BeginFrame()
	r.g.BeginFrame(r.cmd)
}

func (r *rig) end() {
	r.g.EndFrame(r.cmd)
	r.p.EndFrame()
	vkg.EndCommandBuffer(r.cmd)
	if err := r.dev.QueueSubmit(r.q.Handle, []vkg.CommandBuffer{r.cmd}, r.fen); err != nil {
		r.b.Fatal(err)
	}
	vkg.WaitForFences(r.dev.Handle, 1, []vkg.Fence{r.fen}, vkg.True, uint64(10*time.Second))
	vkg.ResetFences(r.dev.Handle, 1, []vkg.Fence{r.fen})
}

const batch = 2048

// BenchmarkZone: one GPU zone, begin and end.
func BenchmarkZone(b *testing.B) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			r := newRig(b, 2*batch, v.mount)
			name := r.p.Name("zone")
			var zs []profiler.ZoneResult
			r.begin()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%batch == 0 && i > 0 {
					b.StopTimer()
					r.end()
					zs, _ = r.g.Drain(zs[:0])
					r.begin()
					b.StartTimer()
				}
				r.g.Zone(r.cmd, name).End()
			}
			b.StopTimer()
			r.end()
		})
	}
}

// BenchmarkCPUSpan: one CPU span, begin and end.
func BenchmarkCPUSpan(b *testing.B) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			p := profiler.New(profiler.Options{})
			b.Cleanup(func() { p.Close() })
			if v.mount {
				mount(b, p)
			}
			t, name := p.CPUTrack("main"), p.Name("span")
			p.BeginFrame()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%batch == 0 && i > 0 {
					b.StopTimer()
					p.EndFrame()
					p.BeginFrame()
					b.StartTimer()
				}
				t.Span(name).End()
			}
			b.StopTimer()
			p.EndFrame()
		})
	}
}

// BenchmarkCollect: a warm Collect of a frame of 1000 zones (one op = one
// frame).
func BenchmarkCollect(b *testing.B) {
	const zones = 1000
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			r := newRig(b, 2*zones, v.mount)
			outer, inner := r.p.Name("outer"), r.p.Name("inner")
			zs := make([]profiler.ZoneResult, 0, zones)
			frame := func() {
				r.begin()
				for i := 0; i < zones/2; i++ {
					z := r.g.Zone(r.cmd, outer)
					r.g.Zone(r.cmd, inner).End()
					z.End()
				}
				r.end()
				r.begin() // the next frame: the one above is now FramesInFlight old
				r.end()
			}
			frame()
			zs = r.g.Collect(zs[:0]) // warm
			total := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				frame()
				b.StartTimer()
				zs = r.g.Collect(zs[:0])
				total += len(zs)
			}
			b.StopTimer()
			if total != zones*b.N {
				b.Fatalf("collected %d zones, want %d", total, zones*b.N)
			}
		})
	}
}
