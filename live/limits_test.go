package live

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// viewFrame is the view with frame selected.
func viewFrame(t *testing.T, base string, frame uint64) view {
	t.Helper()
	code, b := get(t, base+"json?frame="+itoa(frame))
	var v view
	if err := json.Unmarshal(b, &v); code != 200 || err != nil {
		t.Fatalf("json?frame=%d: %d %v %s", frame, code, err, b)
	}
	return v
}

type wantFrame struct {
	limit    string
	gpu, cpu float64
}

func checkFrames(t *testing.T, v view, want []wantFrame) {
	t.Helper()
	if len(v.Frames) != len(want) {
		t.Fatalf("%d frames, want %d: %+v", len(v.Frames), len(want), v.Frames)
	}
	for i, w := range want {
		f := v.Frames[i]
		if f.Limit != w.limit || math.Abs(f.GPUBusy-w.gpu) > 1e-4 || math.Abs(f.CPUBusy-w.cpu) > 1e-4 {
			t.Errorf("frame %d: limit %q, GPU busy %g, CPU busy %g; want %q, %g, %g", f.ID, f.Limit, f.GPUBusy, f.CPUBusy, w.limit, w.gpu, w.cpu)
		}
	}
}

func checkShares(t *testing.T, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("limited_by %v, want %v", got, want)
	}
	for k, s := range want {
		if math.Abs(got[k]-s) > 1e-4 {
			t.Errorf("limited_by[%s] = %g, want %g", k, got[k], s)
		}
	}
}

// The view's JSON gives each frame of a window of known frames its
// verdict and busy shares as timeline/limits has them, the newest
// "pending" (no next frame closes it); the window the share of each
// verdict; the selected frame its GPU idle gaps with their causes.
func TestViewLimits(t *testing.T) {
	base := serve(t, framed(t, knownLimits(1), 5))
	v, _ := viewOf(t, base)
	checkFrames(t, v, []wantFrame{
		{"cpu", 0.1, 0.88},
		{"gpu", 0.95, 0.03},
		{"present", 0.15, 0.265},
		{"cpu", 0.7, 1},
		{"pending", -1, -1},
	})
	checkShares(t, v.LimitedBy, map[string]float64{"cpu": 0.5, "gpu": 0.25, "present": 0.25})

	v = viewFrame(t, base, 3)
	if v.Selected != 3 || v.SelectedMs != 20 {
		t.Fatalf("selected %d over %g ms, want 3 over 20 ms", v.Selected, v.SelectedMs)
	}
	want := []gapView{{0, 2.2, "waiting for submit"}, {5.2, 14.8, "waiting on present"}}
	if len(v.Gaps) != len(want) {
		t.Fatalf("gaps %+v, want %+v", v.Gaps, want)
	}
	for i, g := range v.Gaps {
		w := want[i]
		if math.Abs(g.StartMs-w.StartMs) > 1e-9 || math.Abs(g.DurMs-w.DurMs) > 1e-9 || g.Cause != w.Cause {
			t.Errorf("gap %d: %+v, want %+v", i, g, w)
		}
	}
	v = viewFrame(t, base, 4)
	if len(v.Gaps) != 3 || v.Gaps[1].Cause != "waiting for a dependency" {
		t.Errorf("frame 4's gaps %+v, want the second waiting for a dependency", v.Gaps)
	}
	v = viewFrame(t, base, 5)
	if v.Gaps != nil || v.SelectedMs != 0 {
		t.Errorf("the pending frame has gaps %+v over %g ms", v.Gaps, v.SelectedMs)
	}
}

// Frames newer than the settled one are pending, and their share is not
// counted; the oldest frame of a window that began after the recorder's
// first frame has no verdict (the work of the frame before it is gone).
func TestViewLimitsPartial(t *testing.T) {
	v, _ := viewOf(t, serve(t, framed(t, knownLimits(1), 3)))
	checkFrames(t, v, []wantFrame{{"cpu", 0.1, 0.88}, {"gpu", 0.95, 0.03}, {"present", 0.15, 0.265}, {"pending", -1, -1}, {"pending", -1, -1}})
	checkShares(t, v.LimitedBy, map[string]float64{"cpu": 1.0 / 3, "gpu": 1.0 / 3, "present": 1.0 / 3})

	v, _ = viewOf(t, serve(t, framed(t, knownLimits(7), 11)))
	checkFrames(t, v, []wantFrame{{"", -1, -1}, {"gpu", 0.95, 0.03}, {"present", 0.15, 0.265}, {"cpu", 0.7, 1}, {"pending", -1, -1}})
	checkShares(t, v.LimitedBy, map[string]float64{"cpu": 1.0 / 3, "gpu": 1.0 / 3, "present": 1.0 / 3})
}

// Verdicts go from the recorder through the poller's window to the view:
// frames of an application that alternately works 6 ms on the CPU, and
// waits on a fence for 8 ms of GPU work, read CPU-bound and GPU-bound in
// turn, with busy shares that say so.
func TestViewLimitsRecorded(t *testing.T) {
	p := profiler.New(profiler.Options{})
	t.Cleanup(func() { p.Close() })
	rec, _ := reach.Profiler(p)
	q := rec.QueueTrack(timeline.Queue{Device: "sim", Flags: "graphics"})
	src := rec.GPUSource(q)
	cpu := rec.CPUTrack("render loop")
	update, submit, wait := p.Name("update"), p.Name("vkQueueSubmit"), p.Name("vkWaitForFences")
	draw := p.Name("draw")
	const n = 20
	for k := range n {
		f := p.BeginFrame()
		if k%2 == 0 {
			s := cpu.Span(update)
			time.Sleep(6 * time.Millisecond)
			s.End()
		}
		s := cpu.Span(submit)
		s.Submitted(uint64(k + 1))
		s.End()
		t0, dur := timeline.Now(), msNs/2
		if k%2 == 1 {
			dur = 8 * msNs
			ws := cpu.Span(wait)
			time.Sleep(time.Duration(dur) + time.Millisecond)
			ws.End()
		}
		p.EndFrame()
		rec.AddGPUSpans(q, []record.GPUSpan{{Name: draw, Start: t0, End: t0 + dur, Frame: f, Key: uint64(k + 1)}})
		src.Settle(f)
	}
	v := waitView(t, serve(t, Handler(p)))
	if len(v.Frames) != n {
		t.Fatalf("%d frames, want %d", len(v.Frames), n)
	}
	for k, f := range v.Frames {
		want := []string{"cpu", "gpu"}[k%2]
		if k == n-1 {
			want = pending
		}
		if f.Limit != want {
			t.Errorf("frame %d: %s, want %s (GPU busy %g, CPU busy %g)", f.ID, f.Limit, want, f.GPUBusy, f.CPUBusy)
		}
		if k < n-1 && (f.GPUBusy < 0 || f.GPUBusy > 1 || f.CPUBusy < 0 || f.CPUBusy > 1 || (f.GPUBusy > f.CPUBusy) != (k%2 == 1)) {
			t.Errorf("frame %d (%s): GPU busy %g, CPU busy %g", f.ID, f.Limit, f.GPUBusy, f.CPUBusy)
		}
	}
	checkShares(t, v.LimitedBy, map[string]float64{"cpu": 10.0 / 19, "gpu": 9.0 / 19})
}

// TestPageShowsLimits renders the page in headless Chromium on the window
// of known frames: the legend names every verdict, the readout the
// window's shares (the largest first) and the selected frame's verdict
// and busy shares, and the frame's GPU timeline its idle gaps by cause.
func TestPageShowsLimits(t *testing.T) {
	dom := pageDOM(t)
	d := dom(serve(t, framed(t, knownLimits(1), 5)))
	if !strings.Contains(d, `<span id="selected">3</span>`) {
		t.Fatalf("the page selected no frame 3 (the slowest):\n%s", d)
	}
	for _, want := range []string{
		`<span style="background:#8e5bd0"></span>presentation-bound<span style="background:#aaa"></span>unknown`,
		`<b>Limited by: </b>CPU-bound 50%, GPU-bound 25%, presentation-bound 25%`,
		`frame 3: presentation-bound, GPU busy 15%, CPU busy 27% (CPU 20.0 ms, GPU 3.000 ms)`,
		`<div>presentation-bound · GPU busy 15% · CPU busy 27%</div>`,
		`title="waiting for submit: 2.200 ms idle @0.000"`,
		`title="waiting on present: 14.8 ms idle @5.200"`,
		`GPU idle 2 gaps of 20.0 ms<span class="sw" style="background:#a9c8f3"></span>waiting for submit 2.200 ms`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the page lacks %q:\n%s", want, d)
		}
	}
}

// Verdicts are judged as frames close, over a few polls, and come out as
// limits.Of has them over the whole window: each poll judges the frames
// settled since the last but the newest, whose interval no next frame
// closes yet.
func TestViewLimitsAsFramesClose(t *testing.T) {
	full := layerWindow(40)
	whole := verdictsOf(full)
	h := framed(t, full, 0)
	w := h.w
	var v view
	for _, c := range []struct{ frames, settled, next int }{{6, 3, 4}, {13, 13, 13}, {27, 20, 21}, {40, 40, 40}} {
		w.mu.Lock()
		w.win.frames, w.win.settled = slices.Clone(full.Frames[:c.frames]), uint64(c.settled)
		w.mu.Unlock()
		v = freshView(t, w)
		if next := w.win.verdicts.next; next != uint64(c.next) {
			t.Errorf("%d frames, settled %d: judged up to %d, want %d", c.frames, c.settled, next, c.next)
		}
	}
	for _, f := range v.Frames {
		want, ok := whole[f.ID]
		switch {
		case f.ID == 40:
			if f.Limit != pending {
				t.Errorf("the newest frame: %q, want pending", f.Limit)
			}
		case !ok || f.Limit != want.Limit.String() || f.GPUBusy != share(want.GPUBusy, want.Dur()) || f.CPUBusy != share(want.CPUBusy, want.Dur()):
			t.Errorf("frame %d: %s, GPU busy %g, CPU busy %g; the whole window's: %v %+v", f.ID, f.Limit, f.GPUBusy, f.CPUBusy, ok, want)
		}
	}
}

// A view made after the window moved past the frames judged last judges
// the frames it holds but its oldest, whose predecessor is gone.
func TestViewLimitsBehind(t *testing.T) {
	full := layerWindow(40)
	h := framed(t, full, 0)
	w := h.w
	var v view
	for _, c := range []struct{ from, to, settled int }{{0, 13, 13}, {25, 40, 40}} {
		w.mu.Lock()
		w.win.frames, w.win.settled = slices.Clone(full.Frames[c.from:c.to]), uint64(c.settled)
		w.mu.Unlock()
		v = freshView(t, w)
	}
	for _, f := range v.Frames {
		want := []string{"cpu", "gpu", "present", "cpu"}[(f.ID-1)%4]
		switch f.ID {
		case 26:
			want = ""
		case 40:
			want = pending
		}
		if f.Limit != want {
			t.Errorf("frame %d: %q, want %q", f.ID, f.Limit, want)
		}
	}
	if len(w.win.verdicts.by) != 13 {
		t.Errorf("%d verdicts kept, want the 13 of frames 27 to 39", len(w.win.verdicts.by))
	}
}

// BenchmarkJudge reads what limits the frames of a window of 300 of
// layerWindow's: all of them, as the first view of a window does, and
// the last 15, as a view a quarter second later does at 60 frames a
// second.
func BenchmarkJudge(b *testing.B) {
	w := framed(b, layerWindow(300), 300).w
	for _, n := range []uint64{300, 15} {
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := &w.win.verdicts
				if n == 300 || v.by == nil {
					*v = verdicts{}
				} else {
					v.next = 300 - n
					maps.DeleteFunc(v.by, func(id uint64, _ *limits.Frame) bool { return id >= v.next })
				}
				w.judge()
			}
		})
	}
}

// A span that reaches the window after its frame was judged (the layer
// hands its CPU spans over in batches) has that frame judged again: frame
// 6, GPU-bound, reads CPU-bound while its thread's wait is missing, and
// GPU-bound once the wait arrives.
func TestViewLimitsLateSpan(t *testing.T) {
	full := layerWindow(12)
	whole := verdictsOf(full)
	h := framed(t, full, 12)
	w := h.w
	f6 := full.Frames[5]
	late := slices.IndexFunc(w.win.spans, func(s timeline.Span) bool {
		return full.Name(s.Name) == "vkWaitForFences" && s.Start >= f6.Start && s.Start < f6.End
	})
	if late < 0 || whole[6].Limit != limits.GPU {
		t.Fatalf("frame 6: wait %d, %v; the window is not as this test expects", late, whole[6].Limit)
	}
	span, seq := w.win.spans[late], w.win.seqs[late]
	w.win.spans, w.win.seqs = slices.Delete(w.win.spans, late, late+1), slices.Delete(w.win.seqs, late, late+1)
	limitOf := func() string {
		for _, f := range freshView(t, w).Frames {
			if f.ID == 6 {
				return f.Limit
			}
		}
		return "none"
	}
	if got := limitOf(); got != "cpu" {
		t.Errorf("frame 6 without its wait: %q, want cpu", got)
	}
	w.mu.Lock()
	w.win.spans, w.win.seqs = append(w.win.spans, span), append(w.win.seqs, seq)
	w.win.verdicts.merged([]timeline.Span{span})
	w.mu.Unlock()
	if got := limitOf(); got != "gpu" {
		t.Errorf("frame 6 once its wait arrived: %q, want gpu", got)
	}
}

// freshView is the view of w's window as a view change makes it.
func freshView(t *testing.T, w *watcher) view {
	t.Helper()
	w.mu.Lock()
	w.win.views++
	w.mu.Unlock()
	var v view
	if err := json.Unmarshal(w.viewJSON(0, 0, 0), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The page selects the slowest settled frame that has a verdict: the
// oldest of a window that began after the run's first frame has none, and
// is often the slowest (a run's first frames are).
func TestViewSelectsJudgedFrame(t *testing.T) {
	tr := knownLimits(7)
	tr.Frames[0].Start -= 100 * msNs // the oldest, unjudged, the slowest by far
	v, _ := viewOf(t, serve(t, framed(t, tr, 11)))
	if v.Frames[0].Limit != "" {
		t.Fatalf("the oldest frame reads %q: the test needs it unjudged", v.Frames[0].Limit)
	}
	if v.Selected == v.Frames[0].ID {
		t.Fatalf("selected the oldest frame, %d, which has no verdict", v.Selected)
	}
	for _, f := range v.Frames {
		if f.ID == v.Selected && (f.Limit == "" || f.Limit == "pending") {
			t.Fatalf("selected frame %d, whose verdict is %q", f.ID, f.Limit)
		}
	}
}

// verdictsOf is what limits.Of says of each of tr's frames, by ID.
func verdictsOf(tr *timeline.Trace) map[uint64]limits.Frame {
	whole := map[uint64]limits.Frame{}
	for _, f := range limits.Of(tr).Frames {
		whole[f.ID] = f
	}
	return whole
}
