package profiler

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// missingOf returns the reason each named zone of zs has no counts,
// "counted" where it has them, "nil" without Work.
func missingOf(p *Profiler, zs []ZoneResult) map[string]string {
	out := map[string]string{}
	for _, z := range zs {
		k := p.rec.NameOf(z.Name)
		switch {
		case z.Work == nil:
			out[k] = "nil"
		default:
			out[k] = z.Work.Missing.String()
		}
	}
	return out
}

// workFrame begins a frame on r, records into n command buffers, ends the
// frame in the last, submits them in order and drains the context.
func (r *rig) workFrame(n int, record func(cmds []vkg.CommandBuffer)) []ZoneResult {
	r.t.Helper()
	r.p.BeginFrame()
	cmds := r.q.Cmds(n)
	r.g.BeginFrame(cmds[0])
	record(cmds)
	r.g.EndFrame(cmds[n-1])
	r.p.EndFrame()
	r.q.SubmitWait(cmds...)
	r.q.Free(cmds...)
	zs, err := r.g.Drain(nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return zs
}

// TestWorkMissingReasons makes, through the public API on a real device
// with the validation layer on, a zone of each reason without counts that
// ends every query it began (ended in another command buffer, after the
// zone around it, past the frame's statistics queries, begun in the next
// frame), and checks each zone's reason, the counts in Stats, and the
// trace's Drops.Work; every zone reaches the timeline.
func TestWorkMissingReasons(t *testing.T) {
	for _, hostReset := range []bool{true, false} {
		t.Run(fmt.Sprintf("hostReset=%v", hostReset), func(t *testing.T) {
			testWorkMissingReasons(t, hostReset)
		})
	}
}

func testWorkMissingReasons(t *testing.T, hostReset bool) {
	r := newRig(t, vk.Config{NoHostQueryReset: !hostReset}, GPUOptions{
		PipelineStatistics: timeline.AllPipelineStats, FramesInFlight: 1,
		QueriesPerFrame: 16, MaxQueriesPerFrame: 64})
	p, g := r.p, r.g
	nm := func(s string) Name { return p.Name(s) }
	want := map[timeline.WorkMissing]uint64{}
	check := func(zs []ZoneResult, exp map[string]string) {
		t.Helper()
		got := missingOf(p, zs)
		for k, v := range exp {
			if got[k] != v {
				t.Errorf("zone %s: %q, want %q (all: %v)", k, got[k], v, got)
			}
			if m, ok := timeline.WorkMissingOf(v); ok && m != timeline.WorkCounted {
				want[m]++
			}
		}
	}

	// Ended in another command buffer: the zone around it ends the count.
	check(r.workFrame(2, func(c []vkg.CommandBuffer) {
		o := g.Zone(c[0], nm("owner"))
		in := g.Zone(c[0], nm("elsewhere"))
		o.End()
		in.EndIn(c[1])
	}), map[string]string{"owner": "counted", "elsewhere": "elsewhere"})

	// Misnested: the zone around it ended first, which ended the count.
	check(r.workFrame(1, func(c []vkg.CommandBuffer) {
		a := g.Zone(c[0], nm("a"))
		b := g.Zone(c[0], nm("b"))
		a.End()
		b.End()
		after := g.Zone(c[0], nm("after"))
		after.End()
	}), map[string]string{"a": "counted", "b": "misnested", "after": "counted"})

	// Spent (host reset only, which lets a frame's zones outgrow its
	// first 16 queries): 20 zones in one count need 39 queries.
	if hostReset {
		zs := r.workFrame(1, func(c []vkg.CommandBuffer) {
			o := g.Zone(c[0], nm("spent-owner"))
			for range 19 {
				g.Zone(c[0], nm("child")).End()
			}
			o.End()
		})
		got := map[string]int{}
		for _, z := range zs {
			got[p.rec.NameOf(z.Name)+"/"+z.Work.Missing.String()]++
		}
		// 16 queries: the owner's first, then two a child: the 8th
		// child ends the 16th and finds none to begin after it.
		if got["spent-owner/spent"] != 1 || got["child/counted"] != 8 || got["child/spent"] != 11 {
			t.Errorf("spent: %v", got)
		}
		want[timeline.WorkSpent] += 12
	}

	// Open at the frame's end, recorded in its command buffer, which ends
	// the count there; ended after it.
	{
		r.p.BeginFrame()
		c := r.q.Cmds(1)[0]
		g.BeginFrame(c)
		o := g.Zone(c, nm("open-at-end"))
		g.Zone(c, nm("closed-before")).End()
		g.EndFrame(c)
		o.End()
		r.p.EndFrame()
		r.q.SubmitWait(c)
		r.q.Free(c)
		zs, err := g.Drain(nil)
		if err != nil {
			t.Fatal(err)
		}
		// Its end came after the frame's copy: without host query reset
		// the next frame's readback brings it.
		zs = append(zs, r.workFrame(1, func([]vkg.CommandBuffer) {})...)
		check(zs, map[string]string{"open-at-end": "frame_end", "closed-before": "counted"})
	}

	// Begun in the next frame, within a zone of this one still counting.
	r.p.BeginFrame()
	c := r.q.Cmds(1)[0]
	g.BeginFrame(c)
	o := g.Zone(c, nm("frame-owner"))
	r.p.BeginFrame()
	g.BeginFrame(c)
	in := g.Zone(c, nm("next-frame"))
	in.End()
	o.End()
	g.EndFrame(c)
	r.p.EndFrame()
	r.q.SubmitWait(c)
	r.q.Free(c)
	zs, err := g.Drain(nil)
	if err != nil {
		t.Fatal(err)
	}
	check(zs, map[string]string{"frame-owner": "counted", "next-frame": "frames"})

	st := g.Stats()
	var sum uint64
	for m := range timeline.NumWorkMissing {
		if st.WorkMissing[m] != want[timeline.WorkMissing(m)] {
			t.Errorf("Stats.WorkMissing[%v] = %d, want %d", timeline.WorkMissing(m), st.WorkMissing[m], want[timeline.WorkMissing(m)])
		}
		sum += want[timeline.WorkMissing(m)]
	}
	if st.Drops.Work != sum || !st.Balanced() {
		t.Errorf("Stats: Drops.Work %d, want %d; balanced %v: %+v", st.Drops.Work, sum, st.Balanced(), st)
	}
	tr := r.p.Dump()
	if tr.Drops.Work != sum || !tr.Ledger.Balanced(tr.Drops) {
		t.Errorf("trace: Drops.Work %d, want %d; ledger balanced %v", tr.Drops.Work, sum, tr.Ledger.Balanced(tr.Drops))
	}
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track).Kind; k != timeline.TrackGPUQueue && k != timeline.TrackGPULane {
			continue
		}
		if s.Work == nil {
			t.Errorf("span %s has no Work", tr.Name(s.Name))
		}
	}
}
