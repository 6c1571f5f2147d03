package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	"github.com/google/pprof/profile"
)

// gpuApp is a render loop with a simulated GPU queue, through the public
// recorder API: each frame a CPU span that submits, with a nested one,
// and two GPU zones (one nested) whose results come lag frames later with
// the submission's key, as a profiler's GPU context adds them.
type gpuApp struct {
	p     *profiler.Profiler
	stop  chan struct{}
	wg    sync.WaitGroup
	every atomic.Int64 // the sleep between frames, ns
}

func startGPUApp(t *testing.T, every time.Duration, lag uint64) *gpuApp {
	t.Helper()
	return startGPUAppWith(t, profiler.Options{}, every, lag)
}

func startGPUAppWith(t *testing.T, o profiler.Options, every time.Duration, lag uint64) *gpuApp {
	t.Helper()
	a := &gpuApp{p: profiler.New(o), stop: make(chan struct{})}
	a.every.Store(int64(every))
	rec, _ := reach.Profiler(a.p)
	loop := rec.CPUTrack("render loop")
	submit, recordN, draw, shadow := a.p.Name("submit"), a.p.Name("record"), a.p.Name("draw"), a.p.Name("shadow")
	q := rec.QueueTrack(timeline.Queue{Device: "sim", Flags: "graphics"})
	src := rec.GPUSource(q)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		type sub struct {
			frame      uint64
			start, end int64
		}
		var subs []sub
		for {
			select {
			case <-a.stop:
				return
			default:
			}
			f := a.p.BeginFrame()
			loop.Span(recordN).End()
			s := loop.Span(submit)
			s.Submitted(f)
			t0 := timeline.Now()
			s.End()
			a.p.EndFrame()
			subs = append(subs, sub{f, t0, t0 + 50_000})
			if len(subs) > int(lag) {
				g := subs[0]
				subs = subs[1:]
				rec.AddGPUSpans(q, []record.GPUSpan{
					{Name: draw, Start: g.start, End: g.end, Frame: g.frame, Key: g.frame},
					{Name: shadow, Start: g.start + 10_000, End: g.start + 20_000, Frame: g.frame, Key: g.frame, Depth: 1},
				})
				src.Settle(g.frame)
			}
			time.Sleep(time.Duration(a.every.Load()))
		}
	}()
	t.Cleanup(func() {
		close(a.stop)
		a.wg.Wait()
		a.p.Close()
	})
	return a
}

// TestCaptureWholeFrames: a ?seconds capture of an application whose GPU
// results come frames late holds whole frames: each frame's CPU spans and
// GPU zones, and a flow from its submit span to each zone; nothing is
// dropped, also when the recorder is a flight recorder, which counts what
// leaves its window undelivered (the capture had it). The gpu capture of
// the same seconds has the zones' time.
func TestCaptureWholeFrames(t *testing.T) {
	for _, o := range []profiler.Options{{}, {WindowFrames: 1000}} {
		t.Run(fmt.Sprintf("window %d", o.WindowFrames), func(t *testing.T) { wholeFrames(t, o) })
	}
}

func wholeFrames(t *testing.T, o profiler.Options) {
	a := startGPUAppWith(t, o, 200*time.Microsecond, 3)
	hh, _ := New(a.p, Options{PollEvery: minPollEvery})
	base := serve(t, hh)
	waitView(t, base)
	var wg sync.WaitGroup
	var tb, pb []byte
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, tb = get(t, base+"trace?seconds=2")
	}()
	go func() {
		defer wg.Done()
		_, pb = get(t, base+"gpu?seconds=2")
	}()
	wg.Wait()
	tr, err := perfetto.Read(bytes.NewReader(tb))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Frames) < 100 {
		t.Fatalf("%d frames in 2 s", len(tr.Frames))
	}
	frames := map[uint64]bool{}
	for _, f := range tr.Frames {
		frames[f.ID] = true
	}
	per := map[uint64][2]int{} // frame -> CPU spans, GPU zones
	for _, s := range tr.Spans {
		if !frames[s.Frame] {
			t.Fatalf("a span of frame %d, not among the trace's frames", s.Frame)
		}
		v := per[s.Frame]
		switch tr.Track(s.Track).Kind {
		case timeline.TrackCPU:
			v[0]++
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			v[1]++
		}
		per[s.Frame] = v
	}
	for id := range frames {
		if per[id] != [2]int{2, 2} {
			t.Errorf("frame %d: %d CPU spans and %d GPU zones, want 2 and 2", id, per[id][0], per[id][1])
		}
	}
	if len(tr.Flows) != 2*len(tr.Frames) {
		t.Errorf("%d flows for %d frames, want 2 a frame", len(tr.Flows), len(tr.Frames))
	}
	if tr.Drops.Total() != 0 {
		t.Errorf("drops %+v", tr.Drops)
	}
	p, err := profile.Parse(bytes.NewReader(pb))
	if err != nil {
		t.Fatal(err)
	}
	var gpu int64
	for _, s := range p.Sample {
		gpu += s.Value[0]
		if s.NumLabel["frame"] != nil {
			t.Errorf("a frame label in a live profile: %v", s.NumLabel)
		}
	}
	// 50 µs of GPU time a frame, over about as many frames as the trace.
	if n := gpu / 50_000; n < int64(len(tr.Frames))/2 || n > 2*int64(len(tr.Frames)) {
		t.Errorf("%d ns of GPU time, %d frames' worth; the trace has %d frames", gpu, n, len(tr.Frames))
	}
}

// counted is a captureOut that keeps counts, and can be made to wait.
type counted struct {
	hold                 chan struct{} // closed to let the first batch through
	spans, flows, frames int
	batches              int
	drops                timeline.Drops
	ended                bool
}

func (r *counted) batch(t *timeline.Trace) error {
	if r.hold != nil {
		<-r.hold
	}
	r.batches++
	r.spans += len(t.Spans)
	r.flows += len(t.Flows)
	r.frames += len(t.Frames)
	r.drops = t.Drops
	return nil
}

func (r *counted) end(t *timeline.Trace) error {
	r.drops, r.ended = t.Drops, true
	return nil
}

func (r *counted) release() {}

// TestSlowCaptureCounted: a capture whose client falls behind loses
// batches, never blocks the poller, and counts what it lost: with a fast
// capture of the same seconds, what one has the other has or counts.
func TestSlowCaptureCounted(t *testing.T) {
	a := startGPUApp(t, 100*time.Microsecond, 2)
	hh, _ := New(a.p, Options{PollEvery: minPollEvery})
	w := hh.(*handler).w
	w.touch()
	if err := w.waitSeeded(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	mk := func() *capture { // room for 4 batches: the slow one soon has none
		return &capture{deadline: deadline, ch: make(chan *batch, 4), done: make(chan struct{})}
	}
	fastK, slowK := mk(), mk()
	w.mu.Lock()
	w.caps[fastK], w.caps[slowK] = struct{}{}, struct{}{}
	w.mu.Unlock()
	fast, slow := &counted{}, &counted{hold: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.serve(context.Background(), fastK, fast, 0) }()
	go func() { defer wg.Done(); w.serve(context.Background(), slowK, slow, 0) }()
	time.Sleep(1500 * time.Millisecond) // polls of 50 ms
	close(slow.hold)
	wg.Wait()
	if !fast.ended || !slow.ended {
		t.Fatal("a capture did not end")
	}
	if fast.drops.Total() != 0 || fast.spans == 0 {
		t.Fatalf("fast capture: %d spans, drops %+v", fast.spans, fast.drops)
	}
	if slow.drops.Evicted == 0 {
		t.Fatalf("the slow capture lost nothing: %d of %d batches", slow.batches, fast.batches)
	}
	if slow.spans+int(slow.drops.Evicted) != fast.spans || slow.flows+int(slow.drops.Flows) != fast.flows ||
		slow.frames+int(slow.drops.Frames) != fast.frames {
		t.Errorf("fast %d spans, %d flows, %d frames; slow %d, %d, %d with drops %+v",
			fast.spans, fast.flows, fast.frames, slow.spans, slow.flows, slow.frames, slow.drops)
	}
}

// TestCaptureStartsAtOnce: a capture makes the poller copy at once and
// every 50 ms while it runs, whatever PollEvery: a capture of one second
// holds about a second of frames.
func TestCaptureStartsAtOnce(t *testing.T) {
	a := startGPUApp(t, 200*time.Microsecond, 2)
	hh, _ := New(a.p, Options{PollEvery: maxPollEvery})
	base := serve(t, hh)
	get(t, base+"json") // the poller started, and its first poll done
	t0 := time.Now()
	_, b := get(t, base+"trace?seconds=1")
	took := time.Since(t0)
	tr, err := perfetto.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if took > 2*time.Second || len(tr.Frames) < 50 {
		t.Errorf("a 1 s capture took %v and holds %d frames", took, len(tr.Frames))
	}
}

// TestPollerKeepsUp: when the recorder keeps less than two PollEvery of
// frames, the poller copies often enough to miss nothing: from its first
// copy when the recorder keeps that little from the start; from the first
// copy that misses spans when the application speeds up, which counts
// them.
func TestPollerKeepsUp(t *testing.T) {
	missed := func(base string) uint64 {
		_, b := get(t, base+"json")
		var v view
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v.Missed
	}
	o := profiler.Options{WindowFrames: 300}
	t.Run("from the start", func(t *testing.T) {
		a := startGPUAppWith(t, o, 200*time.Microsecond, 2)
		hh, _ := New(a.p, Options{PollEvery: time.Second})
		base := serve(t, hh)
		missed(base)
		time.Sleep(3 * time.Second)
		if m := missed(base); m != 0 {
			t.Errorf("missed %d spans", m)
		}
	})
	t.Run("speeding up", func(t *testing.T) {
		a := startGPUAppWith(t, o, 5*time.Millisecond, 2) // 300 frames: 1.5 s
		hh, _ := New(a.p, Options{PollEvery: 500 * time.Millisecond})
		base := serve(t, hh)
		time.Sleep(1600 * time.Millisecond) // the recorder full
		missed(base)
		a.every.Store(int64(100 * time.Microsecond)) // 300 frames: under 0.1 s
		time.Sleep(1500 * time.Millisecond)
		m1 := missed(base)
		time.Sleep(1500 * time.Millisecond)
		m2 := missed(base)
		if m1 == 0 || m2 != m1 {
			t.Errorf("missed %d spans 1.5 s after the speed-up, %d after 3 s: want some, then no more", m1, m2)
		}
	})
}

// TestCapturesChurn: captures coming and going all the time, each waking
// the poller, all end, and the poller goes on.
func TestCapturesChurn(t *testing.T) {
	a := startGPUApp(t, 200*time.Microsecond, 2)
	hh, _ := New(a.p, Options{PollEvery: minPollEvery, MaxCaptures: 64})
	base := serve(t, hh)
	get(t, base+"json")
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	var n atomic.Int64
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if code, _ := get(t, base+"gpu?seconds=1"); code != 200 {
					t.Errorf("capture: %d", code)
					return
				}
				n.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("captures still running 20 s after they were to end (%d ended)", n.Load())
	}
}

// TestClientThatNeverReads: a client that asks for a capture and reads
// nothing holds its capture slot only writeTimeout past the capture's
// end, not for as long as its connection stays open; HEAD takes no slot.
func TestClientThatNeverReads(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 300 * time.Millisecond
	a := startGPUApp(t, 0, 2) // as fast as it can: megabytes a second
	hh, _ := New(a.p, Options{MaxCaptures: 1})
	base := serve(t, hh)
	get(t, base+"json")
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %strace?seconds=1 HTTP/1.1\r\nHost: %s\r\n\r\n", u.Path, u.Host)
	time.Sleep(200 * time.Millisecond)
	r, err := http.Head(base + "gpu?seconds=1") // while the slot is taken
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", r, err)
	}
	r.Body.Close()
	deadline := time.Now().Add(8 * time.Second)
	for {
		code, _ := get(t, base+"gpu?seconds=1")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a client that reads nothing is still taken 8 s on (%d)", code)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
