package profiler

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// A zone begun in one command buffer and ended (EndIn) in a later one of
// the same queue is one zone of its frame, around the work of both. With
// debug labels its label region is begun in the first and ended nowhere:
// a command buffer that ends a region it did not begin crashes lavapipe at
// its next label (the second command buffer here begins one after the
// end, as the render-loop checker's first seed did). Both in one
// submission, and in two; no validation message.
func TestZoneAcrossCommandBuffers(t *testing.T) {
	for _, labels := range []bool{false, true} {
		for _, separate := range []bool{false, true} {
			t.Run(fmt.Sprintf("labels=%v,separate=%v", labels, separate), func(t *testing.T) {
				r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, DebugLabels: labels})
				if labels && !r.g.labels {
					t.Fatal("debug labels asked for, but off")
				}
				span, inA, inB, after := r.p.Name("span"), r.p.Name("in a"), r.p.Name("in b"), r.p.Name("after")
				begun0, ended0 := r.q.Dev.LabelCounts()
				id := r.p.BeginFrame()
				a, b := r.q.Cmd(), r.q.Cmd()
				r.g.BeginFrame(a)
				if err := r.g.Err(); err != nil {
					t.Fatal(err)
				}
				z := r.g.Zone(a, span)
				r.g.Zone(a, inA).End()
				r.g.Zone(b, inB).End()
				z.EndIn(b)
				r.g.Zone(b, after).End() // a label after the cross end: crashed lavapipe
				if begun, ended := r.q.Dev.LabelCounts(); labels && (begun-begun0 != 4 || ended-ended0 != 3) {
					t.Errorf("%d label regions begun, %d ended; want 4 and 3", begun-begun0, ended-ended0)
				}
				r.g.submitted([]vkg.CommandBuffer{a, b})
				r.g.EndFrame(b)
				r.p.EndFrame()
				if separate {
					r.q.SubmitWait(a)
					r.q.SubmitWait(b)
				} else {
					r.q.SubmitWait(a, b)
				}
				zs, err := r.g.Drain(nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(zs) != 4 {
					t.Fatalf("%d zones, want 4; stats %+v", len(zs), r.g.Stats())
				}
				by := map[Name]ZoneResult{}
				for _, z := range zs {
					if z.Frame != id {
						t.Errorf("zone %q of frame %d, want %d", r.p.rec.NameOf(z.Name), z.Frame, id)
					}
					by[z.Name] = z
				}
				s, za, zb := by[span], by[inA], by[inB]
				if !(s.Begin <= za.Begin && za.Begin <= za.End && za.End <= zb.End && zb.Begin <= zb.End && zb.End <= s.End) {
					t.Errorf("ticks out of order: span [%d,%d], in a [%d,%d], in b [%d,%d]",
						s.Begin, s.End, za.Begin, za.End, zb.Begin, zb.End)
				}
				if st := r.g.Stats(); st.Drops.Misuse+st.Drops.Unended+st.Drops.Unsubmitted != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}
