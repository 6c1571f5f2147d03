package profiler_test

import (
	"testing"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Zones recorded in secondary command buffers get the arrow of the
// submission of the primary that executes them when the application names
// the secondaries to Submitted with it; when it names the primary alone,
// their arrows are counted as lost (Drops.Flows), never
// silently missing. (The old profiler gave them key 0 and counted
// nothing.)
func TestAppSecondaries(t *testing.T) {
	for _, named := range []bool{true, false} {
		name := "primary alone named"
		if named {
			name = "secondaries named"
		}
		t.Run(name, func(t *testing.T) {
			a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
			secs := a.q.Secondaries(2 * len(a.cmds))
			inSecondaries := 0
			for range 10 {
				i := a.frames % len(a.cmds)
				mine := secs[2*i : 2*i+2]
				a.frameWith(frameOpts{submitted: func(cmd vkg.CommandBuffer) []vkg.CommandBuffer {
					if named {
						return append([]vkg.CommandBuffer{cmd}, mine...)
					}
					return []vkg.CommandBuffer{cmd}
				}}, func(cmd vkg.CommandBuffer) {
					a.work(cmd)
					for _, s := range mine {
						a.q.BeginSecondary(s)
						func() {
							defer a.g.Zone(s, a.pass).End()
							a.g.Zone(s, a.draw).End()
						}()
						a.zones += 2
						inSecondaries += 2
					}
					a.q.Execute(cmd, mine...)
				})
			}
			tr := a.finish()
			c := countTrace(tr)
			lost := 0
			if !named {
				lost = inSecondaries
			}
			if c.GPU != a.zones || c.Flows != a.zones-lost {
				t.Errorf("%d GPU slices and %d flows; %d zones recorded, %d of them in secondaries, %d arrows expected lost",
					c.GPU, c.Flows, a.zones, inSecondaries, lost)
			}
			if want := (timeline.Drops{Flows: uint64(lost)}); c.Drops != want {
				t.Errorf("drops %+v, want %+v", c.Drops, want)
			}
			if got := a.g.Stats().Drops.Flows; got != uint64(lost) {
				t.Errorf("Stats.Drops.Flows %d, want %d", got, lost)
			}
		})
	}
}

// An application that collects 100 frames late still gets the arrows of
// the frames it collects: the submissions of a frame are kept with its
// queries, not in a ring of the last 64 frames (whose overwritten entries
// once left such zones with no arrow, counted nowhere).
func TestAppLateCollectKeepsArrows(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	for range 100 {
		a.frameWith(frameOpts{tryBegin: true, noCollect: true}, a.work)
	}
	a.collect()
	refused := a.g.Stats().Drops.NoFrame
	tr := a.finish()
	c := countTrace(tr)
	if c.GPU == 0 || c.GPU+int(refused) != a.zones {
		t.Fatalf("%d zones arrived, %d refused; %d recorded", c.GPU, refused, a.zones)
	}
	if c.Flows != c.GPU || c.Drops.Flows != 0 {
		t.Errorf("%d flows for %d zones (drops.flows %d): every zone that arrived has its arrow", c.Flows, c.GPU, c.Drops.Flows)
	}
}
