package demo

import (
	"fmt"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// rawZones writes timestamps with bare vkCmdWriteTimestamp, into a query
// pool of the demo's own, for two measurements of what profiling costs:
//
//   - -rawzones N: N pairs around the load draws, the floor the profiler's
//     zones are compared with;
//   - -cmdgpu: one pair around the whole command buffer (TOP_OF_PIPE first,
//     BOTTOM_OF_PIPE after everything, the profiler's readback copy
//     included), the frame's GPU time as the profiler cannot see it.
//
// Each frame slot has its own range of queries, reset the way the
// profiler resets its own (on the host where hostQueryReset is enabled,
// else by a command at the start of the frame) so that (b) and (c) pay
// the same for resets, and read back once the slot's fence has signalled.
type rawZones struct {
	dev     *vk.Device
	pool    vkg.QueryPool
	n       uint32 // pairs per frame around the load draws
	cmdGPU  bool   // one more pair around the command buffer
	stride  uint32 // queries per slot
	stages  stages
	mask    uint64 // timestampValidBits
	period  float64
	warmup  int      // frames (from 0) before this one are not kept in cmdNs
	results []uint64 // stride, reused
	pending []bool   // per slot: a frame was submitted and not read yet
	frame   []int    // per slot: the frame (from 0) that last used it

	pairs uint64  // pairs read back
	ns    int64   // their total duration
	cmdNs []int64 // the command buffers' GPU times, with -cmdgpu
}

func newRawZones(dev *vk.Device, slots, n int, cmdGPU bool, warmup int, st stages, validBits uint32, period float32) (*rawZones, error) {
	rz := &rawZones{dev: dev, n: uint32(n), cmdGPU: cmdGPU, warmup: warmup, stages: st, period: float64(period),
		pending: make([]bool, slots), frame: make([]int, slots)}
	rz.stride = 2 * rz.n
	if cmdGPU {
		rz.stride += 2
	}
	if rz.stride == 0 {
		return rz, nil
	}
	rz.mask = ^uint64(0)
	if validBits < 64 {
		rz.mask = 1<<validBits - 1
	}
	ci := vkg.QueryPoolCreateInfo{
		SType:      vkg.StructureTypeQueryPoolCreateInfo,
		QueryType:  vkg.QueryTypeTimestamp,
		QueryCount: uint32(slots) * rz.stride,
	}
	var pool vkg.QueryPool
	if r := vkg.CreateQueryPool(dev.Handle, &ci, nil, &pool); r != vkg.Success {
		return nil, fmt.Errorf("vkCreateQueryPool(%d timestamps): %w", ci.QueryCount, vkg.Error(r))
	}
	rz.pool = pool
	rz.results = make([]uint64, rz.stride)
	if dev.HostQueryReset {
		if err := dev.ResetQueryPool(pool, 0, ci.QueryCount); err != nil {
			rz.destroy()
			return nil, err
		}
	}
	return rz, nil
}

// reset makes slot's queries ready for frame f (from 0): on the host, or
// by a command recorded into cmd, outside a render pass.
func (rz *rawZones) reset(cmd vkg.CommandBuffer, slot, f int) {
	if rz.stride == 0 {
		return
	}
	first := uint32(slot) * rz.stride
	if rz.dev.HostQueryReset {
		// The slot's last frame has been read back (read runs first),
		// so the GPU is done with these queries.
		_ = rz.dev.ResetQueryPool(rz.pool, first, rz.stride)
	} else {
		vkg.CmdResetQueryPool(cmd, rz.pool, first, rz.stride)
	}
	rz.pending[slot] = true
	rz.frame[slot] = f
}

// begin and end write the timestamps of pair i of slot.
func (rz *rawZones) begin(cmd vkg.CommandBuffer, slot, i int) {
	vkg.CmdWriteTimestamp(cmd, rz.stages.begin, rz.pool, uint32(slot)*rz.stride+2*uint32(i))
}

func (rz *rawZones) end(cmd vkg.CommandBuffer, slot, i int) {
	vkg.CmdWriteTimestamp(cmd, rz.stages.end, rz.pool, uint32(slot)*rz.stride+2*uint32(i)+1)
}

// cmdBegin and cmdEnd write the pair around the whole command buffer:
// the first and the last commands in it.
func (rz *rawZones) cmdBegin(cmd vkg.CommandBuffer, slot int) {
	if rz.cmdGPU {
		vkg.CmdWriteTimestamp(cmd, vkg.PipelineStageTopOfPipeBit, rz.pool, uint32(slot)*rz.stride+2*rz.n)
	}
}

func (rz *rawZones) cmdEnd(cmd vkg.CommandBuffer, slot int) {
	if rz.cmdGPU {
		vkg.CmdWriteTimestamp(cmd, vkg.PipelineStageBottomOfPipeBit, rz.pool, uint32(slot)*rz.stride+2*rz.n+1)
	}
}

// read reads slot's timestamps back, once the slot's fence has signalled.
func (rz *rawZones) read(slot int) error {
	if rz.stride == 0 || !rz.pending[slot] {
		return nil
	}
	rz.pending[slot] = false
	size := uint(len(rz.results) * 8)
	r := vkg.GetQueryPoolResults(rz.dev.Handle, rz.pool, uint32(slot)*rz.stride, rz.stride, size,
		unsafe.Pointer(&rz.results[0]), 8, vkg.QueryResultFlags(vkg.QueryResult64Bit))
	if r != vkg.Success {
		return fmt.Errorf("vkGetQueryPoolResults(raw timestamps of slot %d): %w", slot, vkg.Error(r))
	}
	for i := 0; i < int(rz.n); i++ {
		rz.ns += rz.duration(2 * i)
		rz.pairs++
	}
	if rz.cmdGPU && rz.frame[slot] >= rz.warmup {
		rz.cmdNs = keep(rz.cmdNs, rz.duration(int(2*rz.n)))
	}
	return nil
}

// duration is the time from result i to result i+1, in ns.
func (rz *rawZones) duration(i int) int64 {
	return int64(float64((rz.results[i+1]-rz.results[i])&rz.mask) * rz.period)
}

func (rz *rawZones) destroy() {
	if rz.pool != vkg.NullQueryPool {
		vkg.DestroyQueryPool(rz.dev.Handle, rz.pool, nil)
		rz.pool = vkg.NullQueryPool
	}
}
