package profiler

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// A recording's zones count their work at every execution, as a frame's
// do, nested ones too (here an empty command buffer's: none of anything,
// but counted); a zone carried to a later command buffer has none, for no
// count spans two (WorkElsewhere). The validation layer says nothing of
// the statistics queries the recordings reset, run and copy.
func TestRecordingsCountWork(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{PipelineStatistics: timeline.AllPipelineStats, FramesInFlight: 1})
	if err := r.g.Err(); err != nil {
		t.Fatal(err)
	}
	p, g, q := r.p, r.g, r.q
	a, b := q.Cmd(), q.Cmd()
	q.End(a, b)
	q.BeginWith(a, 0)
	rec := g.Record(a)
	outer := g.Zone(a, p.Name("outer"))
	g.Zone(a, p.Name("inner")).End()
	outer.End()
	g.Zone(a, p.Name("carried")) // ended in b
	rec.EndKeepingOpen()
	q.End(a)
	q.BeginWith(b, 0)
	rb := g.Record(b)
	g.Zone(b, p.Name("after")).End()
	rb.EndCarried()
	rb.End()
	q.End(b)
	main := p.CPUTrack("main")
	submit := p.Name("submit")
	const runs = 3
	fence := q.Fence()
	var zs []ZoneResult
	for range runs {
		p.BeginFrame()
		s := main.Span(submit)
		g.Submit(s, a, b)
		q.Resubmit(fence, a, b)
		q.Wait(fence)
		s.End()
		p.EndFrame()
		zs = g.Collect(zs)
	}
	p.BeginFrame() // the last frame waited for: its executions are read
	p.EndFrame()
	zs, err := g.Drain(zs)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if st := g.Stats(); st.Drops != (timeline.Drops{Work: runs}) {
		t.Errorf("drops %+v, want the carried zones' counts alone (work %d)", st.Drops, runs)
	}
	got := map[string]map[string]int{}
	for _, z := range zs {
		k := p.rec.NameOf(z.Name)
		if got[k] == nil {
			got[k] = map[string]int{}
		}
		m := "nil"
		if z.Work != nil {
			m = z.Work.Missing.String()
			if z.Work.Missing == timeline.WorkCounted && z.Work.Stats != g.pool.Config().Stats {
				t.Errorf("%s counts %v, its context %v", k, z.Work.Stats, g.pool.Config().Stats)
			}
		}
		got[k][m]++
	}
	counted, elsewhere := timeline.WorkCounted.String(), timeline.WorkElsewhere.String()
	for name, want := range map[string]string{"outer": counted, "inner": counted, "after": counted, "carried": elsewhere} {
		if got[name][want] != runs || len(got[name]) != 1 {
			t.Errorf("%s: %v, want %d %s", name, got[name], runs, want)
		}
	}
}

// A primary that executes secondaries ends its counts first
// (BeforeSecondaries): Vulkan lets no secondary run under a statistics
// query it does not inherit, and the validation layer says nothing. The
// zone open across the execution has no counts (secondaries), nor has a
// zone begun after it inside that one; the secondary's own zone counts.
func TestWorkBeforeSecondaries(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{PipelineStatistics: timeline.AllPipelineStats, FramesInFlight: 1})
	p, g, q := r.p, r.g, r.q
	zs := r.frame(func(cmd vkg.CommandBuffer) {
		sec := q.Secondaries(1)[0]
		q.BeginSecondary(sec)
		rs := g.Record(sec)
		g.Zone(sec, p.Name("in secondary")).End()
		rs.End()
		outer := g.Zone(cmd, p.Name("outer"))
		g.BeforeSecondaries(cmd)
		q.Execute(cmd, sec)
		g.Zone(cmd, p.Name("after")).End()
		outer.End()
		g.Submit(p.CPUTrack("main").Span(p.Name("submit")), cmd, sec)
	})
	r.expectWork(zs, map[string]string{"in secondary": "counted", "outer": "secondaries", "after": "secondaries"})
}

// An application's own statistics query in a command buffer, told of
// (BeforeStatisticsQuery, AfterStatisticsQuery): the profiler's count
// open there ends before it, and none begins until it ends; the zone open
// across it and a zone begun during it have no counts (query), a zone
// begun after it counts again, and the validation layer says nothing (the
// rig's device has it on: two statistics queries active at once in a
// command buffer are invalid).
func TestWorkAroundStatisticsQuery(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{PipelineStatistics: timeline.AllPipelineStats, FramesInFlight: 1})
	p, g, q := r.p, r.g, r.q
	var pool vkg.QueryPool
	qi := vkg.QueryPoolCreateInfo{SType: vkg.StructureTypeQueryPoolCreateInfo, QueryType: vkg.QueryTypePipelineStatistics,
		QueryCount: 1, PipelineStatistics: vkg.QueryPipelineStatisticFlags(vkg.QueryPipelineStatisticComputeShaderInvocationsBit)}
	if res := vkg.CreateQueryPool(q.Dev.Handle, &qi, nil, &pool); res != vkg.Success {
		t.Fatalf("vkCreateQueryPool: %v", vkg.Error(res))
	}
	defer vkg.DestroyQueryPool(q.Dev.Handle, pool, nil)
	zs := r.frame(func(cmd vkg.CommandBuffer) {
		vkg.CmdResetQueryPool(cmd, pool, 0, 1)
		outer := g.Zone(cmd, p.Name("outer"))
		g.BeforeStatisticsQuery(cmd)
		vkg.CmdBeginQuery(cmd, pool, 0, 0)
		g.Zone(cmd, p.Name("during")).End()
		vkg.CmdEndQuery(cmd, pool, 0)
		g.AfterStatisticsQuery(cmd)
		outer.End()
		g.Zone(cmd, p.Name("after")).End()
		g.Submit(p.CPUTrack("main").Span(p.Name("submit")), cmd)
	})
	r.expectWork(zs, map[string]string{"outer": "query", "during": "query", "after": "counted"})
}

// A zone begun outside a render pass instance and ended inside one
// (EndInRenderPass; a debug label may do it): no statistics query begun
// outside may end inside, so the zone has no counts (render_pass), and the
// count around it goes on; a zone after it counts, and so does the zone
// around both.
func TestWorkEndedInRenderPass(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{PipelineStatistics: timeline.AllPipelineStats, FramesInFlight: 1})
	p, g := r.p, r.g
	zs := r.frame(func(cmd vkg.CommandBuffer) {
		outer := g.Zone(cmd, p.Name("outer"))
		label := g.Zone(cmd, p.Name("label"))
		// vkCmdBeginRenderPass
		label.EndInRenderPass()
		// vkCmdEndRenderPass
		g.Zone(cmd, p.Name("after")).End()
		outer.End()
		g.Submit(p.CPUTrack("main").Span(p.Name("submit")), cmd)
	})
	r.expectWork(zs, map[string]string{"outer": "counted", "label": "render_pass", "after": "counted"})
}

// expectWork waits for the frame of zs (the next frame's begin), reads it
// back, and holds each zone's reason for its counts to want, by name.
func (r *rig) expectWork(zs []ZoneResult, want map[string]string) {
	r.t.Helper()
	r.p.BeginFrame()
	r.p.EndFrame()
	zs, err := r.g.Drain(zs)
	if err != nil {
		r.t.Fatal(err)
	}
	if got := missingOf(r.p, zs); fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Errorf("work %v, want %v", got, want)
	}
}
