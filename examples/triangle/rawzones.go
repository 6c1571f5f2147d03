package main

import (
	"fmt"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// rawZones writes pairs of timestamps with bare vkCmdWriteTimestamp, into
// a query pool of the demo's own: the floor the profiler's zones are
// compared with. Each frame slot has its own range of 2*n queries, reset
// by a command at the start of its frame and read back once its fence
// has signalled.
type rawZones struct {
	dev     vkg.Device
	pool    vkg.QueryPool
	n       uint32 // pairs per frame
	stages  stages
	mask    uint64 // timestampValidBits
	period  float64
	results []uint64 // 2*n, reused
	pending []bool   // per slot: a frame was submitted and not read yet

	pairs uint64 // pairs read back
	ns    int64  // their total duration
}

func newRawZones(dev vkg.Device, slots int, n int, st stages, validBits uint32, period float32) (*rawZones, error) {
	rz := &rawZones{dev: dev, n: uint32(n), stages: st, period: float64(period), pending: make([]bool, slots)}
	if n == 0 {
		return rz, nil
	}
	rz.mask = ^uint64(0)
	if validBits < 64 {
		rz.mask = 1<<validBits - 1
	}
	ci := vkg.QueryPoolCreateInfo{
		SType:      vkg.StructureTypeQueryPoolCreateInfo,
		QueryType:  vkg.QueryTypeTimestamp,
		QueryCount: uint32(slots) * 2 * rz.n,
	}
	var pool vkg.QueryPool
	if r := vkg.CreateQueryPool(dev, &ci, nil, &pool); r != vkg.Success {
		return nil, fmt.Errorf("vkCreateQueryPool(%d timestamps): %w", ci.QueryCount, vkg.Error(r))
	}
	rz.pool = pool
	rz.results = make([]uint64, 2*n)
	return rz, nil
}

// reset records the reset of slot's queries; outside a render pass.
func (rz *rawZones) reset(cmd vkg.CommandBuffer, slot int) {
	if rz.n == 0 {
		return
	}
	vkg.CmdResetQueryPool(cmd, rz.pool, uint32(slot)*2*rz.n, 2*rz.n)
	rz.pending[slot] = true
}

// begin and end write the timestamps of pair i of slot.
func (rz *rawZones) begin(cmd vkg.CommandBuffer, slot, i int) {
	vkg.CmdWriteTimestamp(cmd, rz.stages.begin, rz.pool, uint32(slot)*2*rz.n+2*uint32(i))
}

func (rz *rawZones) end(cmd vkg.CommandBuffer, slot, i int) {
	vkg.CmdWriteTimestamp(cmd, rz.stages.end, rz.pool, uint32(slot)*2*rz.n+2*uint32(i)+1)
}

// read reads slot's pairs back, once the slot's fence has signalled.
func (rz *rawZones) read(slot int) error {
	if rz.n == 0 || !rz.pending[slot] {
		return nil
	}
	rz.pending[slot] = false
	size := uint(len(rz.results) * 8)
	r := vkg.GetQueryPoolResults(rz.dev, rz.pool, uint32(slot)*2*rz.n, 2*rz.n, size,
		unsafe.Pointer(&rz.results[0]), 8, vkg.QueryResultFlags(vkg.QueryResult64Bit))
	if r != vkg.Success {
		return fmt.Errorf("vkGetQueryPoolResults(raw zones of slot %d): %w", slot, vkg.Error(r))
	}
	for i := 0; i < int(rz.n); i++ {
		d := (rz.results[2*i+1] - rz.results[2*i]) & rz.mask
		rz.ns += int64(float64(d) * rz.period)
		rz.pairs++
	}
	return nil
}

func (rz *rawZones) destroy() {
	if rz.pool != vkg.NullQueryPool {
		vkg.DestroyQueryPool(rz.dev, rz.pool, nil)
		rz.pool = vkg.NullQueryPool
	}
}
