package profiler

import (
	"errors"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// GPUOptions.BeginStage and EndStage: a stage vkCmdWriteTimestamp may not
// take is refused at GPU() time, naming it.
func TestStagesRefusedAtGPU(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	dev := &Device{d: q.Dev}
	gq := Queue{Handle: q.Q.Handle, Family: q.Q.Family, Flags: QueueFlags(q.Q.Bits), ValidBits: q.Q.ValidBits}
	computeOnly := gq
	computeOnly.Flags = QueueCompute // as a compute-only family would say
	p := New(Options{})
	for _, c := range []struct {
		begin, end vkg.PipelineStageFlagBits
		q          Queue
		want       string
	}{
		{vkg.PipelineStageTopOfPipeBit | vkg.PipelineStageBottomOfPipeBit, 0, gq, "BeginStage 0x2001: vkCmdWriteTimestamp takes exactly one"},
		{0, vkg.PipelineStageHostBit, gq, "EndStage HOST"},
		{vkg.PipelineStageGeometryShaderBit, 0, gq, "BeginStage GEOMETRY_SHADER: needs the geometryShader feature"},
		{0, vkg.PipelineStageTessellationEvaluationShaderBit, gq, "EndStage TESSELLATION_EVALUATION_SHADER: needs the tessellationShader"},
		{vkg.PipelineStageTransformFeedbackBit, 0, gq, "BeginStage 0x1000000: not a Vulkan 1.0 stage"},
		{vkg.PipelineStageFragmentShaderBit, 0, computeOnly, "BeginStage FRAGMENT_SHADER: queue family"},
		{0, vkg.PipelineStageAllGraphicsBit, computeOnly, "EndStage ALL_GRAPHICS: queue family"},
	} {
		g, err := p.GPU(dev, c.q, GPUOptions{BeginStage: c.begin, EndStage: c.end})
		if c.q.Flags != gq.Flags {
			// GPU takes the family's flags from the device, which has no
			// compute-only family here: check the stages as GPU does.
			if g != nil {
				g.Close()
			}
			g, err = nil, checkStage("BeginStage", max(c.begin, vkg.PipelineStageTopOfPipeBit), c.q, true)
			if c.end != 0 {
				err = checkStage("EndStage", c.end, c.q, true)
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("stages %#x-%#x on %q: %v, want an error with %q", uint32(c.begin), uint32(c.end), c.q.Flags, err, c.want)
		}
		if g != nil {
			g.Close()
		}
	}
	if len(p.gpus) != 0 {
		t.Errorf("%d contexts made", len(p.gpus))
	}
}

// A valid pair other than the default records and reads back with no
// validation message.
func TestStagesRecordAndReadBack(t *testing.T) {
	for _, st := range [][2]vkg.PipelineStageFlagBits{
		{vkg.PipelineStageVertexShaderBit, vkg.PipelineStageFragmentShaderBit},
		{vkg.PipelineStageComputeShaderBit, vkg.PipelineStageTransferBit},
		{vkg.PipelineStageAllCommandsBit, vkg.PipelineStageAllCommandsBit},
	} {
		r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, BeginStage: st[0], EndStage: st[1]})
		name := r.p.Name("z")
		zs := r.frame(func(cmd vkg.CommandBuffer) {
			defer r.g.Zone(cmd, name).End()
			r.g.Zone(cmd, name).End()
		})
		if len(zs) != 2 {
			t.Errorf("stages %#x-%#x: %d zones, want 2", uint32(st[0]), uint32(st[1]), len(zs))
		}
		for _, z := range zs {
			if !z.Converted {
				t.Errorf("stages %#x-%#x: zone not converted", uint32(st[0]), uint32(st[1]))
			}
		}
	}
}

// The stages given are the ones each vkCmdWriteTimestamp gets: the
// validation layer's best-practices checks warn when vkCmdWriteTimestamp
// is called with ALL_COMMANDS or ALL_GRAPHICS, naming the stage. With
// BeginStage ALL_COMMANDS and EndStage ALL_GRAPHICS, Zone draws the first
// warning and End the second; with the defaults, neither warns.
func TestStagesReachTimestamps(t *testing.T) {
	d := vktest.OpenUnchecked(t, vk.Config{InstanceConfig: vk.InstanceConfig{BestPractices: true}})
	if !d.Instance.Validation {
		t.Skip("validation layer not installed")
	}
	qv, _ := d.QueueFor("graphics")
	tq := vktest.NewQueue(t, d, qv)
	dev := &Device{d: d}
	q := Queue{Handle: qv.Handle, Family: qv.Family, Flags: QueueFlags(qv.Bits), ValidBits: qv.ValidBits}
	for _, c := range []struct {
		begin, end         vkg.PipelineStageFlagBits
		wantBegin, wantEnd string // "": no message
	}{
		{vkg.PipelineStageAllCommandsBit, vkg.PipelineStageAllGraphicsBit, "ALL_COMMANDS", "ALL_GRAPHICS"},
		{vkg.PipelineStageAllGraphicsBit, vkg.PipelineStageAllCommandsBit, "ALL_GRAPHICS", "ALL_COMMANDS"},
		{0, 0, "", ""},
	} {
		p := New(Options{})
		g, err := p.GPU(dev, q, GPUOptions{FramesInFlight: 1, BeginStage: c.begin, EndStage: c.end})
		if err != nil {
			t.Fatal(err)
		}
		p.BeginFrame()
		cmd := tq.Cmd()
		g.BeginFrame(cmd)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		vk.TakeValidationMessages()
		z := g.Zone(cmd, p.Name("z"))
		atZone := vk.TakeValidationMessages()
		z.End()
		atEnd := vk.TakeValidationMessages()
		g.EndFrame(cmd)
		p.EndFrame()
		tq.SubmitWait(cmd)
		if zs, err := g.Drain(nil); err != nil || len(zs) != 1 {
			t.Errorf("%d zones (%v), want 1", len(zs), err)
		}
		g.Close()
		check := func(at string, msgs []string, want string) {
			t.Helper()
			if want == "" {
				if len(msgs) != 0 {
					t.Errorf("default stages: at %s the layer said %q", at, msgs)
				}
				return
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], "VK_PIPELINE_STAGE_"+want+"_BIT when vkCmdWriteTimestamp") {
				t.Errorf("at %s the layer said %q; want one warning on %s in vkCmdWriteTimestamp", at, msgs, want)
			}
		}
		check("Zone", atZone, c.wantBegin)
		check("End", atEnd, c.wantEnd)
	}
}

// DebugLabels on a device whose instance lacks VK_EXT_debug_utils (here:
// a wrapped device that does not declare it) is an error, not labels
// silently left out; without DebugLabels the same device profiles.
func TestDebugLabelsWithoutDebugUtils(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	dev, err := WrapDevice(Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: queueIDs(d),
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := dev.QueueFor(QueueGraphics)
	p := New(Options{})
	if g, err := p.GPU(dev, q, GPUOptions{DebugLabels: true}); !errors.Is(err, ErrNoDebugLabels) || g != nil {
		t.Fatalf("DebugLabels without VK_EXT_debug_utils: %v, want ErrNoDebugLabels", err)
	} else {
		t.Logf("%v", err)
	}
	g, err := p.GPU(dev, q, GPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.gpus) != 1 {
		t.Errorf("%d contexts, want the one that worked", len(p.gpus))
	}
	dev.Close() // closes g
	g.BeginFrame(nil)
	if err := g.Err(); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("after the wrapper's Close: %v", err)
	}
}
