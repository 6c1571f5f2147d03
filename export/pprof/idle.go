package pprof

import (
	"math"

	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// The GPU's idle time: the root of its stacks, and the label that tells
// its samples from those of work.
const (
	idleName  = "GPU idle"
	kindLabel = "kind"
	idleKind  = "idle"
)

// idle adds the GPU's idle time in t's analysed frames (package
// timeline/limits): each gap's time, in gpu_time, to the sample of the
// stack [cause, "GPU idle"] of its frame, labelled kind=idle. A trace
// without analysed frames gets none.
func (b *builder) idle(t *timeline.Trace) {
	r := limits.Of(t)
	root := int32(-1)
	var labels map[string][]string
	for _, f := range r.Frames {
		for _, g := range f.Gaps {
			if g.End <= g.Start {
				continue
			}
			if root < 0 {
				root = b.node(-1, b.locOf(funcKey{name: idleName, gpu: true, idle: true}))
				labels = map[string][]string{kindLabel: {idleKind}}
			}
			nd := b.node(root, b.locOf(funcKey{name: g.Cause.String(), gpu: true, idle: true}))
			v := &b.sample(nd, 0, f.ID, root, labels).Value[0]
			// Frames of one ID, or past sampleLimit all of them, share a
			// sample: overlapping ones of a hostile trace could pass int64.
			*v += min(g.End-g.Start, math.MaxInt64-*v)
		}
	}
}
