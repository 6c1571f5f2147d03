package demo

import (
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// TestRenderUnderGC renders while the garbage collector runs without a
// pause, finalizers included: every Vulkan call that reads memory must be
// reading memory no finalizer can free. vulkan-go's marshalling of slices
// fails this (freed create infos, submit infos, copy regions); the test
// fails on a crash, on a validation message (vktest) or on a wrong image.
func TestRenderUnderGC(t *testing.T) {
	cfg := testConfig(t, 200)
	cfg.inFlight = 2
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				_ = make([]byte, 64<<10) // garbage, so that freed memory is reused
			}
		}
	}()
	_, err := run(cfg, io.Discard)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, cfg.png)
}

// TestRecordAllocatesNothing: beginning the render pass and recording the
// readback, which vulkan-go would marshal, allocate nothing.
func TestRecordAllocatesNothing(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	q, ok := d.QueueFor("graphics")
	if !ok {
		t.Skip("no graphics queue")
	}
	r, err := newRenderer(d, q.Handle, q.Family, 1, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer r.destroy()
	cmd, err := r.beginCmd(0)
	if err != nil {
		t.Fatal(err)
	}
	buf := r.slots[0].target.readback.buf
	if n := testing.AllocsPerRun(20, func() {
		// One command buffer records the frame's commands 21 times: each
		// readback copy must wait for the previous one (in the render
		// loop, the slot's fence does), or synchronization validation
		// reports the write after write.
		r.gfx.CmdBufferBarrier(cmd,
			vkg.PipelineStageFlags(vkg.PipelineStageTransferBit), vkg.PipelineStageFlags(vkg.PipelineStageTransferBit),
			vkg.AccessFlags(vkg.AccessTransferWriteBit), vkg.AccessFlags(vkg.AccessTransferWriteBit), buf)
		r.beginPass(cmd, 0)
		r.endPass(cmd)
		r.copyOut(cmd, 0)
	}); n != 0 {
		t.Errorf("%v allocations a frame's render pass and readback, want 0", n)
	}
	if res := vkg.EndCommandBuffer(cmd); res != vkg.Success {
		t.Fatal(vkg.Error(res))
	}
}
