package live

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// idleStop is how long the watcher polls with no request and no capture.
const idleStop = 10 * time.Second

// peeksPerPoll bounds the Peeks of one poll: at most this many times
// timeline.MaxPeek spans a poll, so that one poll ends even while the
// application records faster than the watcher copies.
const peeksPerPoll = 16

// watcher copies what is new from the recorder while someone watches, and
// keeps the window of the last frames that every viewer reads.
type watcher struct {
	p    *profiler.Profiler
	rec  *timeline.Recorder
	opt  Options
	idle time.Duration // idleStop; shorter in tests

	lastReq atomic.Int64 // time.Now().UnixNano() of the latest request

	mu      sync.Mutex
	running bool
	seeded  chan struct{} // closed once the first polls have caught up
	win     window
	caps    map[*capture]struct{}
	cache   viewCache
	peeked  timeline.Peeked // the poller's buffers, reused
}

// window is what the watcher holds: names, tracks, the last frames and
// their spans and flows. Only the poller writes it, under watcher.mu.
type window struct {
	cursor  timeline.PeekCursor
	peeks   int // Peeks since the watcher started
	names   []string
	tracks  []timeline.Track
	frames  []timeline.Frame
	spans   []timeline.Span // in the order stored: seqs ascending
	seqs    []uint64
	flows   [][2]uint64
	misses  []miss // spans copied too late, by the newest frame known then
	missed  uint64 // their total, since the watcher started
	settled uint64
	open    uint64
	drops   timeline.Drops
	polls   uint64
	caught  bool // the last poll copied everything there was
}

type miss struct{ frame, n uint64 }

// capture collects what is stored from its start until its deadline.
type capture struct {
	deadline   time.Time
	startDrops timeline.Drops
	started    bool // a poll has set startDrops
	spans      []timeline.Span
	seqs       []uint64
	flows      [][2]uint64
	frames     []timeline.Frame
	lost       uint64 // spans copied too late or over MaxCaptureSpans
	endDrops   timeline.Drops
	done       chan struct{}
}

func newWatcher(p *profiler.Profiler, o Options) *watcher {
	return &watcher{p: p, rec: p.Recorder(), opt: o, idle: idleStop, caps: map[*capture]struct{}{}}
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
	w.running = true
	w.win = window{}
	w.seeded = make(chan struct{})
	w.cache = viewCache{}
	go w.run(w.seeded)
}

func (w *watcher) run(seeded chan struct{}) {
	t := time.NewTicker(w.opt.PollEvery)
	defer t.Stop()
	for {
		w.poll()
		w.mu.Lock()
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
			w.peeked = timeline.Peeked{}
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		<-t.C
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// poll copies what is new and merges it into the window and the captures.
// Peek runs without w.mu, so that viewers never wait on the recorder.
func (w *watcher) poll() {
	w.mu.Lock()
	c := w.win.cursor
	first := w.win.peeks == 0
	w.mu.Unlock()
	p := &w.peeked // only the poller uses it
	for i := 0; i < peeksPerPoll; i++ {
		*p = timeline.Peeked{Names: p.Names[:0], Tracks: p.Tracks[:0], Spans: p.Spans[:0], Seqs: p.Seqs[:0],
			Flows: p.Flows[:0], Frames: p.Frames[:0]}
		c = w.rec.Peek(c, timeline.MaxPeek, p)
		w.mu.Lock()
		if first && i == 0 {
			p.Missed = 0 // what left memory before anyone watched is not the view's
		}
		w.merge(p, c)
		w.mu.Unlock()
		if !p.More {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trim()
	w.finishCaptures()
	w.win.polls++
}

// merge adds one Peek to the window and to every capture. Caller holds mu.
func (w *watcher) merge(p *timeline.Peeked, c timeline.PeekCursor) {
	wn := &w.win
	wn.cursor = c
	wn.peeks++
	wn.caught = !p.More
	wn.names = append(wn.names, p.Names...)
	wn.tracks = append(wn.tracks, p.Tracks...)
	wn.spans = append(wn.spans, p.Spans...)
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
	wn.settled, wn.open, wn.drops = p.Settled, p.Open, p.Drops
	for k := range w.caps {
		if !k.started {
			// A capture starts once the window has caught up, after this
			// Peek: what came before is history, not the next seconds.
			if !p.More {
				k.started, k.startDrops, k.endDrops = true, p.Drops, p.Drops
			}
			continue
		}
		room := max(0, MaxCaptureSpans-len(k.spans))
		n := min(room, len(p.Spans))
		k.spans = append(k.spans, p.Spans[:n]...)
		k.seqs = append(k.seqs, p.Seqs[:n]...)
		k.lost += uint64(len(p.Spans)-n) + p.Missed
		k.flows = append(k.flows, p.Flows...)
		k.frames = append(k.frames, p.Frames...)
		k.endDrops = p.Drops
	}
}

// trim keeps the last WindowFrames frames, the spans of those frames (and
// spans of no frame that end after the oldest began), at most
// MaxWindowSpans, and the flows between spans kept. Caller holds mu.
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
	if over := k - MaxWindowSpans; over > 0 {
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

// finishCaptures ends the captures whose deadline passed. Caller holds mu.
func (w *watcher) finishCaptures() {
	now := time.Now()
	for k := range w.caps {
		if now.After(k.deadline) {
			delete(w.caps, k)
			close(k.done)
		}
	}
}

var errStopped = errors.New("live: the request ended before its capture")

// capture collects what is stored over the next d.
func (w *watcher) capture(ctx context.Context, d time.Duration) (*timeline.Trace, error) {
	w.lastReq.Store(time.Now().UnixNano())
	k := &capture{deadline: time.Now().Add(d), done: make(chan struct{})}
	w.mu.Lock()
	w.caps[k] = struct{}{}
	w.startLocked()
	w.mu.Unlock()
	select {
	case <-k.done:
	case <-ctx.Done():
		w.mu.Lock()
		delete(w.caps, k)
		w.mu.Unlock()
		return nil, errStopped
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.header()
	t.Spans, t.Frames = k.spans, k.frames
	t.Flows = flowsOf(k.seqs, k.flows)
	t.Drops = k.endDrops.Sub(k.startDrops)
	t.Drops.Evicted += k.lost
	return t, nil
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
	t.Drops = wn.drops
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
	t.Flows = flowsOf(seqs, wn.flows)
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
// (ascending), leaving out those whose ends are not both there.
func flowsOf(seqs []uint64, flows [][2]uint64) []timeline.Flow {
	var out []timeline.Flow
	for _, f := range flows {
		a := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= f[0] })
		b := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= f[1] })
		if a < len(seqs) && seqs[a] == f[0] && b < len(seqs) && seqs[b] == f[1] {
			out = append(out, timeline.Flow{From: a, To: b})
		}
	}
	return out
}
