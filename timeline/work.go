package timeline

import (
	"fmt"
	"math/bits"
	"strings"
)

// PipelineStats is a set of Vulkan pipeline statistics, bit for bit
// VkQueryPipelineStatisticFlagBits: the work a GPU zone counts besides its
// time.
type PipelineStats uint32

// The pipeline statistics Vulkan 1.0 defines, in its bit order.
const (
	InputAssemblyVertices PipelineStats = 1 << iota
	InputAssemblyPrimitives
	VertexShaderInvocations
	GeometryShaderInvocations
	GeometryShaderPrimitives
	ClippingInvocations
	ClippingPrimitives
	FragmentShaderInvocations
	TessellationControlShaderPatches
	TessellationEvaluationShaderInvocations
	ComputeShaderInvocations

	// AllPipelineStats is every statistic above.
	AllPipelineStats PipelineStats = 1<<NumPipelineStats - 1
	// GraphicsPipelineStats are those a queue family needs graphics
	// operations to count; ComputeShaderInvocations needs compute.
	GraphicsPipelineStats = AllPipelineStats &^ ComputeShaderInvocations
)

// NumPipelineStats is how many statistics PipelineStats has bits for.
const NumPipelineStats = 11

var statKeys = [NumPipelineStats]string{
	"input_assembly_vertices", "input_assembly_primitives", "vertex_shader_invocations",
	"geometry_shader_invocations", "geometry_shader_primitives", "clipping_invocations",
	"clipping_primitives", "fragment_shader_invocations", "tessellation_control_shader_patches",
	"tessellation_evaluation_shader_invocations", "compute_shader_invocations",
}

// StatKey returns the key of statistic i (its bit position) in every
// trace format, pprof's sample types and framescope's tables:
// "input_assembly_vertices", ..., "compute_shader_invocations"; "" when i
// is out of range.
func StatKey(i int) string {
	if i < 0 || i >= NumPipelineStats {
		return ""
	}
	return statKeys[i]
}

// StatOf returns the bit position of the statistic whose key is k.
func StatOf(k string) (int, bool) {
	for i, s := range statKeys {
		if s == k {
			return i, true
		}
	}
	return 0, false
}

// Len returns how many statistics s holds.
func (s PipelineStats) Len() int { return bits.OnesCount32(uint32(s & AllPipelineStats)) }

// Has reports whether s holds statistic i (its bit position).
func (s PipelineStats) Has(i int) bool { return i >= 0 && i < NumPipelineStats && s&(1<<i) != 0 }

// Each calls fn with the bit position of each statistic s holds, in bit
// order: the order of Vulkan's query results.
func (s PipelineStats) Each(fn func(i int)) {
	for v := uint32(s & AllPipelineStats); v != 0; v &= v - 1 {
		fn(bits.TrailingZeros32(v))
	}
}

// String joins the keys of s with "+"; bits past the last statistic
// print as a hexadecimal remainder.
func (s PipelineStats) String() string {
	var b strings.Builder
	s.Each(func(i int) {
		if b.Len() > 0 {
			b.WriteByte('+')
		}
		b.WriteString(statKeys[i])
	})
	if rest := s &^ AllPipelineStats; rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('+')
		}
		fmt.Fprintf(&b, "%#x", uint32(rest))
	}
	return b.String()
}

// ParsePipelineStats reads a set written as String writes it (keys
// joined by "+"; "" is none), or "all"; "," joins keys too. It allocates
// nothing but an error, which quotes at most 64 bytes of a key it does
// not know.
func ParsePipelineStats(v string) (PipelineStats, error) {
	if v == "all" {
		return AllPipelineStats, nil
	}
	var s PipelineStats
	for v != "" {
		var k string
		if i := strings.IndexAny(v, "+,"); i >= 0 {
			k, v = v[:i], v[i+1:]
		} else {
			k, v = v, ""
		}
		i, ok := StatOf(strings.TrimSpace(k))
		if !ok {
			if len(k) > 64 {
				k = k[:64] + "..."
			}
			return 0, fmt.Errorf("timeline: %q is no pipeline statistic (want their keys joined by +, or all)", k)
		}
		s |= 1 << i
	}
	return s, nil
}

// Valid reports whether w is well formed: its reason one of WorkMissing's
// and no bits past the last statistic. Writers leave out, and count, a
// Work that is not.
func (w *Work) Valid() bool {
	return w.Missing < NumWorkMissing && w.Stats&^AllPipelineStats == 0
}

// Work is the GPU work a zone did: the pipeline statistics its queue
// counted between the zone's begin and end, nested zones included. A zone
// either has its counts (Missing is WorkCounted) or says why it has none:
// never a partial or approximate count.
type Work struct {
	// Stats are the statistics counted; Count[i] is statistic i's count
	// (i its bit position), 0 for those not in Stats.
	Stats PipelineStats
	Count [NumPipelineStats]uint64
	// Missing says why a zone of a context that counts statistics has no
	// counts; Stats is then what it would have counted, and Count is 0.
	Missing WorkMissing
}

// Value returns statistic i's count and whether w has it.
func (w *Work) Value(i int) (uint64, bool) {
	if w == nil || w.Missing != WorkCounted || !w.Stats.Has(i) {
		return 0, false
	}
	return w.Count[i], true
}

// Of returns the count of the one statistic stat holds
// (timeline.FragmentShaderInvocations, ...) and whether w has it.
func (w *Work) Of(stat PipelineStats) (uint64, bool) {
	if stat.Len() != 1 || stat&^AllPipelineStats != 0 {
		return 0, false
	}
	return w.Value(bits.TrailingZeros32(uint32(stat)))
}

// WorkMissing is why a zone has no counts.
type WorkMissing uint8

// The reasons, each a place where Vulkan's rules for queries allow no
// exact count (a pipeline statistics query is active once at a time in
// a command buffer, ends in the command buffer and on the side of a
// render pass instance it began on) or where the counts did not come.
const (
	WorkCounted WorkMissing = iota
	// WorkRenderPass: the zone began inside a render pass instance while
	// a zone around it, begun outside one, was counting.
	WorkRenderPass
	// WorkElsewhere: the zone ended in another command buffer than the
	// one it began in.
	WorkElsewhere
	// WorkSpent: the frame had spent its statistics queries, or too many
	// command buffers counted at once.
	WorkSpent
	// WorkFrames: the zone began in another frame than the zone around it
	// that was counting.
	WorkFrames
	// WorkUnavailable: a count it needed never came back from the GPU.
	WorkUnavailable
	// WorkMisnested: the zone ended after the zone around it whose count
	// it was part of (zones that count work nest).
	WorkMisnested
	// WorkFrameEnd: the zone, or the counting zone around it, was still
	// open when the frame's end was recorded into its command buffer,
	// which ended the count there (a query may not stay active past the
	// command buffer's end).
	WorkFrameEnd
	// WorkSecondaries: the zone, or the counting zone around it, was open
	// in a primary command buffer that then executed secondary ones,
	// which ended the count there (Vulkan lets a secondary run under an
	// active statistics query only where it inherits it), or began after
	// that in the same command buffer.
	WorkSecondaries
	// WorkQuery: the zone, or the counting zone around it, was open in a
	// command buffer when the application began a pipeline statistics
	// query of its own in it, which ended the count there (one may be
	// active at a time in a command buffer), or began in it while the
	// application's query was active.
	WorkQuery

	// NumWorkMissing is how many values WorkMissing has.
	NumWorkMissing
)

var missingKeys = [NumWorkMissing]string{
	"counted", "render_pass", "elsewhere", "spent", "frames", "unavailable", "misnested", "frame_end",
	"secondaries", "query",
}

// String is the reason's key in every trace format: "render_pass", ...
func (m WorkMissing) String() string {
	if m >= NumWorkMissing {
		return "unknown"
	}
	return missingKeys[m]
}

// WorkMissingOf returns the reason whose key is s.
func WorkMissingOf(s string) (WorkMissing, bool) {
	for i, k := range missingKeys {
		if k == s {
			return WorkMissing(i), true
		}
	}
	return 0, false
}
