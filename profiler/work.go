package profiler

import (
	"fmt"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// PipelineStats is a set of pipeline statistics, VkQueryPipelineStatisticFlagBits
// bit for bit (GPUOptions.PipelineStatistics); its values are timeline's:
// timeline.FragmentShaderInvocations, timeline.AllPipelineStats, ...
type PipelineStats = timeline.PipelineStats

// PipelineStats returns every pipeline statistic a queue of a family with
// f can count (GPUOptions.PipelineStatistics): the graphics ones with
// graphics operations, compute_shader_invocations with compute ones,
// none on a transfer-only queue.
func (f QueueFlags) PipelineStats() PipelineStats {
	var st PipelineStats
	if f.Has(QueueGraphics) {
		st |= timeline.GraphicsPipelineStats
	}
	if f.Has(QueueCompute) {
		st |= timeline.ComputeShaderInvocations
	}
	return st
}

// checkStats refuses statistics the device or the queue cannot count.
func checkStats(st PipelineStats, q Queue, d *vk.Device) error {
	if st == 0 {
		return nil
	}
	if !d.PipelineStatistics {
		how := "the device does not offer it"
		if d.Borrowed() {
			how = "enable it on the device and set Existing.PipelineStatisticsQuery"
		} else if d.Caps.PipelineStatisticsQuery {
			how = "the device was opened without it"
		}
		return fmt.Errorf("profiler: GPUOptions.PipelineStatistics (%v) needs the pipelineStatisticsQuery feature: %s", st, how)
	}
	can := q.Flags.PipelineStats()
	if g := st & timeline.GraphicsPipelineStats; g&^can != 0 {
		return fmt.Errorf("profiler: GPUOptions.PipelineStatistics: queue %d.%d (%s) has no graphics operations, which %v need (a queue without them counts compute_shader_invocations alone)",
			q.Family, q.Index, q.Flags, g)
	}
	if st&timeline.ComputeShaderInvocations&^can != 0 {
		return fmt.Errorf("profiler: GPUOptions.PipelineStatistics: queue %d.%d (%s) has no compute operations, which compute_shader_invocations needs",
			q.Family, q.Index, q.Flags)
	}
	return nil
}

// BeforeSecondaries is for a context with PipelineStatistics: call it
// before cmd executes secondary command buffers (vkCmdExecuteCommands),
// and before a render pass instance whose contents they are begins
// (VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS, or dynamic rendering's
// VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT). Vulkan lets no
// secondary run while a statistics query is active in its primary unless
// it inherits it, which a program's secondaries do not: the counts open
// in cmd end here, and the zones open in it, and those begun in it until
// the zone that began the count ends, have none
// (timeline.WorkSecondaries). The secondaries' own zones count. Without
// statistics it does nothing.
func (g *GPU) BeforeSecondaries(cmd vkg.CommandBuffer) {
	if g == nil || !g.work || g.state.Load() != stateOpen {
		return
	}
	g.pool.CutCounts(cmd)
}

// BeforeStatisticsQuery tells the profiler, with
// GPUOptions.PipelineStatistics, that the application is about to begin
// a pipeline statistics query of its own in cmd (vkCmdBeginQuery on a
// VK_QUERY_TYPE_PIPELINE_STATISTICS pool); AfterStatisticsQuery, that it
// ended it (vkCmdEndQuery). Vulkan lets one be active at a time in a
// command buffer: the profiler's counts open in cmd end there, and the
// zones open then, and those begun in cmd until AfterStatisticsQuery, have
// none (timeline.WorkQuery). The layer calls them. Without statistics
// they do nothing.
func (g *GPU) BeforeStatisticsQuery(cmd vkg.CommandBuffer) {
	if g == nil || !g.work || g.state.Load() != stateOpen {
		return
	}
	g.pool.BeforeQuery(cmd)
}

// AfterStatisticsQuery: see BeforeStatisticsQuery.
func (g *GPU) AfterStatisticsQuery(cmd vkg.CommandBuffer) {
	if g == nil || !g.work || g.state.Load() != stateOpen {
		return
	}
	g.pool.AfterQuery(cmd)
}

// ZoneInRenderPass is Zone for a zone that begins and ends inside one
// subpass of a render pass instance (or one dynamic rendering instance),
// where the zone around it, if any, began outside it. With
// GPUOptions.PipelineStatistics, it tells the profiler where the zone
// stands, which Vulkan needs (a statistics query begun outside a render
// pass instance may not end inside one): such a zone inside a counting
// zone begun outside the render pass has no counts of its own
// (timeline.WorkRenderPass), and the zone around it keeps its count;
// outermost, it counts as any zone. Without statistics it is Zone.
func (g *GPU) ZoneInRenderPass(cmd vkg.CommandBuffer, name Name) Zone {
	return g.zone(cmd, name, true)
}

// zoneExtra records what a zone has besides its begin timestamp: its
// debug label, and its place in the command buffer's count of work.
func (g *GPU) zoneExtra(z Zone, name Name, inside bool) {
	if g.work {
		g.pool.BeginWork(z.pair, z.cmd, inside)
	}
	if g.labels {
		g.dev.CmdBeginLabel(z.cmd, g.labelFor(name))
	}
}

// endExtra is EndIn with a label or work to end: the count of work
// first, so that the zone's end timestamp follows it.
func (g *GPU) endExtra(z Zone, cmd vkg.CommandBuffer, inside bool) {
	switch {
	case g.work && inside:
		g.pool.EndWorkInRenderPass(z.pair, cmd)
	case g.work:
		g.pool.EndWork(z.pair, cmd)
	}
	switch {
	case !g.labels:
		g.pool.EndQuiet(z.pair, cmd, g.end)
	case g.pool.End(z.pair, cmd, g.end):
		if cmd == z.cmd {
			g.dev.CmdEndLabel(cmd)
		}
	}
}
