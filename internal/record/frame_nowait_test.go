package record

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
)

// With FramesNoWait the recorder makes the timeline the waiting calls
// make: a seeded script of frame boundaries (misused too), CPU spans, a
// source's hands and settles, run on a recorder of each kind, gives the
// same frame IDs and answers, the same frames, spans, books and budget
// counts. A failing seed names itself: replay it with -run and the seed.
func TestFramesNoWaitSameTimeline(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			a, b := framesScript(t, seed, false), framesScript(t, seed, true)
			if a != b {
				t.Fatalf("seed %d: waiting calls made\n%s\nFramesNoWait made\n%s", seed, a, b)
			}
		})
	}
}

// framesScript runs seed's script on a recorder and describes what it
// made, times aside (the calls take theirs from the clock). Now and then
// the script holds the recorder's lock while the program runs ahead (a
// Flush building its batch): with FramesNoWait the boundaries wait in the
// inbox meanwhile, and the submissions of the frames begun there must
// still find their zones.
func framesScript(t *testing.T, seed uint64, noWait bool) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var over atomic.Int64
	r, q, zone := gpuSetup(Options{FramesNoWait: noWait, SettleFrames: 2, CPUBudget: time.Nanosecond,
		OnBudget: func(OverBudget) { over.Add(1) }})
	src := r.GPUSource(q)
	cpu := r.CPUTrack("main")
	work, submit := r.Name("work"), r.Name("vkQueueSubmit")
	var answers []string
	var subs []pendingSub // submissions whose zones are still to come
	var nextKey uint64
	gpuAt := int64(1e9)
	deliver := func() {
		var spans []GPUSpan
		for len(subs) > 0 && rng.IntN(3) > 0 {
			s := subs[0]
			subs = subs[1:]
			spans = append(spans, GPUSpan{Name: zone, Start: gpuAt, End: gpuAt + 500, Frame: s.frame, Key: s.key})
			gpuAt += 1000
		}
		if err := src.Deliver(spans, SourceReport{Issued: uint64(len(spans))}); err != nil {
			answers = append(answers, err.Error())
		}
	}
	// step runs one step; limited, one that needs no lock with
	// FramesNoWait (no Dump, no second Deliver while one waits).
	var step func(limited bool)
	step = func(limited bool) {
		switch k := rng.IntN(12); {
		case k < 2:
			answers = append(answers, fmt.Sprint("b", r.BeginFrame()))
		case k < 4:
			answers = append(answers, fmt.Sprint("e", r.EndFrame() > 0))
		case k < 5:
			cpu.Span(work).End()
		case k < 7:
			s := cpu.Span(submit)
			if f := r.Frame(); f != 0 {
				nextKey++
				s.Submitted(nextKey)
				subs = append(subs, pendingSub{nextKey, f})
			}
			s.End()
		case k < 9:
			if !limited {
				deliver()
			}
		case k < 10:
			if !limited {
				src.Settle(settleCapOf(subs, r))
			}
		default:
			if limited {
				return
			}
			n := rng.IntN(24)
			if noWait {
				r.mu.Lock()
			}
			for range n {
				step(true)
			}
			if noWait {
				r.mu.Unlock()
			}
		}
	}
	for range 400 {
		step(false)
	}
	if r.Frame() != 0 {
		r.EndFrame()
	}
	for len(subs) > 0 {
		deliver()
	}
	tr := r.Dump()
	src.Close()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var frames []uint64
	for _, f := range tr.Frames {
		frames = append(frames, f.ID)
	}
	var spans []string
	for _, s := range tr.Spans {
		spans = append(spans, fmt.Sprintf("%s/%s f%d d%d", tr.Track(s.Track).Name, tr.Name(s.Name), s.Frame, s.Depth))
	}
	slices.Sort(spans)
	st := r.Stats()
	return fmt.Sprintf("answers %v\nframes %v\nspans %v\nflows %d\ndrops %+v\nover budget %d, OnBudget called: %v",
		answers, frames, spans, len(tr.Flows), st.Drops, st.OverBudget, over.Load() > 0)
}

// pendingSub is a submission of the script whose zones are still to come.
type pendingSub struct{ key, frame uint64 }

// settleCapOf is the frame a source may settle: the one before the
// oldest frame whose zones are still to come, and none the program may
// still begin.
func settleCapOf(subs []pendingSub, r *Recorder) uint64 {
	f := r.LastFrame()
	if r.Frame() != 0 {
		f--
	}
	for _, s := range subs {
		f = min(f, s.frame-1)
	}
	return f
}

// With FramesNoWait, BeginFrame and EndFrame return while another
// goroutine holds the recorder's lock (a Flush building its batch, the
// merge placing spans), and the frames they left are on the timeline
// once it is released. Waiting calls would wait here until the test's
// deadline.
func TestFramesNoWaitWhileLocked(t *testing.T) {
	// The frames and CPU spans streamed: once the lock is released, the
	// merge's goroutine (waiting for it longest) may apply the marks and
	// flush before the test's Dump, which then holds the rest.
	var batches atomic.Int64
	var streamedMu sync.Mutex
	var streamed []*timeline.Trace
	sink := timeline.SinkFunc(func(tr *timeline.Trace) error {
		batches.Add(1)
		streamedMu.Lock()
		streamed = append(streamed, tr)
		streamedMu.Unlock()
		return nil
	})
	r := NewRecorder(Options{FramesNoWait: true, Sink: sink, FlushEvery: 10})
	cpu := r.CPUTrack("main")
	work := r.Name("work")
	r.mu.Lock() // what a Flush building its batch holds
	done := make(chan []int64)
	go func() {
		var ds []int64
		for range 100 {
			r.BeginFrame()
			cpu.Span(work).End()
			ds = append(ds, r.EndFrame())
		}
		done <- ds
	}()
	var ds []int64
	select {
	case ds = <-done:
	case <-time.After(time.Minute):
		t.Fatal("BeginFrame and EndFrame waited for the recorder's lock")
	}
	if batches.Load() != 0 {
		t.Fatalf("%d batches flushed while the lock was held", batches.Load())
	}
	r.mu.Unlock()
	for i, d := range ds {
		if d <= 0 {
			t.Fatalf("EndFrame %d returned %d, want the frame's time", i+1, d)
		}
	}
	streamedMu.Lock()
	trs := append(streamed, r.Dump())
	streamedMu.Unlock()
	frames := map[uint64]timeline.Frame{}
	for _, tr := range trs {
		for _, f := range tr.Frames {
			frames[f.ID] = f
		}
	}
	if len(frames) != 100 || frames[100].ID != 100 {
		t.Fatalf("%d frames after the lock was released, streamed and dumped, want 100", len(frames))
	}
	var inFrame int
	for _, tr := range trs {
		for _, s := range tr.Spans {
			if tr.Track(s.Track).Kind == timeline.TrackCPU && s.Frame != 0 {
				f := frames[s.Frame]
				if s.Start < f.Start || s.End > f.End {
					t.Fatalf("span %+v outside its frame %+v", s, f)
				}
				inFrame++
			}
		}
	}
	if inFrame != 100 {
		t.Fatalf("%d CPU spans in frames, want 100", inFrame)
	}
	// FlushEvery flushes on the recorder's goroutine, once for the
	// frames whose marks it applied together.
	for deadline := time.Now().Add(time.Minute); batches.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("FlushEvery made no batch")
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// Frame boundaries that do not wait wake no goroutine while they keep
// coming (the merge's goroutine looks at the inbox by itself, every
// markPoll), and are applied all the same: a wake is a system call on the
// caller's thread, which under the layer is the program's, inside its
// vkQueueSubmit (30-45 us of a frame's begin on a 2-core machine). After
// a quiet longer than markIdle, the next boundary wakes it, once.
func TestFramesNoWaitMarksWakeNothing(t *testing.T) {
	r := NewRecorder(Options{FramesNoWait: true})
	defer r.Close()
	woken := func() uint64 {
		r.inMu.Lock()
		defer r.inMu.Unlock()
		return r.woken
	}
	ended := func() uint64 {
		r.mu.Lock() // not lock(): that would apply the inbox itself
		defer r.mu.Unlock()
		return r.ended
	}
	const frames = 40
	r.BeginFrame() // the first mark starts the merge's goroutine, and may wake it
	r.EndFrame()
	before := woken()
	for range frames - 1 {
		time.Sleep(2 * time.Millisecond) // a frame's time: the merge falls idle between marks
		r.BeginFrame()
		r.EndFrame()
	}
	if w := woken() - before; w > 0 {
		t.Errorf("%d boundaries of %d woke the merge's goroutine, want none", w, 2*(frames-1))
	}
	for deadline := time.Now().Add(time.Minute); ended() != frames; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d frames applied a minute after the last boundary, want %d", ended(), frames)
		}
	}
	// Quiet: the merge sleeps until woken, and the next boundary wakes it.
	waitAsleep(t, r, time.Minute)
	w := woken()
	r.BeginFrame()
	if got := woken() - w; got != 1 {
		t.Errorf("the boundary after a quiet woke the merge %d times, want 1", got)
	}
}
