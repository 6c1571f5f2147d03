package profiler

import (
	"os"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Benchmarks record into real command buffers on the default device
// (lavapipe in CI), without the validation layer, which would dominate.
// Both stages are TOP_OF_PIPE so that the batches the benchmarks submit
// between timed stretches run fast on lavapipe; the stage does not change
// what recording costs.

const benchBatch = 2048 // zones recorded between submissions

type benchRig struct {
	b    *testing.B
	dev  *vk.Device
	q    vk.Queue
	pool vkg.CommandPool
	cmd  vkg.CommandBuffer
	fen  vkg.Fence
}

func newBenchRig(b *testing.B) *benchRig {
	_ = vk.PinDrivers() // benchmarks open a device per run (vk.PinDrivers)
	d, err := vk.Open(vk.Config{})
	if err != nil {
		if os.Getenv("FRAMESCOPE_REQUIRE_VULKAN") == "1" {
			b.Fatal(err)
		}
		b.Skip(err)
	}
	q, ok := d.QueueFor("graphics")
	if !ok {
		q = d.Queues[0]
	}
	r := &benchRig{b: b, dev: d, q: q}
	r.pool, r.cmd = r.commandBuffer()
	var f vkg.Fence
	vkg.CreateFence(d.Handle, &vkg.FenceCreateInfo{SType: vkg.StructureTypeFenceCreateInfo}, nil, &f)
	r.fen = f
	b.Cleanup(func() {
		vkg.DeviceWaitIdle(d.Handle)
		vkg.DestroyFence(d.Handle, f, nil)
		vkg.DestroyCommandPool(d.Handle, r.pool, nil)
		d.Close()
	})
	return r
}

// commandBuffer makes a command pool on the rig's queue family and one
// primary command buffer from it.
func (r *benchRig) commandBuffer() (vkg.CommandPool, vkg.CommandBuffer) {
	var cp vkg.CommandPool
	vkg.CreateCommandPool(r.dev.Handle, &vkg.CommandPoolCreateInfo{SType: vkg.StructureTypeCommandPoolCreateInfo,
		Flags: vkg.CommandPoolCreateFlags(vkg.CommandPoolCreateResetCommandBufferBit), QueueFamilyIndex: r.q.Family}, nil, &cp)
	cmds := make([]vkg.CommandBuffer, 1)
	vkg.AllocateCommandBuffers(r.dev.Handle, &vkg.CommandBufferAllocateInfo{SType: vkg.StructureTypeCommandBufferAllocateInfo,
		CommandPool: cp, Level: vkg.CommandBufferLevelPrimary, CommandBufferCount: 1}, cmds)
	return cp, cmds[0]
}

func (r *benchRig) begin() {
	vkg.ResetCommandBuffer(r.cmd, 0)
	vkg.BeginCommandBuffer(r.cmd, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo,
		Flags: vkg.CommandBufferUsageFlags(vkg.CommandBufferUsageOneTimeSubmitBit)})
}

func (r *benchRig) submitWait() {
	vkg.EndCommandBuffer(r.cmd)
	if err := r.dev.QueueSubmit(r.q.Handle, []vkg.CommandBuffer{r.cmd}, r.fen); err != nil {
		r.b.Fatal(err)
	}
	vkg.WaitForFences(r.dev.Handle, 1, []vkg.Fence{r.fen}, vkg.True, uint64(10*time.Second))
	vkg.ResetFences(r.dev.Handle, 1, []vkg.Fence{r.fen})
}

// profiler makes a GPU context on the rig's queue with room for queries per
// frame, TOP_OF_PIPE stages and no background calibration.
func (r *benchRig) profiler(queries uint32) (*Profiler, *GPU) {
	return r.profilerWith(queries, 0)
}

// profilerWith is profiler, its zones counting stats (those of them the
// queue can count).
func (r *benchRig) profilerWith(queries uint32, stats PipelineStats) (*Profiler, *GPU) {
	p := New(Options{WindowFrames: 4})
	q := Queue{Handle: r.q.Handle, Family: r.q.Family, Flags: QueueFlags(r.q.Bits), ValidBits: r.q.ValidBits}
	if !q.Flags.Has(QueueCompute) {
		stats &^= timeline.ComputeShaderInvocations
	}
	g, err := p.GPU(&Device{r.dev}, q,
		GPUOptions{FramesInFlight: 1, QueriesPerFrame: queries, MaxQueriesPerFrame: queries,
			BeginStage: vkg.PipelineStageTopOfPipeBit, EndStage: vkg.PipelineStageTopOfPipeBit,
			CalibrateEvery: -1, PipelineStatistics: stats})
	if err != nil {
		r.b.Fatal(err)
	}
	r.b.Cleanup(g.Close)
	return p, g
}

// BenchmarkZone: one zone, begin and end, through the library.
func BenchmarkZone(b *testing.B) {
	r := newBenchRig(b)
	p, g := r.profiler(2 * benchBatch)
	name := p.Name("zone")
	var zs []ZoneResult
	start := func() {
		r.begin()
		p.BeginFrame()
		g.BeginFrame(r.cmd)
	}
	finish := func() {
		g.EndFrame(r.cmd)
		p.EndFrame()
		r.submitWait()
		zs, _ = g.Drain(zs[:0])
	}
	start()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchBatch == 0 && i > 0 {
			b.StopTimer()
			finish()
			start()
			b.StartTimer()
		}
		g.Zone(r.cmd, name).End()
	}
	b.StopTimer()
	finish()
	if s := g.Stats(); s.Drops.QueryLimit+s.Drops.NoFrame != 0 {
		b.Fatalf("zones dropped: %+v", s)
	}
}

// BenchmarkRawTimestampPair: the same two vkCmdWriteTimestamp calls through
// vulkan-go, without the library: the floor BenchmarkZone is compared with.
func BenchmarkRawTimestampPair(b *testing.B) {
	r := newBenchRig(b)
	var qp vkg.QueryPool
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 2 * benchBatch}, nil, &qp)
	defer vkg.DestroyQueryPool(r.dev.Handle, qp, nil)
	start := func() {
		r.begin()
		vkg.CmdResetQueryPool(r.cmd, qp, 0, 2*benchBatch)
	}
	start()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := uint32(i % benchBatch)
		if k == 0 && i > 0 {
			b.StopTimer()
			r.submitWait()
			start()
			b.StartTimer()
		}
		vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*k)
		vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*k+1)
	}
	b.StopTimer()
	r.submitWait()
}

// BenchmarkCollect: reading back, converting and merging a frame of 1000
// zones (one op = one frame), beside its floor measured on the same frame
// just before: reading the same host memory Collect reads and converting
// the same ticks with the same clock model, and nothing else. It reports
// Collect's ns/zone, the floor's, and their ratio, both timed the same way,
// by the clock around the call (ns/op adds the timer's own work between
// the timed sections).
func BenchmarkCollect(b *testing.B) { benchCollect(b, 0) }

// benchCollect is BenchmarkCollect with every zone counting stats.
func benchCollect(b *testing.B, stats PipelineStats) {
	const zones = 1000
	r := newBenchRig(b)
	p, g := r.profilerWith(2*zones, stats)
	names := []Name{p.Name("outer"), p.Name("inner")}
	zs := make([]ZoneResult, 0, zones)
	zs = g.Collect(zs) // from now on Profiler.BeginFrame leaves the context to Collect
	frame := func() uint64 {
		r.begin()
		id := p.BeginFrame()
		g.BeginFrame(r.cmd)
		for i := 0; i < zones/2; i++ {
			z := g.Zone(r.cmd, names[0])
			g.Zone(r.cmd, names[1]).End()
			z.End()
		}
		g.EndFrame(r.cmd)
		p.EndFrame()
		r.submitWait()
		r.begin() // the next frame begins: the one above is now FramesInFlight old
		p.BeginFrame()
		g.BeginFrame(r.cmd)
		g.EndFrame(r.cmd)
		p.EndFrame()
		r.submitWait()
		return id
	}
	var total int
	var floorNs, collectNs int64
	var sink int64
	merge0, _ := p.rec.MergeCost()
	reset0, _ := g.pool.ResetCost()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := frame()
		t0 := timeline.Now()
		sink += collectFloor(g, g.pool.Copied(id))
		floorNs += timeline.Now() - t0
		b.StartTimer()
		t1 := timeline.Now()
		zs = g.Collect(zs[:0])
		collectNs += timeline.Now() - t1
		if err := g.Err(); err != nil {
			b.Fatal(err)
		}
		total += len(zs)
	}
	b.StopTimer()
	if total != zones*b.N || sink == 0 {
		b.Fatalf("collected %d zones, want %d (floor sum %d); %+v", total, zones*b.N, sink, g.Stats())
	}
	n := float64(total)
	b.ReportMetric(float64(collectNs)/n, "ns/zone")
	b.ReportMetric(float64(floorNs)/n, "floor-ns/zone")
	b.ReportMetric(float64(collectNs)/float64(floorNs), "collect/floor")
	// The work Collect hands to other goroutines, timed where it runs:
	// the recorder's placing of the zones, and the pool's query resets.
	merge1, _ := p.rec.MergeCost()
	reset1, _ := g.pool.ResetCost()
	b.ReportMetric(float64(merge1-merge0)/n, "merge-ns/zone")
	b.ReportMetric(float64(reset1-reset0)/n, "reset-ns/zone")
}

// collectFloor is the least a Collect of copied must do: read each pair's
// two values and availability words from host memory and convert both
// ticks with g's clock model, in one call as Collect does. It returns a sum of the results, so that
// none of it is optimized away.
func collectFloor(g *GPU, copied []uint64) int64 {
	mask, hint := g.pool.Mask(), timeline.Now()
	var sum int64
	for j := 0; j+3 < len(copied); j += 4 {
		if copied[j+1] == 0 || copied[j+3] == 0 {
			continue
		}
		s, e, errNs, _ := g.clock.ConvertSpan(copied[j]&mask, copied[j+2]&mask, hint)
		sum += e - s + errNs
	}
	return sum
}

// BenchmarkZoneVsRaw alternates blocks of library zones and of raw
// timestamp pairs on the same command buffer, so that both see the same
// machine, and reports each per pair and their ratio (goal: <= 1.10).
// The raw pairs are written twice: through vulkan-go, as an application
// writes them (zone/raw), and through the device's own entry point, as the
// zone path does, without the loader's trampoline (zone/rawdev).
func BenchmarkZoneVsRaw(b *testing.B) {
	r := newBenchRig(b)
	p, g := r.profiler(2 * benchBatch)
	var qp vkg.QueryPool
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 2 * benchBatch}, nil, &qp)
	defer vkg.DestroyQueryPool(r.dev.Handle, qp, nil)
	name := p.Name("zone")
	const block = 64
	var devp vkg.QueryPool // the second floor's own queries
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 2 * benchBatch}, nil, &devp)
	defer vkg.DestroyQueryPool(r.dev.Handle, devp, nil)
	var zoneNs, rawNs, devNs int64
	var pairs int
	var zs []ZoneResult
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		r.begin()
		vkg.CmdResetQueryPool(r.cmd, qp, 0, 2*benchBatch)
		vkg.CmdResetQueryPool(r.cmd, devp, 0, 2*benchBatch)
		p.BeginFrame()
		g.BeginFrame(r.cmd)
		for k := uint32(0); k < benchBatch && done < b.N; k += block {
			t0 := timeline.Now()
			for j := uint32(0); j < block; j++ {
				g.Zone(r.cmd, name).End()
			}
			t1 := timeline.Now()
			for j := k; j < k+block; j++ {
				vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*j)
				vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*j+1)
			}
			t2 := timeline.Now()
			for j := k; j < k+block; j++ {
				r.dev.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, devp, 2*j)
				r.dev.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, devp, 2*j+1)
			}
			t3 := timeline.Now()
			zoneNs += t1 - t0
			rawNs += t2 - t1
			devNs += t3 - t2
			done += block
			pairs += block
		}
		g.EndFrame(r.cmd)
		p.EndFrame()
		r.submitWait()
		zs, _ = g.Drain(zs[:0])
	}
	b.StopTimer()
	n := float64(pairs)
	b.ReportMetric(float64(zoneNs)/n, "ns/zone")
	b.ReportMetric(float64(rawNs)/n, "ns/rawpair")
	b.ReportMetric(float64(zoneNs)/float64(rawNs), "zone/raw")
	b.ReportMetric(float64(zoneNs)/float64(devNs), "zone/rawdev")
}

// BenchmarkCalibrationRound: one background recalibration round (a bounded
// burst of vkGetCalibratedTimestamps, the best sample fed to the model),
// beside BenchmarkCalibratedTimestampsCall, one bare call: the floor.
func BenchmarkCalibrationRound(b *testing.B) {
	r := newBenchRig(b)
	if r.dev.Calibrated == "" {
		b.Skip("no calibrated timestamps")
	}
	p := New(Options{})
	g, err := p.GPU(&Device{r.dev}, Queue{Handle: r.q.Handle, Family: r.q.Family, ValidBits: r.q.ValidBits},
		GPUOptions{CalibrateEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Calibrate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalibratedTimestampsCall(b *testing.B) {
	r := newBenchRig(b)
	if r.dev.Calibrated == "" {
		b.Skip("no calibrated timestamps")
	}
	doms := []vk.TimeDomain{vk.TimeDomainDevice, vk.TimeDomainClockMonotonic}
	var ts [2]uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.dev.CalibratedTimestamps(doms, ts[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectRecording times Collect of one execution of a recording
// (GPU.Record) of 1,000 zones, recorded once and submitted every frame:
// its results read from the recording's host memory and converted. Run it
// beside BenchmarkCollect, whose frame has as many zones recorded in it.
func BenchmarkCollectRecording(b *testing.B) {
	const zones = 1000
	r := newBenchRig(b)
	p, g := r.profiler(2 * zones)
	names := []Name{p.Name("outer"), p.Name("inner")}
	track, submit := p.CPUTrack("bench"), p.Name("submit")
	pool, rec := r.commandBuffer()
	b.Cleanup(func() { vkg.DestroyCommandPool(r.dev.Handle, pool, nil) })
	vkg.BeginCommandBuffer(rec, &vkg.CommandBufferBeginInfo{SType: vkg.StructureTypeCommandBufferBeginInfo})
	recording := g.Record(rec)
	for i := 0; i < zones/2; i++ {
		z := g.Zone(rec, names[0])
		g.Zone(rec, names[1]).End()
		z.End()
	}
	recording.End()
	vkg.EndCommandBuffer(rec)
	zs := g.Collect(make([]ZoneResult, 0, zones))
	frame := func() {
		p.BeginFrame()
		s := track.Span(submit)
		g.Submit(s, rec)
		if err := r.dev.QueueSubmit(r.q.Handle, []vkg.CommandBuffer{rec}, r.fen); err != nil {
			b.Fatal(err)
		}
		s.End()
		vkg.WaitForFences(r.dev.Handle, 1, []vkg.Fence{r.fen}, vkg.True, uint64(10*time.Second))
		vkg.ResetFences(r.dev.Handle, 1, []vkg.Fence{r.fen})
		p.EndFrame()
		p.BeginFrame() // the next frame begins: the one above is now FramesInFlight old
		p.EndFrame()
	}
	var total int
	var collectNs int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		frame()
		b.StartTimer()
		t0 := timeline.Now()
		zs = g.Collect(zs[:0])
		collectNs += timeline.Now() - t0
		total += len(zs)
	}
	b.StopTimer()
	if total != zones*b.N {
		b.Fatalf("collected %d zones, want %d; %+v", total, zones*b.N, g.Stats())
	}
	b.ReportMetric(float64(collectNs)/float64(total), "ns/zone")
}
