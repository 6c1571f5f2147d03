package profiler

import (
	"fmt"
	"sync"
	"testing"

	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// recorder is one goroutine's own command pool and command buffer, and a
// query pool for its raw timestamps.
type recorder struct {
	pool vkg.CommandPool
	cmd  vkg.CommandBuffer
	raw  vkg.QueryPool
}

func (r *benchRig) recorders(n int, queries uint32) []recorder {
	h := r.dev.Handle
	rs := make([]recorder, n)
	for i := range rs {
		rs[i].pool, rs[i].cmd = r.commandBuffer()
		vkg.CreateQueryPool(h, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
			QueryType: vkg.QueryTypeTimestamp, QueryCount: queries}, nil, &rs[i].raw)
	}
	r.b.Cleanup(func() {
		vkg.DeviceWaitIdle(h)
		for _, x := range rs {
			vkg.DestroyQueryPool(h, x.raw, nil)
			vkg.DestroyCommandPool(h, x.pool, nil)
		}
	})
	return rs
}

// BenchmarkZoneParallel: zones recorded from 1, 2, 4 and 8 goroutines at
// once, each into its own command buffer, in blocks alternating with
// blocks of raw timestamp pairs on the same command buffer, as
// BenchmarkZoneVsRaw does on one. ns/zone and ns/rawpair are per
// goroutine; how each grows with the goroutines, against the other, is
// the library's own scaling.
func BenchmarkZoneParallel(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) { zoneParallel(b, n) })
	}
}

func zoneParallel(b *testing.B, n int) {
	const batch, block = 1024, 64
	r := newBenchRig(b)
	p, g := r.profiler(uint32(2 * batch * n))
	rs := r.recorders(n, 2*batch)
	name := p.Name("zone")
	zoneNs, rawNs := make([]int64, n), make([]int64, n)
	var pairs int
	var zs []ZoneResult
	cmds := make([]vkg.CommandBuffer, 0, n+1)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch * n {
		r.begin()
		p.BeginFrame()
		g.BeginFrame(r.cmd)
		var wg sync.WaitGroup
		for i := range rs {
			x := &rs[i]
			vkg.ResetCommandBuffer(x.cmd, 0)
			vkg.BeginCommandBuffer(x.cmd, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo,
				Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit)})
			vkg.CmdResetQueryPool(x.cmd, x.raw, 0, 2*batch)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := uint32(0); k < batch; k += block {
					t0 := timeline.Now()
					for range block {
						g.Zone(x.cmd, name).End()
					}
					t1 := timeline.Now()
					for j := k; j < k+block; j++ {
						vkg.CmdWriteTimestamp(x.cmd, vkg.PipelineStageTopOfPipeBit, x.raw, 2*j)
						vkg.CmdWriteTimestamp(x.cmd, vkg.PipelineStageTopOfPipeBit, x.raw, 2*j+1)
					}
					t2 := timeline.Now()
					zoneNs[i] += t1 - t0
					rawNs[i] += t2 - t1
				}
			}()
		}
		wg.Wait()
		pairs += batch
		g.EndFrame(nil) // read through the driver: the copy would need a command buffer after all of them
		p.EndFrame()
		cmds = append(cmds[:0], r.cmd)
		for _, x := range rs {
			vkg.EndCommandBuffer(x.cmd)
			cmds = append(cmds, x.cmd)
		}
		vkg.EndCommandBuffer(r.cmd)
		if err := r.dev.QueueSubmit(r.q.Handle, cmds, r.fen); err != nil {
			b.Fatal(err)
		}
		vkg.WaitForFences(r.dev.Handle, 1, []vkg.Fence{r.fen}, vkg.True, ^uint64(0))
		vkg.ResetFences(r.dev.Handle, 1, []vkg.Fence{r.fen})
		zs, _ = g.Drain(zs[:0])
	}
	b.StopTimer()
	if s := g.Stats(); s.Drops.QueryLimit+s.Drops.NoFrame != 0 {
		b.Fatalf("zones dropped: %+v", s)
	}
	var z, w int64
	for i := range n {
		z += zoneNs[i]
		w += rawNs[i]
	}
	per := float64(pairs * n)
	b.ReportMetric(float64(z)/per, "ns/zone")
	b.ReportMetric(float64(w)/per, "ns/rawpair")
	b.ReportMetric(float64(z)/float64(w), "zone/raw")
}

// BenchmarkFrameCost: the library's whole cost of a frame of 10, 100 and
// 1000 zones on the render thread (Profiler.BeginFrame with its collect,
// GPU.BeginFrame, the zones, GPU.EndFrame, a submit span with GPU.Submit;
// one op = one frame), beside the same frame with raw timestamp pairs in
// place of the zones and no library call, recorded alternately on the
// same command buffer. lib-ns/frame less raw-ns/frame is what the
// library adds to a frame.
func BenchmarkFrameCost(b *testing.B) {
	for _, zones := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("zones=%d", zones), func(b *testing.B) { frameCost(b, zones) })
	}
}

func frameCost(b *testing.B, zones int) {
	r := newBenchRig(b)
	p, g := r.profiler(uint32(2 * zones))
	var raw vkg.QueryPool
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: uint32(2 * zones)}, nil, &raw)
	defer vkg.DestroyQueryPool(r.dev.Handle, raw, nil)
	name, submit := p.Name("zone"), p.Name("submit")
	track := p.CPUTrack("render loop")
	var libNs, rawNs int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r.begin()
		b.StartTimer()
		t0 := timeline.Now()
		p.BeginFrame()
		g.BeginFrame(r.cmd)
		for range zones {
			g.Zone(r.cmd, name).End()
		}
		g.EndFrame(r.cmd)
		s := track.Span(submit)
		g.Submit(s, r.cmd)
		s.End()
		t1 := timeline.Now()
		b.StopTimer()
		r.submitWait()
		r.begin()
		vkg.CmdResetQueryPool(r.cmd, raw, 0, uint32(2*zones))
		t2 := timeline.Now()
		for j := range uint32(zones) {
			vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, raw, 2*j)
			vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, raw, 2*j+1)
		}
		t3 := timeline.Now()
		r.submitWait()
		b.StartTimer()
		libNs += t1 - t0
		rawNs += t3 - t2
	}
	b.StopTimer()
	if s := g.Stats(); s.Drops.Total() != 0 {
		b.Fatalf("zones lost: %+v", s.Drops)
	}
	b.ReportMetric(float64(libNs)/float64(b.N), "lib-ns/frame")
	b.ReportMetric(float64(rawNs)/float64(b.N), "raw-ns/frame")
	b.ReportMetric(float64(libNs-rawNs)/float64(b.N*zones), "added-ns/zone")
}
