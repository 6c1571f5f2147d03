package demo

import (
	"fmt"
	"strings"

	vkg "github.com/vulkan-go/vulkan"
)

// stageNames are the pipeline stages -stages accepts, by short name.
var stageNames = []struct {
	name  string
	stage vkg.PipelineStageFlagBits
}{
	{"top", vkg.PipelineStageTopOfPipeBit},
	{"bottom", vkg.PipelineStageBottomOfPipeBit},
	{"all", vkg.PipelineStageAllCommandsBit},
	{"graphics", vkg.PipelineStageAllGraphicsBit},
	{"vertex", vkg.PipelineStageVertexShaderBit},
	{"fragment", vkg.PipelineStageFragmentShaderBit},
	{"color", vkg.PipelineStageColorAttachmentOutputBit},
	{"transfer", vkg.PipelineStageTransferBit},
}

// stages is a zone's begin and end stage.
type stages struct {
	begin, end vkg.PipelineStageFlagBits
}

func stageByName(s string) (vkg.PipelineStageFlagBits, bool) {
	for _, n := range stageNames {
		if n.name == s {
			return n.stage, true
		}
	}
	return 0, false
}

func stageName(st vkg.PipelineStageFlagBits) string {
	for _, n := range stageNames {
		if n.stage == st {
			return n.name
		}
	}
	return fmt.Sprintf("%#x", uint32(st))
}

func (s stages) String() string { return stageName(s.begin) + "-" + stageName(s.end) }

// parseStages reads "BEGIN-END" ("top-bottom", "all-all"...), or one name
// for both ("top" is "top-top").
func parseStages(s string) (stages, error) {
	var names []string
	for _, n := range stageNames {
		names = append(names, n.name)
	}
	b, e, two := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "-")
	if !two {
		e = b
	}
	bs, ok1 := stageByName(b)
	es, ok2 := stageByName(e)
	if !ok1 || !ok2 {
		return stages{}, fmt.Errorf("stages %q: want BEGIN-END with each one of %s", s, strings.Join(names, ", "))
	}
	return stages{begin: bs, end: es}, nil
}
