package chrome

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// The args of a GPU zone's work besides one per statistic counted, named
// by its key (timeline.StatKey).
const (
	// argWorkMissing is why a zone has no counts: a timeline.WorkMissing
	// key other than "counted".
	argWorkMissing = timeline.KeyWorkMissing
	// argWorkStats are the statistics a zone without counts would have
	// counted, as timeline.PipelineStats.String joins them ("" for none);
	// on a counted zone only when it counted no statistic.
	argWorkStats = timeline.KeyWorkStats
)

// appendWork appends the args of wk (valid: timeline.Work.Valid) after sep, the first
// preceded by sep and each other by a comma: one arg per statistic
// counted, by its key, its count an integer literal (exact past 2^53);
// for a zone without counts, work_missing and work_stats; for a counted
// zone that counted no statistic, "work_stats":"".
func appendWork(dst []byte, sep byte, wk *timeline.Work) []byte {
	switch {
	case wk.Missing == timeline.WorkCounted && wk.Stats != 0:
		for v := uint32(wk.Stats); v != 0; v &= v - 1 {
			i := bits.TrailingZeros32(v)
			dst = append(dst, sep, '"')
			sep = ','
			dst = append(dst, timeline.StatKey(i)...)
			dst = append(dst, '"', ':')
			dst = strconv.AppendUint(dst, wk.Count[i], 10)
		}
	case wk.Missing == timeline.WorkCounted:
		dst = append(dst, sep)
		dst = append(dst, `"`+argWorkStats+`":""`...)
	default:
		dst = append(dst, sep)
		dst = append(dst, `"`+argWorkMissing+`":"`...)
		dst = append(dst, wk.Missing.String()...)
		dst = append(dst, `","`+argWorkStats+`":"`...)
		dst = append(dst, wk.Stats.String()...) // keys joined by '+': nothing to escape
		dst = append(dst, '"')
	}
	return dst
}

// sliceArgs is the args of a B or X event that the reader reads: the
// frame and error bound, and the work args, kept raw until checked. The
// reader reuses one.
type sliceArgs struct {
	Frame uint64 `json:"frame"`
	ErrNs uint32 `json:"err_ns"`
	// One field per statistic, in bit order: stat returns them by bit
	// position (TestSliceArgsKeys checks the keys against StatKey).
	InputAssemblyVertices                   rawArg `json:"input_assembly_vertices"`
	InputAssemblyPrimitives                 rawArg `json:"input_assembly_primitives"`
	VertexShaderInvocations                 rawArg `json:"vertex_shader_invocations"`
	GeometryShaderInvocations               rawArg `json:"geometry_shader_invocations"`
	GeometryShaderPrimitives                rawArg `json:"geometry_shader_primitives"`
	ClippingInvocations                     rawArg `json:"clipping_invocations"`
	ClippingPrimitives                      rawArg `json:"clipping_primitives"`
	FragmentShaderInvocations               rawArg `json:"fragment_shader_invocations"`
	TessellationControlShaderPatches        rawArg `json:"tessellation_control_shader_patches"`
	TessellationEvaluationShaderInvocations rawArg `json:"tessellation_evaluation_shader_invocations"`
	ComputeShaderInvocations                rawArg `json:"compute_shader_invocations"`
	WorkMissing                             rawArg `json:"work_missing"`
	WorkStats                               rawArg `json:"work_stats"`
}

// stats returns the fields of the statistics, by bit position.
func (a *sliceArgs) stats() [timeline.NumPipelineStats]*rawArg {
	return [...]*rawArg{
		&a.InputAssemblyVertices, &a.InputAssemblyPrimitives, &a.VertexShaderInvocations,
		&a.GeometryShaderInvocations, &a.GeometryShaderPrimitives, &a.ClippingInvocations,
		&a.ClippingPrimitives, &a.FragmentShaderInvocations, &a.TessellationControlShaderPatches,
		&a.TessellationEvaluationShaderInvocations, &a.ComputeShaderInvocations,
	}
}

// reset readies a for the next event, keeping the buffers of its raw
// args.
func (a *sliceArgs) reset() {
	a.Frame, a.ErrNs = 0, 0
	for _, r := range a.stats() {
		r.set = false
	}
	a.WorkMissing.set, a.WorkStats.set = false, false
}

// hasWork reports whether the event had any work arg.
func (a *sliceArgs) hasWork() bool {
	if a.WorkMissing.set || a.WorkStats.set {
		return true
	}
	for _, r := range a.stats() {
		if r.set {
			return true
		}
	}
	return false
}

// rawArg is an arg's JSON text, whatever its type, so that a wrong one
// fails with what is wrong, not the event's other args with it.
type rawArg struct {
	set bool
	raw []byte
}

func (r *rawArg) UnmarshalJSON(b []byte) error {
	r.set = true
	r.raw = append(r.raw[:0], b...)
	return nil
}

// count reads a count: a JSON integer literal from 0 to 2^64-1, read
// exactly (never through a float64).
func (r *rawArg) count() (uint64, bool) {
	b := r.raw
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// str reads a JSON string.
func (r *rawArg) str() (string, bool) {
	if len(r.raw) == 0 || r.raw[0] != '"' {
		return "", false
	}
	var s string
	err := json.Unmarshal(r.raw, &s)
	return s, err == nil
}

// quoted is r's text for an error message, cut short.
func (r *rawArg) quoted() string {
	const most = 64
	if len(r.raw) > most {
		return string(r.raw[:most]) + "..."
	}
	return string(r.raw)
}

// work returns the Work the args describe (see GPU work in the package
// doc), or an error saying what breaks the format: the JSON types here,
// the rules in timeline.WorkArgs, which every reader shares.
func (a *sliceArgs) work() (*timeline.Work, error) {
	var wa timeline.WorkArgs
	for i, r := range a.stats() {
		if !r.set {
			continue
		}
		v, ok := r.count()
		if !ok {
			return nil, timeline.NotACount(i, r.quoted())
		}
		wa.Counted |= 1 << i
		wa.Count[i] = v
	}
	if a.WorkStats.set {
		s, ok := a.WorkStats.str()
		if !ok {
			return nil, timeline.NotAStatsList(a.WorkStats.quoted())
		}
		var err error
		if wa.Stats, err = timeline.ParsePipelineStats(s); err != nil {
			return nil, fmt.Errorf("%q: %w", argWorkStats, err)
		}
		wa.HasStats = true
	}
	if a.WorkMissing.set {
		s, ok := a.WorkMissing.str()
		m, known := timeline.WorkMissingOf(s)
		if !ok || !known || m == timeline.WorkCounted {
			return nil, timeline.NotAReason(a.WorkMissing.quoted())
		}
		wa.Missing, wa.HasMissing = m, true
	}
	wk, err := wa.Work()
	if err != nil {
		return nil, err
	}
	return &wk, nil
}
