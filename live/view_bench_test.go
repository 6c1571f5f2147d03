package live

import (
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// windowed is a live view whose window holds tr's spans, names and
// tracks, and their frames (a span of no frame goes to frame 1), settled:
// the profiler behind it is closed, so that no poll replaces the window.
func windowed(t testing.TB, tr *timeline.Trace) *handler {
	t.Helper()
	p := profiler.New(profiler.Options{})
	p.Close()
	hh, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := hh.(*handler)
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
// without (the cost zones that count nothing have, as before they could).
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
			h := windowed(b, &tr)
			w := h.w
			b.ReportAllocs()
			for b.Loop() {
				w.mu.Lock()
				w.win.views++
				w.mu.Unlock()
				w.viewJSON(0, 0, 0)
			}
		})
	}
}
