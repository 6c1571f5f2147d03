package main

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"
	"unsafe"

	"github.com/framescope/framescope/profiler"
	vk "github.com/vulkan-go/vulkan"
)

// boundConfig is -bound's: frames whose limit is known, for checking what
// the trace says limits them. A "c" frame spins the CPU for spin after a
// small fill; a "g" frame fills fillMiB MiB, fills times, and waits for
// it. mode "cpu" and "gpu" make every frame one kind; "mixed" draws each
// from seed.
type boundConfig struct {
	mode    string
	frames  int
	seed    uint64
	spin    time.Duration
	fillMiB int
	fills   int
}

func (c boundConfig) check() error {
	switch {
	case c.mode != "cpu" && c.mode != "gpu" && c.mode != "mixed":
		return fmt.Errorf("-bound %q: cpu, gpu or mixed", c.mode)
	case c.spin < 0 || c.spin > time.Second:
		return fmt.Errorf("-spin %v: 0 to 1s", c.spin)
	case c.fillMiB < 1 || c.fillMiB > 1024 || c.fills < 1 || c.fills > 64:
		return fmt.Errorf("-fill-mib %d (1..1024) or -fills %d (1..64)", c.fillMiB, c.fills)
	}
	return nil
}

// bound is what -bound's frames need beside the app's: a buffer to fill
// and a query pool for the frame's own two timestamps.
type bound struct {
	*app
	*boundHandles
	size   vk.DeviceSize
	period float64 // ns a tick
}

// boundHandles are bound's own handles, in an object of their own, as the
// app's handles are.
type boundHandles struct {
	buf vk.Buffer
	mem vk.DeviceMemory
	qp  vk.QueryPool
}

// boundFrames renders c's frames, each one submission waited for on the
// frame's thread, and prints the schedule ("schedule: " a letter a frame)
// and each frame's GPU time by its own timestamps around its fills ("gpu
// ns: "): what the trace's verdicts and GPU busy are checked against.
func boundFrames(a *app, p *profiler.Profiler, gpu *profiler.GPU, c boundConfig, stdout io.Writer) error {
	b, err := newBound(a, vk.DeviceSize(c.fillMiB)<<20)
	if err != nil {
		return err
	}
	defer b.close()
	nm := p.Name
	zFill, sRecord, sSubmit, sWait, sSpin := nm("fill"), nm("record"), nm("submit"), nm("vkWaitForFences"), nm("spin")
	render := p.CPUTrack("render")
	rng := rand.New(rand.NewPCG(c.seed, 0))
	var schedule strings.Builder
	var own []string
	for range c.frames {
		g := c.mode == "gpu" || c.mode == "mixed" && rng.IntN(2) == 1
		p.BeginFrame()
		rec := render.Span(sRecord)
		cmd := a.cmds[0]
		vk.ResetCommandBuffer(cmd, 0)
		vk.BeginCommandBuffer(cmd, a.begin)
		gpu.BeginFrame(cmd)
		b.record(cmd, gpu, zFill, g, c.fills)
		gpu.EndFrame(cmd)
		vk.EndCommandBuffer(cmd)
		rec.End()
		vk.ResetFences(a.dev, 1, a.fences[:1]) // made signalled
		sub := render.Span(sSubmit)
		gpu.Submit(sub, cmd)
		noGC(func() {
			err = vk.Error(vk.QueueSubmit(a.queue, 1, []vk.SubmitInfo{{SType: vk.StructureTypeSubmitInfo,
				CommandBufferCount: 1, PCommandBuffers: a.cmds[:1]}}, a.fences[0]))
		})
		sub.End()
		if err != nil {
			return err
		}
		w := render.Span(sWait)
		err = vk.Error(vk.WaitForFences(a.dev, 1, a.fences[:1], vk.True, math.MaxUint64))
		w.End()
		if err != nil {
			return err
		}
		ns, err := b.gpuNs()
		if err != nil {
			return err
		}
		own = append(own, fmt.Sprintf("%.0f", ns))
		schedule.WriteByte("cg"[boolInt(g)])
		if !g {
			s := render.Span(sSpin)
			spin(c.spin)
			s.End()
		}
	}
	fmt.Fprintf(stdout, "schedule: %s\ngpu ns: %s\n", schedule.String(), strings.Join(own, " "))
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func newBound(a *app, size vk.DeviceSize) (*bound, error) {
	b := &bound{app: a, boundHandles: &boundHandles{}, size: size}
	var props vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(a.pd, &props)
	props.Deref()
	props.Limits.Deref()
	b.period = float64(props.Limits.TimestampPeriod)
	var err error
	ok := func(r vk.Result, what string) bool {
		if r != vk.Success && err == nil {
			err = fmt.Errorf("%s: %w", what, vk.Error(r))
		}
		return err == nil
	}
	var req vk.MemoryRequirements
	noGC(func() {
		_ = ok(vk.CreateBuffer(a.dev, &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: size,
			Usage: vk.BufferUsageFlags(vk.BufferUsageTransferDstBit)}, nil, &b.buf), "vkCreateBuffer") &&
			ok(vk.CreateQueryPool(a.dev, &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo,
				QueryType: vk.QueryTypeTimestamp, QueryCount: 2}, nil, &b.qp), "vkCreateQueryPool")
	})
	if err != nil {
		b.close()
		return nil, err
	}
	vk.GetBufferMemoryRequirements(a.dev, b.buf, &req)
	req.Deref()
	noGC(func() {
		_ = ok(vk.AllocateMemory(a.dev, &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size,
			MemoryTypeIndex: uint32(bits.TrailingZeros32(req.MemoryTypeBits))}, nil, &b.mem), "vkAllocateMemory") &&
			ok(vk.BindBufferMemory(a.dev, b.buf, b.mem, 0), "vkBindBufferMemory")
	})
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// record records a frame's work: its own two timestamps around a zone
// of fills, each behind the last (a barrier), the whole buffer fills
// times in a "g" frame, 64 KiB once in a "c" frame.
func (b *bound) record(cmd vk.CommandBuffer, gpu *profiler.GPU, name profiler.Name, g bool, fills int) {
	size, n := vk.DeviceSize(region), 1
	if g {
		size, n = b.size, fills
	}
	vk.CmdResetQueryPool(cmd, b.qp, 0, 2)
	b.barrier(cmd) // after the last frame's fills: each frame fills the same buffer
	vk.CmdWriteTimestamp(cmd, vk.PipelineStageTopOfPipeBit, b.qp, 0)
	z := gpu.Zone(cmd, name)
	for k := range n {
		vk.CmdFillBuffer(cmd, b.buf, 0, size, uint32(0x5eed+k))
		b.barrier(cmd)
	}
	z.End()
	vk.CmdWriteTimestamp(cmd, vk.PipelineStageBottomOfPipeBit, b.qp, 1)
}

// barrier orders the buffer's fills before it, this frame's and the
// frames' before, ahead of those after it.
func (b *bound) barrier(cmd vk.CommandBuffer) {
	noGC(func() {
		vk.CmdPipelineBarrier(cmd, vk.PipelineStageFlags(vk.PipelineStageTransferBit), vk.PipelineStageFlags(vk.PipelineStageTransferBit), 0,
			1, []vk.MemoryBarrier{{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessFlags(vk.AccessTransferWriteBit),
				DstAccessMask: vk.AccessFlags(vk.AccessTransferWriteBit)}}, 0, nil, 0, nil)
	})
}

// gpuNs reads the frame's own timestamps (its fence waited for): the GPU
// time of its fills, in ns.
func (b *bound) gpuNs() (float64, error) {
	ts := new([2]uint64)
	r := vk.GetQueryPoolResults(b.dev, b.qp, 0, 2, uint(unsafe.Sizeof(*ts)), unsafe.Pointer(ts), 8,
		vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit))
	if r != vk.Success {
		return 0, fmt.Errorf("vkGetQueryPoolResults: %w", vk.Error(r))
	}
	return b.period * float64(ts[1]-ts[0]), nil
}

func (b *bound) close() {
	vk.DestroyQueryPool(b.dev, b.qp, nil)
	vk.DestroyBuffer(b.dev, b.buf, nil)
	vk.FreeMemory(b.dev, b.mem, nil)
}
