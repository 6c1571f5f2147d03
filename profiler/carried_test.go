package profiler_test

import (
	"bytes"
	"testing"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// opener records into cmd a recording that begins a frame zone it leaves
// open (EndKeepingOpen), after a draw of its own: 1 zone and 1 carried.
func (a *app) opener(cmd vkg.CommandBuffer) {
	a.q.BeginWith(cmd, 0)
	rec := a.g.Record(cmd)
	a.g.Zone(cmd, a.draw).End()
	a.g.Zone(cmd, a.frameZone) // ended by a closer
	rec.EndKeepingOpen()
	a.q.End(cmd)
}

// closer records into cmd a recording that draws and then ends the zone
// carried on the queue (EndCarried): 1 zone.
func (a *app) closer(cmd vkg.CommandBuffer) {
	a.q.BeginWith(cmd, 0)
	rec := a.g.Record(cmd)
	a.g.Zone(cmd, a.draw).End()
	rec.EndCarried()
	rec.End()
	a.q.End(cmd)
}

// A zone begun in one command buffer and ended in a later one of the
// queue, as a debug label may be (engines label a frame so): each
// execution's is timed from its begin to its end, over the work between,
// and the trace reads back with it.
func TestZoneCarriedToALaterCommandBuffer(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	opens, closes := a.q.Cmds(2), a.q.Cmds(2)
	for i := range 2 {
		a.q.End(opens[i])
		a.opener(opens[i])
		a.q.End(closes[i])
		a.closer(closes[i])
	}
	const frames = 30
	for f := range frames {
		a.runFrame(f%2, 3, nil, opens[f%2], closes[f%2])
	}
	tr := a.finish()
	a.expect(tr, 0, timeline.Drops{})
	byFrame := map[uint64][]timeline.Span{}
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track); k != nil && (k.Kind == timeline.TrackGPUQueue || k.Kind == timeline.TrackGPULane) {
			byFrame[s.Frame] = append(byFrame[s.Frame], s)
		}
	}
	if len(byFrame) != frames {
		t.Fatalf("GPU zones in %d frames, want %d", len(byFrame), frames)
	}
	for _, format := range []string{"perfetto", "chrome"} {
		if n := acrossZones(t, tr, format); n != frames {
			t.Errorf("%s: %d zones on lanes marked across command buffers, want %d", format, n, frames)
		}
	}
	for f, spans := range byFrame {
		var carried []timeline.Span
		var draws []timeline.Span
		for _, s := range spans {
			switch tr.Name(s.Name) {
			case "frame":
				carried = append(carried, s)
			case "draw":
				draws = append(draws, s)
			}
		}
		if len(carried) != 1 || len(draws) != 2 {
			t.Errorf("frame %d: %d carried zones and %d draws, want 1 and 2", f, len(carried), len(draws))
			continue
		}
		c, second := carried[0], draws[1]
		if draws[0].Start > second.Start {
			second = draws[0]
		}
		// Its begin follows the first draw, its end the second's: within
		// the clock's error bound.
		slack := int64(c.ErrNs) + int64(second.ErrNs)
		if c.End+slack < second.End || c.Start > second.Start+slack {
			t.Errorf("frame %d: the carried zone [%d, %d] does not cover the later command buffer's draw [%d, %d]", f, c.Start, c.End, second.Start, second.End)
		}
	}
}

// What ends which is the queue's order, over frames: two executions of
// the opener before two closers are ended innermost first; a closer with
// nothing carried ends nothing; carried zones nothing ends are Unended,
// the oldest as soon as 64 newer ones are carried.
func TestZonesCarriedInSubmissionOrder(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	open, closeCmd := a.q.Cmd(), a.q.Cmd()
	a.q.End(open)
	a.opener(open)
	a.q.End(closeCmd)
	a.closer(closeCmd)
	slot := 0
	run := func(zones int, cmd vkg.CommandBuffer) {
		a.runFrame(slot, zones, nil, cmd)
		a.q.Wait(a.fences[slot]) // one command buffer of each kind: each runs once at a time
		a.inFlight[slot] = false
		slot = 1 - slot
	}
	run(1, closeCmd) // nothing carried: its draw alone
	run(2, open)     // its draw, and a carried zone the second closer ends
	run(2, open)     // its draw, and a carried zone the first closer ends
	run(1, closeCmd)
	run(1, closeCmd)
	run(1, closeCmd) // nothing carried
	// 70 more carried, none ended: 6 pushed off the stack, 64 left.
	for range 70 {
		run(1, open)
	}
	a.zones += 70 // carried, never ended
	tr := a.finish()
	// The first carried zone ends three frames after its submission's,
	// which has settled by then (two frames in flight): its arrow is
	// counted lost, as one whose submission's span was let go.
	c := countTrace(tr)
	want := timeline.Drops{Unended: 70, Flows: 1}
	if c.GPU != a.zones-70 || c.Flows != c.GPU-1 || c.Drops != want {
		t.Errorf("the trace has %d GPU zones, %d arrows, drops %+v; want %d, %d, %+v", c.GPU, c.Flows, c.Drops, a.zones-70, a.zones-71, want)
	}
	checkBooks(t, tr, a.g.Stats())
	var carried int
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track); k != nil && k.Kind == timeline.TrackGPULane && tr.Name(s.Name) == "frame" {
			carried++
		}
	}
	if carried != 2 {
		t.Errorf("%d carried zones in the trace, want 2", carried)
	}
}

// acrossZones writes tr in format, reads it back, and counts the zones on
// lanes marked as holding zones across command buffers.
func acrossZones(t *testing.T, tr *timeline.Trace, format string) int {
	t.Helper()
	var buf bytes.Buffer
	var back *timeline.Trace
	var err error
	if format == "perfetto" {
		if err = perfetto.Write(&buf, tr); err == nil {
			back, err = perfetto.Read(&buf)
		}
	} else if err = chrome.Write(&buf, tr); err == nil {
		back, err = chrome.Read(&buf)
	}
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	n := 0
	for _, s := range back.Spans {
		if k := back.Track(s.Track); k != nil && k.Kind == timeline.TrackGPULane && k.Across {
			n++
			if back.Name(s.Name) != "frame" {
				t.Errorf("%s: a zone %q across command buffers", format, back.Name(s.Name))
			}
		}
	}
	return n
}

// A recording that leaves a zone open and never runs has its carried zone
// counted with its others (unsubmitted); one reset while recorded
// (Freed) loses its zones (abandoned), and its end of a carried zone is
// no zone of its own.
func TestZonesCarriedLostWithTheirRecording(t *testing.T) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: 2}})
	never, reset := a.q.Cmd(), a.q.Cmd()
	a.q.End(never)
	a.opener(never) // its draw and its carried zone: never run
	a.q.End(reset)
	a.q.BeginWith(reset, 0)
	rec := a.g.Record(reset)
	a.g.Zone(reset, a.draw).End()
	rec.EndCarried()
	a.g.Freed(reset) // then freed while recorded: its draw can never run
	tr := a.finish()
	c := countTrace(tr)
	want := timeline.Drops{Unsubmitted: 2, Abandoned: 1}
	if c.GPU != 0 || c.Drops != want {
		t.Errorf("the trace has %d GPU zones, drops %+v; want 0, %+v", c.GPU, c.Drops, want)
	}
	checkBooks(t, tr, a.g.Stats())
}
