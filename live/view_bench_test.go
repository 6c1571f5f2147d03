package live

import (
	"slices"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// closedView is a live view of a closed profiler: no poll replaces its
// window.
func closedView(t testing.TB) *handler {
	t.Helper()
	p := profiler.New(profiler.Options{})
	p.Close()
	hh, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return hh.(*handler)
}

// windowed is a live view whose window holds tr's spans, names and
// tracks, and their frames (a span of no frame goes to frame 1), settled:
// the profiler behind it is closed, so that no poll replaces the window.
func windowed(t testing.TB, tr *timeline.Trace) *handler {
	t.Helper()
	h := closedView(t)
	wn := &h.w.win
	wn.names, wn.tracks = slices.Clone(tr.Names), slices.Clone(tr.Tracks)
	for i, s := range tr.Spans {
		s.Frame = max(s.Frame, 1)
		wn.spans = append(wn.spans, s)
		wn.seqs = append(wn.seqs, uint64(i+1))
		n := len(wn.frames)
		if n == 0 || wn.frames[n-1].ID < s.Frame {
			wn.frames = append(wn.frames, timeline.Frame{ID: s.Frame, Start: s.Start, End: s.End})
			n++
		}
		f := &wn.frames[n-1]
		f.Start, f.End = min(f.Start, s.Start), max(f.End, s.End)
	}
	wn.settled = wn.frames[len(wn.frames)-1].ID
	wn.open = wn.settled + 1
	return h
}

const msNs = int64(time.Millisecond)

// knownLimits is a trace of five frames of known limits, as
// timeline/limits' tests draw them, the layer's names on the thread
// (track 1), work on graphics (2) and compute (3), first frame first:
// CPU-bound (8 ms of work, then 1 ms of GPU), GPU-bound (9.5 ms of GPU
// waited for), presentation-bound (a present of 14.7 ms in 20 ms), CPU-
// bound again (7 ms of GPU, no wait), and a last one, whose interval no
// next frame closes.
func knownLimits(first uint64) *timeline.Trace {
	t := &timeline.Trace{Names: []string{""}, Tracks: []timeline.Track{
		{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
		{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics"},
		{ID: 3, Kind: timeline.TrackGPUQueue, Name: "compute"},
	}}
	frame := first
	span := func(track timeline.TrackID, name string, start, end int64) int {
		n := slices.Index(t.Names, name)
		if n < 0 {
			n = len(t.Names)
			t.Names = append(t.Names, name)
		}
		t.Spans = append(t.Spans, timeline.Span{Track: track, Name: timeline.NameID(n), Start: start, End: end, Frame: frame})
		return len(t.Spans) - 1
	}
	submit := func(at int64, queue timeline.TrackID, start, end int64) {
		s := span(1, "vkQueueSubmit", at, at+msNs/10)
		t.Flows = append(t.Flows, timeline.Flow{From: s, To: span(queue, "command buffer", start, end)})
	}
	next := func(start, end int64) {
		t.Frames = append(t.Frames, timeline.Frame{ID: frame, Start: start, End: end})
		frame++
	}
	span(1, "update", 0, 8*msNs)
	submit(8*msNs, 2, 82*msNs/10, 92*msNs/10)
	span(1, "vkWaitForFences", 81*msNs/10, 93*msNs/10)
	next(0, 10*msNs)
	submit(101*msNs/10, 2, 103*msNs/10, 198*msNs/10)
	span(1, "vkWaitForFences", 102*msNs/10, 199*msNs/10)
	next(10*msNs, 20*msNs)
	submit(22*msNs, 2, 222*msNs/10, 252*msNs/10)
	span(1, "vkQueuePresentKHR", 253*msNs/10, 40*msNs)
	next(20*msNs, 40*msNs)
	submit(405*msNs/10, 2, 41*msNs, 42*msNs)
	submit(406*msNs/10, 3, 43*msNs, 49*msNs)
	next(40*msNs, 50*msNs)
	span(1, "update", 50*msNs, 51*msNs)
	next(50*msNs, 51*msNs)
	return t
}

// framed is a live view whose window holds tr as it is, its frames and
// flows too, settled to frame settled: its profiler is closed, so that no
// poll replaces the window.
func framed(t testing.TB, tr *timeline.Trace, settled uint64) *handler {
	t.Helper()
	h := closedView(t)
	wn := &h.w.win
	wn.names, wn.tracks = slices.Clone(tr.Names), slices.Clone(tr.Tracks)
	wn.spans, wn.frames = slices.Clone(tr.Spans), slices.Clone(tr.Frames)
	for i := range tr.Spans {
		wn.seqs = append(wn.seqs, uint64(i+1))
	}
	for _, f := range tr.Flows {
		wn.flows = append(wn.flows, [2]uint64{uint64(f.From + 1), uint64(f.To + 1)})
	}
	wn.settled, wn.open = settled, tr.Frames[len(tr.Frames)-1].ID+1
	return h
}

// noWork is tr with no Work on any span.
func noWork(tr *timeline.Trace) *timeline.Trace {
	c := *tr
	c.Spans = slices.Clone(tr.Spans)
	for i := range c.Spans {
		c.Spans[i].Work = nil
	}
	return &c
}

// BenchmarkView makes the view a poll makes, and its JSON, of a window of
// 300 frames of tracecases.WorkTrace's zones: with their work, and
// without (the cost zones that count nothing have, as before they could);
// and of 300 frames of the layer's calls and their work (layerWindow).
func BenchmarkView(b *testing.B) {
	for _, c := range []struct {
		name string
		tr   *timeline.Trace
	}{{"work", tracecases.WorkTrace()}, {"no work", noWork(tracecases.WorkTrace())}} {
		b.Run(c.name, func(b *testing.B) {
			tr := *c.tr
			tr.Spans = nil
			for f := range 300 {
				for _, s := range c.tr.Spans {
					s.Start += int64(f) * 20_000
					s.End += int64(f) * 20_000
					s.Frame = uint64(f + 1)
					tr.Spans = append(tr.Spans, s)
				}
			}
			benchView(b, windowed(b, &tr))
		})
	}
	b.Run("layer", func(b *testing.B) { benchView(b, framed(b, layerWindow(300), 300)) })
}

// layerWindow is n frames of knownLimits' first four, one after another:
// the layer's calls on a thread, submissions with arrows to their work
// on two queues, waits and presents.
func layerWindow(n int) *timeline.Trace {
	one := knownLimits(1)
	t := &timeline.Trace{Names: one.Names, Tracks: one.Tracks}
	for k := range (n + 3) / 4 {
		at, from := int64(k)*50*msNs, len(t.Spans)
		for _, s := range one.Spans {
			if s.Frame <= 4 {
				s.Start, s.End, s.Frame = s.Start+at, s.End+at, s.Frame+uint64(4*k)
				t.Spans = append(t.Spans, s)
			}
		}
		for _, f := range one.Flows {
			t.Flows = append(t.Flows, timeline.Flow{From: f.From + from, To: f.To + from})
		}
		for _, f := range one.Frames[:4] {
			t.Frames = append(t.Frames, timeline.Frame{ID: f.ID + uint64(4*k), Start: f.Start + at, End: f.End + at})
		}
	}
	t.Frames = t.Frames[:n]
	return t
}

// benchView makes the view a poll makes, and its JSON, of h's window.
func benchView(b *testing.B, h *handler) {
	w := h.w
	b.ReportAllocs()
	for b.Loop() {
		w.mu.Lock()
		w.win.views++
		w.mu.Unlock()
		w.viewJSON(0, 0, 0)
	}
}
