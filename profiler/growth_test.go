package profiler_test

import (
	"testing"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Frames of 2,200 zones on a context that starts with 512 queries a
// frame, also right after the context is made again: with host query
// reset every zone arrives, the frame getting the queries it needs in the
// frame itself; without it the zones over the frame's queries are dropped
// and counted (Drops.Zones), and later frames get more.
func TestAppFrameOutgrowsItsPool(t *testing.T) {
	for _, hostReset := range []bool{true, false} {
		name := "host query reset"
		if !hostReset {
			name = "command reset"
		}
		t.Run(name, func(t *testing.T) {
			a := newApp(t, appConfig{vk: vk.Config{NoHostQueryReset: !hostReset}, gpu: profiler.GPUOptions{FramesInFlight: 2}})
			if a.q.Dev.HostQueryReset != hostReset {
				t.Skipf("hostQueryReset is %v on %s", a.q.Dev.HostQueryReset, a.q.Dev.Caps.Name)
			}
			big := func(cmd vkg.CommandBuffer) {
				for range 2200 {
					a.g.Zone(cmd, a.draw).End()
				}
				a.zones += 2200
			}
			for round := range 2 {
				for range 3 {
					a.frame(big)
				}
				if round == 0 {
					a.recreate(false)
				}
			}
			st := a.g.Stats()
			tr := a.finish()
			if hostReset {
				a.expect(tr, 0, timeline.Drops{})
				return
			}
			// Each context's first frame had 512 queries: 256 zones.
			lost := int(tr.Drops.QueryLimit)
			if lost != 2*(2200-256) || st.Grown == 0 {
				t.Errorf("%d zones dropped, want %d (each context's first frame over 256); stats %+v", lost, 2*(2200-256), st)
			}
			a.expect(tr, lost, timeline.Drops{QueryLimit: uint64(lost)})
		})
	}
}
