package profiler

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Zone(...).End() allocates nothing, debug labels or not: two
// vkCmdWriteTimestamp (and two label commands) into a real command buffer,
// and every zone recorded comes back.
func TestZoneEndAllocatesNothing(t *testing.T) {
	for _, labels := range []bool{false, true} {
		t.Run(fmt.Sprintf("labels=%v", labels), func(t *testing.T) {
			const runs = 500
			r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, DebugLabels: labels,
				QueriesPerFrame: 2 * (runs + 1), MaxQueriesPerFrame: 2 * (runs + 1)})
			name := r.p.Name("z")
			var allocs float64
			zs := r.frame(func(cmd vkg.CommandBuffer) {
				allocs = testing.AllocsPerRun(runs, func() { r.g.Zone(cmd, name).End() })
			})
			if allocs != 0 {
				t.Errorf("Zone(...).End(): %v allocations, want 0", allocs)
			}
			if len(zs) != runs+1 {
				t.Errorf("%d zones back, want %d; stats %+v", len(zs), runs+1, r.g.Stats())
			}
		})
	}
}
