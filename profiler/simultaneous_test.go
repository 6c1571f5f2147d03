package profiler_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// One static command buffer with the simultaneous-use flag, made a
// recording and submitted in every frame with 1 to 8 frames in flight, so
// that it is pending more than once at a time: an earlier execution's copy
// of its results may land after a later execution was submitted. No zone
// the trace delivers lies outside the window of the submission it is
// given to (from before its vkQueueSubmit to the return of the wait for
// its fence, within the zone's error bound), every execution is delivered
// or counted, and the books balance.
func TestSimultaneousRecordingWindow(t *testing.T) {
	for _, fif := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprintf("%d in flight", fif), func(t *testing.T) {
			simultaneousWindow(t, fif, 1000)
		})
	}
}

func simultaneousWindow(t *testing.T, fif, frames int) {
	a := newApp(t, appConfig{gpu: profiler.GPUOptions{FramesInFlight: fif}, ring: fif})
	wait, name := a.p.Name("wait"), a.p.Name("static")
	static := a.q.Cmd()
	a.q.End(static)
	a.q.BeginWith(static, vkg.CommandBufferUsageSimultaneousUseBit)
	rec := a.g.Record(static)
	func() {
		defer a.g.Zone(static, name).End()
		a.g.Zone(static, name).End()
		a.g.Zone(static, name).End()
	}()
	rec.End()
	a.q.End(static)
	for f := range frames {
		slot := f % fif
		if a.inFlight[slot] {
			w := a.main.Span(wait)
			a.q.Wait(a.fences[slot])
			w.End()
			a.cpuSpans++
		}
		a.inFlight[slot] = false
		a.resubmit(slot, f%2 == 0, static)
	}
	tr := a.finish()
	st := a.g.Stats()
	delivered := checkWindows(t, tr, fif)
	t.Logf("%d frames, %d in flight: %d executions of 3 zones; %d delivered, %d overlapped, %d in its window",
		frames, fif, frames, st.Delivered, st.Drops.Overlapped, delivered)
	if !st.Balanced() || st.Open != 0 || len(books.Unbalanced(&tr.Ledger, tr.Drops)) > 0 {
		t.Errorf("books do not balance: %+v; trace %+v %+v", st, tr.Ledger, tr.Drops)
	}
	if lost := st.Drops.Total() - st.Drops.Overlapped; lost != 0 {
		t.Errorf("lost %d zones under causes other than overlapped: %+v", lost, st.Drops)
	}
}

// checkWindows checks that each GPU zone of the trace lies in its
// submission's window: the "submit" span of its frame begins it, and the
// "wait" span that waited for that frame's fence, fif frames later, ends
// it (none for the last fif frames: the device's idle wait). It returns
// the zones it checked.
func checkWindows(t *testing.T, tr *timeline.Trace, fif int) int {
	t.Helper()
	var submits, waits []timeline.Span
	for _, s := range tr.Spans {
		switch tr.Name(s.Name) {
		case "submit":
			submits = append(submits, s)
		case "wait":
			waits = append(waits, s)
		}
	}
	byStart := func(a, b timeline.Span) int { return int(a.Start - b.Start) }
	slices.SortFunc(submits, byStart)
	slices.SortFunc(waits, byStart)
	type window struct{ from, to int64 }
	windows := map[uint64]window{}
	for i, s := range submits {
		w := window{from: s.Start, to: 1<<63 - 1}
		if i < len(waits) {
			w.to = waits[i].End
		}
		windows[s.Frame] = w
	}
	n, bad := 0, 0
	for _, s := range tr.Spans {
		k := tr.Track(s.Track).Kind
		if k != timeline.TrackGPUQueue && k != timeline.TrackGPULane {
			continue
		}
		n++
		w, ok := windows[s.Frame]
		e := int64(s.ErrNs)
		if !ok || s.Start+e < w.from || s.End-e > w.to {
			if bad++; bad <= 5 {
				t.Errorf("zone %q of frame %d at [%d, %d] ±%d ns: outside its submission's window [%d, %d] (%d ns before it)",
					tr.Name(s.Name), s.Frame, s.Start, s.End, e, w.from, w.to, w.from-s.Start)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d zones of %d outside their window in all", bad, n)
	}
	return n - bad
}
