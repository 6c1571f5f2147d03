package profiler

import (
	"testing"

	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// BenchmarkCollectWork is BenchmarkCollect with every zone counting every
// pipeline statistic the queue offers: run beside it for the cost of
// statistics on Collect.
func BenchmarkCollectWork(b *testing.B) { benchCollect(b, timeline.AllPipelineStats) }

// BenchmarkZoneWork alternates, on one command buffer, blocks of zones of
// a context that counts no statistics (off), of one that counts every
// statistic the queue offers, each zone outermost (on-flat: a statistics
// query begun and ended a zone) and nested 63 deep in one (on-nested: a
// query ended and the next begun at each Begin and End), and raw
// timestamp pairs beside raw statistics queries (vkCmdBeginQuery and
// vkCmdEndQuery of a pool of its own, through vulkan-go as an application
// calls them: the floor of a zone's statistics), and reports each per
// zone and on/off: the cost of statistics on the zone path, in one run.
func BenchmarkZoneWork(b *testing.B) {
	const block = 64
	r := newBenchRig(b)
	pOff, gOff := r.profiler(2 * benchBatch)
	pOn, gOn := r.profilerWith(2*benchBatch, timeline.AllPipelineStats)
	if !r.dev.PipelineStatistics {
		b.Skip("no pipelineStatisticsQuery")
	}
	nOff, nOn := pOff.Name("zone"), pOn.Name("zone")
	var qp vkg.QueryPool
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypeTimestamp, QueryCount: 2 * block}, nil, &qp)
	defer vkg.DestroyQueryPool(r.dev.Handle, qp, nil)
	var sp vkg.QueryPool
	vkg.CreateQueryPool(r.dev.Handle, &vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo,
		QueryType: vkg.QueryTypePipelineStatistics, QueryCount: block,
		PipelineStatistics: vkg.QueryPipelineStatisticFlags(gOn.pool.Config().Stats)}, nil, &sp)
	defer vkg.DestroyQueryPool(r.dev.Handle, sp, nil)
	var offNs, flatNs, nestNs, rawNs, statNs int64
	var zones int
	var zs []ZoneResult
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		r.begin()
		pOff.BeginFrame()
		pOn.BeginFrame()
		gOff.BeginFrame(r.cmd)
		gOn.BeginFrame(r.cmd)
		// Each block takes block zones of gOff, 2*block of gOn.
		for k := uint32(0); k+2*block <= benchBatch && done < b.N; k += 2 * block {
			vkg.CmdResetQueryPool(r.cmd, qp, 0, 2*block)
			vkg.CmdResetQueryPool(r.cmd, sp, 0, block)
			t0 := timeline.Now()
			for range block {
				gOff.Zone(r.cmd, nOff).End()
			}
			t1 := timeline.Now()
			for range block {
				gOn.Zone(r.cmd, nOn).End()
			}
			t2 := timeline.Now()
			outer := gOn.Zone(r.cmd, nOn)
			for range block - 1 {
				gOn.Zone(r.cmd, nOn).End()
			}
			outer.End()
			t3 := timeline.Now()
			for j := range uint32(block) {
				vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*j)
				vkg.CmdWriteTimestamp(r.cmd, vkg.PipelineStageTopOfPipeBit, qp, 2*j+1)
			}
			t4 := timeline.Now()
			for j := range uint32(block) {
				vkg.CmdBeginQuery(r.cmd, sp, j, 0)
				vkg.CmdEndQuery(r.cmd, sp, j)
			}
			t5 := timeline.Now()
			statNs += t5 - t4
			offNs += t1 - t0
			flatNs += t2 - t1
			nestNs += t3 - t2
			rawNs += t4 - t3
			done += block
			zones += block
		}
		gOff.EndFrame(r.cmd)
		gOn.EndFrame(r.cmd)
		pOff.EndFrame()
		pOn.EndFrame()
		r.submitWait()
		zs, _ = gOff.Drain(zs[:0])
		zs, _ = gOn.Drain(zs[:0])
		for i := range zs {
			if w := zs[i].Work; w == nil || w.Missing != timeline.WorkCounted {
				b.Fatalf("zone %d has no counts: %+v", i, w)
			}
		}
	}
	b.StopTimer()
	n := float64(zones)
	b.ReportMetric(float64(offNs)/n, "off-ns/zone")
	b.ReportMetric(float64(flatNs)/n, "on-flat-ns/zone")
	b.ReportMetric(float64(nestNs)/n, "on-nested-ns/zone")
	b.ReportMetric(float64(rawNs)/n, "ns/rawpair")
	b.ReportMetric(float64(flatNs)/float64(offNs), "on-flat/off")
	b.ReportMetric(float64(nestNs)/float64(offNs), "on-nested/off")
	b.ReportMetric(float64(statNs)/n, "ns/rawstatquery")
	b.ReportMetric(float64(offNs)/float64(rawNs), "off/raw")
	b.ReportMetric(float64(flatNs)/float64(rawNs+statNs), "on-flat/(raw+rawstat)")
}
