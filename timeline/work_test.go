package timeline

import "testing"

func TestPipelineStatsKeys(t *testing.T) {
	if s := AllPipelineStats.String(); s != "input_assembly_vertices+input_assembly_primitives+vertex_shader_invocations+geometry_shader_invocations+geometry_shader_primitives+clipping_invocations+clipping_primitives+fragment_shader_invocations+tessellation_control_shader_patches+tessellation_evaluation_shader_invocations+compute_shader_invocations" {
		t.Errorf("AllPipelineStats = %q", s)
	}
	// Bit for bit VkQueryPipelineStatisticFlagBits.
	if FragmentShaderInvocations != 0x80 || ComputeShaderInvocations != 0x400 || AllPipelineStats != 0x7ff {
		t.Errorf("bits: fragment %#x compute %#x all %#x", FragmentShaderInvocations, ComputeShaderInvocations, AllPipelineStats)
	}
	for _, s := range []PipelineStats{0, FragmentShaderInvocations, ClippingPrimitives | VertexShaderInvocations, AllPipelineStats} {
		got, err := ParsePipelineStats(s.String())
		if err != nil || got != s {
			t.Errorf("ParsePipelineStats(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	if got, err := ParsePipelineStats("all"); err != nil || got != AllPipelineStats {
		t.Errorf("all: %v %v", got, err)
	}
	if _, err := ParsePipelineStats("fragments"); err == nil {
		t.Error("an unknown key parsed")
	}
	if s := (FragmentShaderInvocations | 1<<20).String(); s != "fragment_shader_invocations+0x100000" {
		t.Errorf("extra bits: %q", s)
	}
}

func TestWorkValue(t *testing.T) {
	w := &Work{Stats: FragmentShaderInvocations | ComputeShaderInvocations}
	w.Count[7], w.Count[10] = 12, 64
	if v, ok := w.Of(FragmentShaderInvocations); !ok || v != 12 {
		t.Errorf("fragments %d %v", v, ok)
	}
	if _, ok := w.Of(VertexShaderInvocations); ok {
		t.Error("a statistic not counted has a value")
	}
	if _, ok := w.Of(FragmentShaderInvocations | ComputeShaderInvocations); ok {
		t.Error("two statistics have one value")
	}
	w.Missing = WorkRenderPass
	if _, ok := w.Of(FragmentShaderInvocations); ok {
		t.Error("a zone without counts has a value")
	}
	var none *Work
	if _, ok := none.Of(FragmentShaderInvocations); ok {
		t.Error("nil Work has a value")
	}
	for m := WorkCounted; m < NumWorkMissing; m++ {
		if got, ok := WorkMissingOf(m.String()); !ok || got != m {
			t.Errorf("WorkMissingOf(%q) = %v %v", m.String(), got, ok)
		}
	}
}
