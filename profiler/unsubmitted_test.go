package profiler

import (
	"testing"

	"github.com/framescope/framescope/internal/vk"
)

// Zones recorded into a command buffer that is never submitted are counted
// as unwritten once the application has waited for their frame,
// FramesInFlight frames later (not StaleFrames later), and reach the
// trace's drops; the frame's other zones come back; no validation message.
func TestUnsubmittedZonesCountedUnwritten(t *testing.T) {
	for _, copies := range []bool{true, false} {
		name := "copy"
		if !copies {
			name = "driver"
		}
		t.Run(name, func(t *testing.T) {
			const inFlight = 2
			r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: inFlight})
			kept, lost := r.p.Name("kept"), r.p.Name("lost")
			var got []ZoneResult
			frame := func(f int) {
				t.Helper()
				r.p.BeginFrame()
				cmd := r.q.Cmd()
				r.g.BeginFrame(cmd)
				if err := r.g.Err(); err != nil {
					t.Fatal(err)
				}
				r.g.Zone(cmd, kept).End()
				if f == 1 {
					never := r.q.Cmd() // recorded, never submitted
					for i := 0; i < 3; i++ {
						r.g.Zone(never, lost).End()
					}
					defer r.q.Free(never)
				}
				if copies {
					r.g.EndFrame(cmd)
				} else {
					r.g.EndFrame(nil) // read through vkGetQueryPoolResults
				}
				r.p.EndFrame()
				r.q.SubmitWait(cmd)
				r.q.Free(cmd)
				var err error
				if got, err = r.g.Collect(got), r.g.Err(); err != nil {
					t.Fatal(err)
				}
			}
			frame(1)
			for f := 2; f <= inFlight; f++ {
				frame(f)
			}
			if st := r.g.Stats(); st.Drops.Unsubmitted != 0 {
				t.Fatalf("unwritten counted before the application waited for the frame: %+v", st)
			}
			frame(1 + inFlight)
			// The driver reads on the pool's goroutine, which Collect only
			// wakes: Drain reads now. (A copy in the command buffer of the
			// frame's other zones cannot tell the unsubmitted ones from
			// ones that landed after it ran: the driver says.)
			var err error
			if got, err = r.g.Drain(got); err != nil {
				t.Fatal(err)
			}
			st := r.g.Stats()
			if st.Drops.Unsubmitted != 3 || st.Drops.Unended+st.Drops.Misuse != 0 {
				t.Errorf("stats %+v: want Unsubmitted 3, nothing else lost", st)
			}
			n := 0
			for _, z := range got {
				if z.Frame == 1 {
					n++
					if z.Name != kept {
						t.Errorf("frame 1 gave back zone %q", r.p.rec.NameOf(z.Name))
					}
				}
			}
			if n != 1 {
				t.Errorf("frame 1: %d zones back, want the 1 submitted", n)
			}
			r.g.Collect(nil)
			if d := r.p.Dump().Drops; d.Unsubmitted != 3 || d.Total() != 3 {
				t.Errorf("trace drops %+v: want Unwritten 3 and nothing else", d)
			}
		})
	}
}
