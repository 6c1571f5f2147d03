package profiler_test

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// TestWorkRefused: GPU refuses statistics, with an error naming what is
// missing, on a wrapped device whose application did not say it enabled
// pipelineStatisticsQuery, and bits that are no Vulkan 1.0 statistic;
// and takes them on the same device when it did.
func TestWorkRefused(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	dev := wrapWith(t, q, false) // says nothing of pipelineStatisticsQuery
	gq, ok := dev.QueueFor(profiler.QueueGraphics)
	if !ok {
		t.Fatal("no graphics queue")
	}
	p := profiler.New(profiler.Options{})
	defer p.Close()
	for _, c := range []struct {
		stats profiler.PipelineStats
		want  string
	}{
		{timeline.FragmentShaderInvocations, "Existing.PipelineStatisticsQuery"},
		{1 << 11, "bits 0x800 are not among the 11 statistics"},
		{timeline.AllPipelineStats | 1<<20, "bits 0x100000"},
	} {
		g, err := p.GPU(dev, gq, profiler.GPUOptions{PipelineStatistics: c.stats})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PipelineStatistics %v: err %v, want one naming %q", c.stats, err, c.want)
		}
		if g != nil {
			g.Close()
		}
	}
	if !q.Dev.PipelineStatistics {
		t.Skip("the device has no pipelineStatisticsQuery")
	}
	d := q.Dev
	on, err := profiler.WrapDevice(profiler.Existing{
		Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: []profiler.QueueID{{Family: q.Q.Family, Index: q.Q.Index}},
		HostQueryReset: d.HostQueryReset, PipelineStatisticsQuery: true, APIVersion: d.Instance.APIVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	oq, _ := on.QueueFor(profiler.QueueGraphics)
	g, err := p.GPU(on, oq, profiler.GPUOptions{PipelineStatistics: timeline.AllPipelineStats})
	if err != nil {
		t.Fatalf("with the feature enabled: %v", err)
	}
	g.Close()
}
