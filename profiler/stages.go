package profiler

import (
	"fmt"
	"math/bits"

	vkg "github.com/vulkan-go/vulkan"
)

// coreStages are the Vulkan 1.0 stages vkCmdWriteTimestamp takes: each
// with the queue capabilities one of which it needs ("" for any queue),
// and the device feature it needs, if any.
var coreStages = map[vkg.PipelineStageFlagBits]struct {
	name    string
	queues  []string
	feature string
}{
	vkg.PipelineStageTopOfPipeBit:                    {"TOP_OF_PIPE", nil, ""},
	vkg.PipelineStageDrawIndirectBit:                 {"DRAW_INDIRECT", []string{"graphics", "compute"}, ""},
	vkg.PipelineStageVertexInputBit:                  {"VERTEX_INPUT", []string{"graphics"}, ""},
	vkg.PipelineStageVertexShaderBit:                 {"VERTEX_SHADER", []string{"graphics"}, ""},
	vkg.PipelineStageTessellationControlShaderBit:    {"TESSELLATION_CONTROL_SHADER", []string{"graphics"}, "tessellationShader"},
	vkg.PipelineStageTessellationEvaluationShaderBit: {"TESSELLATION_EVALUATION_SHADER", []string{"graphics"}, "tessellationShader"},
	vkg.PipelineStageGeometryShaderBit:               {"GEOMETRY_SHADER", []string{"graphics"}, "geometryShader"},
	vkg.PipelineStageFragmentShaderBit:               {"FRAGMENT_SHADER", []string{"graphics"}, ""},
	vkg.PipelineStageEarlyFragmentTestsBit:           {"EARLY_FRAGMENT_TESTS", []string{"graphics"}, ""},
	vkg.PipelineStageLateFragmentTestsBit:            {"LATE_FRAGMENT_TESTS", []string{"graphics"}, ""},
	vkg.PipelineStageColorAttachmentOutputBit:        {"COLOR_ATTACHMENT_OUTPUT", []string{"graphics"}, ""},
	vkg.PipelineStageComputeShaderBit:                {"COMPUTE_SHADER", []string{"compute"}, ""},
	vkg.PipelineStageTransferBit:                     {"TRANSFER", []string{"graphics", "compute", "transfer"}, ""},
	vkg.PipelineStageBottomOfPipeBit:                 {"BOTTOM_OF_PIPE", nil, ""},
	vkg.PipelineStageAllGraphicsBit:                  {"ALL_GRAPHICS", []string{"graphics"}, ""},
	vkg.PipelineStageAllCommandsBit:                  {"ALL_COMMANDS", nil, ""},
}

// checkStage reports whether vkCmdWriteTimestamp may write at stage on q
// (VUID-vkCmdWriteTimestamp-pipelineStage-04074 and the feature rules
// after it). own: Framescope created the device, so it knows that no
// optional feature and no extension stage is enabled; on a device the
// application made, those are its to know, and are let through.
func checkStage(which string, stage vkg.PipelineStageFlagBits, q Queue, own bool) error {
	if bits.OnesCount32(uint32(stage)) != 1 {
		return fmt.Errorf("profiler: %s %#x: vkCmdWriteTimestamp takes exactly one pipeline stage", which, uint32(stage))
	}
	if stage == vkg.PipelineStageHostBit {
		return fmt.Errorf("profiler: %s HOST: no command runs in the host stage", which)
	}
	s, core := coreStages[stage]
	if !core {
		if own {
			return fmt.Errorf("profiler: %s %#x: not a Vulkan 1.0 stage, and the device Framescope opened enables no extension that adds one", which, uint32(stage))
		}
		return nil
	}
	if len(s.queues) > 0 {
		ok := false
		for _, w := range s.queues {
			ok = ok || containsWord(q.Flags, w)
		}
		if !ok {
			return fmt.Errorf("profiler: %s %s: queue family %d (%s) does not support it", which, s.name, q.Family, q.Flags)
		}
	}
	if s.feature != "" && own {
		return fmt.Errorf("profiler: %s %s: needs the %s feature, which the device Framescope opened does not enable", which, s.name, s.feature)
	}
	return nil
}
