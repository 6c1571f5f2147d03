package demo

import (
	"runtime"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// BenchmarkCopyOut measures recording the per-frame readback (a copy of
// the image to its host buffer and a buffer barrier) through internal/vk's
// C wrappers against the vulkan-go calls they replaced, in the same run on
// the same command buffer: ns and allocations per copy for each, and their
// ratio (wrapper/vulkan-go). Nothing is submitted; the validation layer is
// off.
func BenchmarkCopyOut(b *testing.B) {
	_ = vk.PinDrivers() // benchmarks open a device per run (vk.PinDrivers)
	d, err := vk.Open(vk.Config{InstanceConfig: vk.InstanceConfig{AppName: "triangle-bench"}})
	if err != nil {
		if vktest.Required() {
			b.Fatalf("no Vulkan device (FRAMESCOPE_REQUIRE_VULKAN=1): %v", err)
		}
		b.Skipf("no Vulkan device: %v", err)
	}
	defer d.Close()
	q, ok := d.QueueFor("graphics")
	if !ok {
		b.Skip("no graphics queue")
	}
	r, err := newRenderer(d, q.Handle, q.Family, 1, 64, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer r.destroy()
	t := r.slots[0].target
	region := []vkg.BufferImageCopy{{
		ImageSubresource: vkg.ImageSubresourceLayers{AspectMask: vkg.ImageAspectFlags(vkg.ImageAspectColorBit), LayerCount: 1},
		ImageExtent:      vkg.Extent3D{Width: 64, Height: 64, Depth: 1},
	}}
	vulkanGo := func(cmd vkg.CommandBuffer) {
		vkg.CmdCopyImageToBuffer(cmd, t.image, vkg.ImageLayoutTransferSrcOptimal, t.readback.buf, 1, region)
		vkg.CmdPipelineBarrier(cmd,
			vkg.PipelineStageFlags(vkg.PipelineStageTransferBit), vkg.PipelineStageFlags(vkg.PipelineStageHostBit), 0,
			0, nil,
			1, []vkg.BufferMemoryBarrier{{
				SType:               vkg.StructureTypeBufferMemoryBarrier,
				SrcAccessMask:       vkg.AccessFlags(vkg.AccessTransferWriteBit),
				DstAccessMask:       vkg.AccessFlags(vkg.AccessHostReadBit),
				SrcQueueFamilyIndex: vkg.QueueFamilyIgnored,
				DstQueueFamilyIndex: vkg.QueueFamilyIgnored,
				Buffer:              t.readback.buf,
				Size:                vkg.DeviceSize(vkg.WholeSize),
			}},
			0, nil)
	}
	wrapped := func(cmd vkg.CommandBuffer) { r.copyOut(cmd, 0) }

	// Batches of copies into one command buffer, reset between batches.
	const batch = 64
	var ns [2]int64
	var allocs [2]uint64
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		for k, rec := range []func(vkg.CommandBuffer){wrapped, vulkanGo} {
			cmd, err := r.beginCmd(0)
			if err != nil {
				b.Fatal(err)
			}
			a0 := mallocs()
			t0 := timeline.Now()
			for i := 0; i < batch; i++ {
				rec(cmd)
			}
			ns[k] += timeline.Now() - t0
			allocs[k] += mallocs() - a0
			if res := vkg.EndCommandBuffer(cmd); res != vkg.Success {
				b.Fatal(vkg.Error(res))
			}
		}
	}
	b.StopTimer()
	n := float64((b.N + batch - 1) / batch * batch)
	b.ReportMetric(float64(ns[0])/n, "wrapper-ns/copy")
	b.ReportMetric(float64(ns[1])/n, "vulkan-go-ns/copy")
	b.ReportMetric(float64(allocs[0])/n, "wrapper-allocs/copy")
	b.ReportMetric(float64(allocs[1])/n, "vulkan-go-allocs/copy")
	if ns[1] > 0 {
		b.ReportMetric(float64(ns[0])/float64(ns[1]), "wrapper/vulkan-go")
	}
}

// mallocs is the number of heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}
