package profiler

import (
	"fmt"
	"math/bits"

	vkg "github.com/vulkan-go/vulkan"
)

// coreStages are the Vulkan 1.0 stages vkCmdWriteTimestamp takes: each
// with the queue capabilities one of which it needs (0 for any queue),
// and the device feature it needs, if any.
var coreStages = map[vkg.PipelineStageFlagBits]struct {
	name    string
	queues  QueueFlags
	feature string
}{
	vkg.PipelineStageTopOfPipeBit:                    {"TOP_OF_PIPE", 0, ""},
	vkg.PipelineStageDrawIndirectBit:                 {"DRAW_INDIRECT", QueueGraphics | QueueCompute, ""},
	vkg.PipelineStageVertexInputBit:                  {"VERTEX_INPUT", QueueGraphics, ""},
	vkg.PipelineStageVertexShaderBit:                 {"VERTEX_SHADER", QueueGraphics, ""},
	vkg.PipelineStageTessellationControlShaderBit:    {"TESSELLATION_CONTROL_SHADER", QueueGraphics, "tessellationShader"},
	vkg.PipelineStageTessellationEvaluationShaderBit: {"TESSELLATION_EVALUATION_SHADER", QueueGraphics, "tessellationShader"},
	vkg.PipelineStageGeometryShaderBit:               {"GEOMETRY_SHADER", QueueGraphics, "geometryShader"},
	vkg.PipelineStageFragmentShaderBit:               {"FRAGMENT_SHADER", QueueGraphics, ""},
	vkg.PipelineStageEarlyFragmentTestsBit:           {"EARLY_FRAGMENT_TESTS", QueueGraphics, ""},
	vkg.PipelineStageLateFragmentTestsBit:            {"LATE_FRAGMENT_TESTS", QueueGraphics, ""},
	vkg.PipelineStageColorAttachmentOutputBit:        {"COLOR_ATTACHMENT_OUTPUT", QueueGraphics, ""},
	vkg.PipelineStageComputeShaderBit:                {"COMPUTE_SHADER", QueueCompute, ""},
	vkg.PipelineStageTransferBit:                     {"TRANSFER", QueueGraphics | QueueCompute | QueueTransfer, ""},
	vkg.PipelineStageBottomOfPipeBit:                 {"BOTTOM_OF_PIPE", 0, ""},
	vkg.PipelineStageAllGraphicsBit:                  {"ALL_GRAPHICS", QueueGraphics, ""},
	vkg.PipelineStageAllCommandsBit:                  {"ALL_COMMANDS", 0, ""},
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
	if s.queues != 0 {
		if q.Flags&s.queues == 0 {
			return fmt.Errorf("profiler: %s %s: queue family %d (%s) does not support it", which, s.name, q.Family, q.Flags)
		}
	}
	if s.feature != "" && own {
		return fmt.Errorf("profiler: %s %s: needs the %s feature, which the device Framescope opened does not enable", which, s.name, s.feature)
	}
	return nil
}

// checkReset refuses a queue whose queries could not be reset: without
// host query reset they are reset by vkCmdResetQueryPool, which Vulkan
// allows only in command buffers of graphics and compute queues. which
// names the queue's role in the error.
func checkReset(which string, q Queue, hostReset bool) error {
	if hostReset || q.Flags.Has(QueueGraphics) || q.Flags.Has(QueueCompute) {
		return nil
	}
	return fmt.Errorf("profiler: %s %d.%d (%s): without host query reset its queries would be reset with vkCmdResetQueryPool, which Vulkan allows only on graphics and compute queues: enable hostQueryReset (Existing.HostQueryReset) to profile it",
		which, q.Family, q.Index, q.Flags)
}
