package live

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// idleStop is how long the watcher polls with no request and no capture.
const idleStop = 10 * time.Second

// peekSpans is the most spans one Peek copies: the poller's buffers hold
// that many, and the recorder's lock is held while it copies them.
// peeksPerPoll bounds the Peeks of one poll, at most 262144 spans, so
// that one poll ends even while the application records faster than the
// watcher copies.
const (
	peekSpans    = 4096
	peeksPerPoll = 64
)

// watcher copies what is new from the recorder while someone watches, and
// keeps the window of the last frames that every viewer reads.
type watcher struct {
	p    *profiler.Profiler
	rec  *record.Recorder
	done <-chan struct{} // closed by the profiler's Close
	opt  Options
	idle time.Duration // idleStop; shorter in tests

	lastReq atomic.Int64 // time.Now().UnixNano() of the latest request

	mu      sync.Mutex
	running bool
	seeded  chan struct{} // closed once the first polls have caught up
	win     window
	caps    map[*capture]struct{}
	cache   viewCache
	peeked  record.Peeked // the poller's buffers, reused
	st      stream        // the captures' batches; the poller's alone
	// fast says the last poll found that the recorder keeps less than
	// two PollEvery of spans, or that spans had left it before they were
	// copied: the poller copies every captureEvery.
	fast bool
	wake chan struct{} // a capture came: poll now
}

// window is what the watcher holds: names, tracks, the last frames and
// their spans and flows. Only the poller writes it, under watcher.mu.
type window struct {
	cursor  record.PeekCursor
	peeks   int // Peeks since the watcher started
	names   []string
	tracks  []timeline.Track
	frames  []timeline.Frame
	spans   []timeline.Span // in the order stored: seqs ascending
	seqs    []uint64
	flows   [][2]uint64
	misses  []miss // spans copied too late, by the newest frame known then
	missed  uint64 // their total, since the watcher started
	capLost uint64 // spans of batches captures had no room for
	settled uint64
	open    uint64
	drops   timeline.Drops  // the recorder's running total
	ledger  timeline.Ledger // and its books
	// upstream is the recorder's running total of what never reached its
	// memory (record.Peeked.Upstream): what the window and captures
	// lack besides what they copied too late.
	upstream timeline.Drops
	polls    uint64
	views    uint64    // changes of what viewers see, at most one a PollEvery
	viewAt   time.Time // of the last
	caught   bool      // the last poll copied everything there was
	verdicts verdicts  // what limits its frames, judged as they close
}

type miss struct{ frame, n uint64 }

// capture is one ?seconds request: the poller hands it the stream's
// batches from the first after it came until its deadline, and the
// request's goroutine writes them as they come. Its fields but ch and
// done are guarded by watcher.mu.
type capture struct {
	deadline time.Time
	started  bool
	base     timeline.Drops // the recorder's running total before its first batch
	latest   timeline.Drops // the recorder's running total of its last batch
	ch       chan *batch
	// lost counts what was in the batches it had no room for, its
	// writer being behind by captureQueue batches.
	lost timeline.Drops
	done chan struct{} // closed once its deadline passed and ch has its last batch
}

// captureEvery is how often the poller copies while captures run.
const captureEvery = 50 * time.Millisecond

// captureQueue is how many batches a capture's writer may be behind the
// poller before it loses one: 64 batches of batchSpans spans.
const captureQueue = 64

func newWatcher(p *profiler.Profiler, o Options) *watcher {
	rec, done := reach.Profiler(p)
	return &watcher{p: p, rec: rec, done: done, opt: o, idle: idleStop, caps: map[*capture]struct{}{}, wake: make(chan struct{}, 1)}
}

// touch notes a request and starts the poller if it is not running.
func (w *watcher) touch() {
	w.lastReq.Store(time.Now().UnixNano())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.startLocked()
}

func (w *watcher) startLocked() {
	if w.running {
		return
	}
	if isClosed(w.done) {
		// The profiler is closed: the window holds its last frames, and
		// nothing new will come.
		if w.seeded == nil || !isClosed(w.seeded) {
			w.seeded = make(chan struct{})
			close(w.seeded)
		}
		w.finishCaptures(true)
		return
	}
	w.running = true
	w.fast = false
	w.win = window{}
	w.seeded = make(chan struct{})
	w.cache = viewCache{}
	go w.run(w.seeded)
}

func (w *watcher) run(seeded chan struct{}) {
	t := time.NewTimer(0)
	defer t.Stop()
	next := time.Now()
	done := w.done
	for {
		closed := isClosed(done)
		w.poll() // after a close, the last: what Close flushed
		w.mu.Lock()
		if closed {
			w.running = false
			w.finishCaptures(true)
			if !isClosed(seeded) {
				close(seeded)
			}
			w.st.stop()
			w.mu.Unlock()
			return
		}
		// While captures run, copy every captureEvery: each poll then
		// copies, and the stream hands on, a fraction of PollEvery's
		// spans, so that its batches in flight stay few. The view
		// changes at PollEvery all the same.
		every := w.opt.PollEvery
		if len(w.caps) > 0 || w.fast {
			every = min(every, captureEvery)
		}
		if now := time.Now(); now.Sub(w.win.viewAt) >= w.opt.PollEvery {
			w.win.views++
			w.win.viewAt = now
		}
		// Seeded once caught up, or after a few polls when the application
		// records faster than one poll copies.
		if (w.win.caught || w.win.polls >= 4) && !isClosed(seeded) {
			close(seeded)
		}
		idle := time.Since(time.Unix(0, w.lastReq.Load())) > w.idle
		if idle && len(w.caps) == 0 {
			w.running = false
			w.win = window{} // let the window's memory go
			w.cache = viewCache{}
			w.peeked = record.Peeked{}
			w.st.stop()
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		next = next.Add(every)
		if d := time.Until(next); d > 0 {
			t.Reset(d)
			if wait(t, w.wake, done) {
				next = time.Now()
			}
		} else {
			next = time.Now() // behind: go on at once, and count from now
		}
	}
}

// wait waits for t, armed, or for wake or done, and says whether one of
// those came first; it stops t then (since Go 1.23 no value of a stopped
// timer is received, so nothing needs draining before the next Reset).
func wait(t *time.Timer, wake, done <-chan struct{}) (woke bool) {
	select {
	case <-t.C:
		return false
	case <-wake:
	case <-done:
	}
	t.Stop()
	return true
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// poll copies what is new and merges it into the window, and while
// captures run, into the stream, whose batches it hands them. Peek and
// the stream run without w.mu, so that viewers never wait on the
// recorder.
func (w *watcher) poll() {
	w.mu.Lock()
	c := w.win.cursor
	first := w.win.peeks == 0
	switch {
	case len(w.caps) > 0 && !w.st.on && (w.win.caught || w.win.polls >= 4):
		// Once the window has caught up: what it copied before is
		// history, not the next seconds.
		w.st.start(&w.win, w.rec.Options().Process)
	case len(w.caps) == 0 && w.st.on:
		w.st.stop()
	}
	w.mu.Unlock()
	p := &w.peeked // only the poller uses it
	for i := 0; i < peeksPerPoll; i++ {
		*p = record.Peeked{Names: p.Names[:0], Tracks: p.Tracks[:0], Spans: p.Spans[:0], Seqs: p.Seqs[:0],
			Flows: p.Flows[:0], Frames: p.Frames[:0]}
		c = w.rec.Peek(c, peekSpans, p)
		w.mu.Lock()
		if first && i == 0 {
			p.Missed = 0 // what left memory before anyone watched is not the view's
		}
		w.merge(p, c)
		w.trim() // each Peek, so that the window holds at most one Peek more than it keeps
		w.mu.Unlock()
		if i == 0 {
			// Keep up with a recorder that keeps little: a flight
			// recorder's window at a high frame rate.
			kept := time.Duration(timeline.Now() - p.Oldest)
			w.fast = p.Oldest != 0 && kept < 2*w.opt.PollEvery || p.Missed > 0
		}
		if w.st.on {
			w.st.add(p)
			if full := w.st.full(); full || !p.More {
				before := w.st.drops
				bs := w.st.emit(&w.win, p.Settled, p.Upstream, full)
				w.mu.Lock()
				w.deliver(bs, before)
				w.mu.Unlock()
			}
		}
		if !p.More {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finishCaptures(false)
	w.win.polls++
}

// deliver hands batches to every capture: the first batches after it
// came start it. A capture with no room for a batch counts what the
// batch held as lost. Caller holds mu.
func (w *watcher) deliver(bs []*batch, before timeline.Drops) {
	defer func() {
		for _, b := range bs {
			b.release() // the poller's hold
		}
	}()
	for k := range w.caps {
		if !k.started {
			k.started, k.base = true, before
		}
		for _, b := range bs {
			k.latest = b.t.Drops
			b.refs.Add(1)
			select {
			case k.ch <- b:
			default:
				b.refs.Add(-1)
				w.win.capLost += uint64(len(b.t.Spans))
				k.lost.Evicted += uint64(len(b.t.Spans)) + b.missed
				k.lost.Flows += uint64(len(b.t.Flows)) + b.split
				k.lost.Frames += uint64(len(b.t.Frames))
			}
		}
	}
}

// merge adds one Peek to the window. Caller holds mu.
func (w *watcher) merge(p *record.Peeked, c record.PeekCursor) {
	wn := &w.win
	wn.cursor = c
	wn.peeks++
	wn.caught = !p.More
	wn.names = append(wn.names, p.Names...)
	wn.tracks = append(wn.tracks, p.Tracks...)
	wn.spans = append(wn.spans, p.Spans...)
	wn.verdicts.merged(p.Spans)
	wn.seqs = append(wn.seqs, p.Seqs...)
	wn.flows = append(wn.flows, p.Flows...)
	wn.frames = append(wn.frames, p.Frames...)
	if p.Missed > 0 {
		newest := p.Open
		if n := len(wn.frames); newest == 0 && n > 0 {
			newest = wn.frames[n-1].ID
		}
		wn.misses = append(wn.misses, miss{newest, p.Missed})
		wn.missed += p.Missed
	}
	wn.settled, wn.open, wn.drops, wn.upstream, wn.ledger = p.Settled, p.Open, p.Drops, p.Upstream, p.Ledger
}

// trim keeps the last WindowFrames frames, the spans of those frames (and
// spans of no frame that end after the oldest began), at most
// maxWindowSpans, and the flows between spans kept. Caller holds mu.
func (w *watcher) trim() {
	wn := &w.win
	if over := len(wn.frames) - w.opt.WindowFrames; over > 0 {
		wn.frames = slices.Delete(wn.frames, 0, over)
	}
	var oldest timeline.Frame
	if len(wn.frames) > 0 {
		oldest = wn.frames[0]
	}
	k := 0
	for i := range wn.spans {
		s := &wn.spans[i]
		if s.Frame >= oldest.ID || (s.Frame == 0 && s.End >= oldest.Start) {
			wn.spans[k], wn.seqs[k] = *s, wn.seqs[i]
			k++
		}
	}
	if over := k - maxWindowSpans; over > 0 {
		copy(wn.spans, wn.spans[over:k])
		copy(wn.seqs, wn.seqs[over:k])
		k -= over
		wn.misses = append(wn.misses, miss{wn.open, uint64(over)})
		wn.missed += uint64(over)
	}
	wn.spans, wn.seqs = wn.spans[:k], wn.seqs[:k]
	f := 0
	for _, fl := range wn.flows {
		if hasSeq(wn.seqs, fl[0]) && hasSeq(wn.seqs, fl[1]) {
			wn.flows[f] = fl
			f++
		}
	}
	wn.flows = wn.flows[:f]
	m := 0
	for _, x := range wn.misses {
		if x.frame >= oldest.ID {
			wn.misses[m] = x
			m++
		}
	}
	wn.misses = wn.misses[:m]
}

func hasSeq(seqs []uint64, s uint64) bool {
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= s })
	return i < len(seqs) && seqs[i] == s
}

// finishCaptures ends the captures whose deadline passed, or all of them
// when all is set (the profiler closed). Caller holds mu.
func (w *watcher) finishCaptures(all bool) {
	now := time.Now()
	for k := range w.caps {
		if all || now.After(k.deadline) {
			delete(w.caps, k)
			close(k.done)
		}
	}
}

var errStopped = errors.New("live: the request ended before its capture")

// captureOut is where a capture writes: a Perfetto trace, or a profile.
type captureOut interface {
	// batch writes one sink batch; an error ends the capture.
	batch(t *timeline.Trace) error
	// end writes the last batch, which has no spans, only the final
	// Drops, and finishes.
	end(t *timeline.Trace) error
	// release lets go of what it reused, once the capture is over.
	release()
}

// capture writes the stream's batches of the next d to out, at most
// maxSpans spans (0: no limit); what it leaves out is in the Drops it
// writes.
func (w *watcher) capture(ctx context.Context, d time.Duration, out captureOut, maxSpans int) error {
	w.lastReq.Store(time.Now().UnixNano())
	k := &capture{deadline: time.Now().Add(d), ch: make(chan *batch, captureQueue), done: make(chan struct{})}
	w.mu.Lock()
	w.caps[k] = struct{}{}
	w.startLocked()
	w.mu.Unlock()
	select { // poll now, not at the next PollEvery, so that no frame of its seconds ages out first
	case w.wake <- struct{}{}:
	default:
	}
	return w.serve(ctx, k, out, maxSpans)
}

// serve writes the batches the poller hands k to out until k's deadline,
// and unregisters k.
func (w *watcher) serve(ctx context.Context, k *capture, out captureOut, maxSpans int) error {
	defer func() {
		w.mu.Lock()
		delete(w.caps, k)
		w.mu.Unlock()
		for len(k.ch) > 0 { // nothing comes once it is gone from caps
			(<-k.ch).release()
		}
		out.release()
	}()
	var own timeline.Drops // what the batches it took say was lost, and what it left out
	var recorder timeline.Drops
	spans := 0
	drops := func() timeline.Drops {
		w.mu.Lock()
		defer w.mu.Unlock()
		return books.Add(books.Add(books.Sub(recorder, k.base), own), k.lost)
	}
	var t timeline.Trace // b.t with the capture's own Drops
	write := func(b *batch) error {
		defer b.release()
		t = b.t
		own.Evicted += b.missed
		own.Flows += b.split
		if maxSpans > 0 && spans+len(t.Spans) > maxSpans {
			own.Evicted += uint64(len(t.Spans))
			own.Flows += uint64(len(t.Flows))
			own.Frames += uint64(len(t.Frames))
			t.Spans, t.Flows, t.Frames = nil, nil, nil
		}
		spans += len(t.Spans)
		recorder = b.t.Drops
		t.Drops = drops()
		return out.batch(&t)
	}
	for {
		select {
		case b := <-k.ch:
			if err := write(b); err != nil {
				return err
			}
		case <-k.done:
			for len(k.ch) > 0 {
				if err := write(<-k.ch); err != nil {
					return err
				}
			}
			w.mu.Lock()
			if !k.started {
				k.base, k.latest = w.win.upstream, w.win.upstream
			}
			recorder = k.latest
			t := &timeline.Trace{Process: w.rec.Options().Process, Names: w.win.names, Tracks: w.win.tracks}
			w.mu.Unlock()
			t.Drops = drops()
			return out.end(t)
		case <-ctx.Done():
			return errStopped
		}
	}
}

// waitSeeded notes a request and waits, at most d, until the window has
// caught up with the recorder: the first request after a stop sees the
// window full, not empty.
func (w *watcher) waitSeeded(ctx context.Context, d time.Duration) error {
	w.touch()
	w.mu.Lock()
	seeded := w.seeded
	w.mu.Unlock()
	select {
	case <-seeded:
		return nil
	case <-ctx.Done():
		return errStopped
	case <-time.After(d):
		return errors.New("live: the window is still filling; try again")
	}
}

// lastFrames is a trace of the last n settled frames of the window.
func (w *watcher) lastFrames(ctx context.Context, n int) (*timeline.Trace, error) {
	if err := w.waitSeeded(ctx, 5*time.Second); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	wn := &w.win
	end := sort.Search(len(wn.frames), func(i int) bool { return wn.frames[i].ID > wn.settled })
	frames := wn.frames[max(0, end-n):end]
	t := w.header()
	t.Drops = wn.upstream
	if len(frames) == 0 {
		return t, nil
	}
	lo, hi := frames[0], frames[len(frames)-1]
	var seqs []uint64
	for i := range wn.spans {
		s := &wn.spans[i]
		in := s.Frame >= lo.ID && s.Frame <= hi.ID
		if s.Frame == 0 {
			in = s.End >= lo.Start && s.Start <= hi.End
		}
		if in {
			t.Spans = append(t.Spans, *s)
			seqs = append(seqs, wn.seqs[i])
		}
	}
	t.Frames = slices.Clone(frames)
	var cut uint64
	t.Flows, cut = flowsOf(seqs, wn.flows)
	t.Drops.Flows += cut
	for _, x := range wn.misses {
		if x.frame >= lo.ID {
			t.Drops.Evicted += x.n
		}
	}
	return t, nil
}

// header is a Trace with the window's names and tracks. Caller holds mu.
func (w *watcher) header() *timeline.Trace {
	return &timeline.Trace{
		Process: w.rec.Options().Process,
		Names:   slices.Clone(w.win.names),
		Tracks:  slices.Clone(w.win.tracks),
	}
}

// flowsOf turns flows by sequence number into flows by index in seqs
// (ascending), leaving out those whose ends are not both there; cut counts
// those of which one end is.
func flowsOf(seqs []uint64, flows [][2]uint64) (out []timeline.Flow, cut uint64) {
	for _, f := range flows {
		a, aok := slices.BinarySearch(seqs, f[0])
		b, bok := slices.BinarySearch(seqs, f[1])
		switch {
		case aok && bok:
			out = append(out, timeline.Flow{From: a, To: b})
		case aok || bok:
			cut++
		}
	}
	return out, cut
}
