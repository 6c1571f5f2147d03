package record

import (
	"sync"
	"time"

	"github.com/framescope/framescope/internal/offload"
	"github.com/framescope/framescope/timeline"
)

// maxInboxSpans bounds the spans the inbox holds: a source that hands in
// more while the merge is behind places them itself, under the lock.
const maxInboxSpans = 1 << 16

// inboxEntry is one call waiting in the inbox: a source's Hand, whose
// spans the inbox owns, or Settle, or a frame boundary (mark).
type inboxEntry struct {
	src      *GPUSource
	spans    []GPUSpan
	rep      SourceReport
	settle   uint64 // for a Settle: the frame, already clamped at the call
	isSettle bool
	isMark   bool
	mark     frameMark
}

// inbox is what sources handed in, in the order they did.
type inbox struct {
	entries []inboxEntry
	spans   int // in all the entries
}

// inboxState is where GPU sources leave their calls for the recorder.
// Hand and Settle take only inMu to leave one: the inbox takes the spans
// over with the report. The merge applies the calls in order, under mu,
// on a goroutine of the recorder's own that starts with the first source,
// polls while calls keep coming or is woken by the next call (wait), and
// ends once the inbox is empty with no source open or the recorder
// closed; and every method that takes mu applies them first (lock), so
// that no caller ever sees the recorder without a call a source already
// made.
type inboxState struct {
	inMu    sync.Mutex
	in      inbox  // guarded by inMu
	merging bool   // a merge goroutine runs; guarded by inMu
	inboxed uint64 // batches handed in, for the tests; guarded by inMu
	// mergeStop asks the merge's goroutine to end once the inbox is empty
	// (Close); guarded by inMu.
	mergeStop bool
	mergeWake chan struct{} // wakes the merge's goroutine; buffered
	out       inbox         // the calls being applied, swapped with in; guarded by mu
	// placed are the sources whose AfterPlace calls are due, for the
	// merge's goroutine; guarded by inMu. afterRun is its copy.
	placed []*GPUSource
	// marksDue is the work applied frame marks leave for the merge's
	// goroutine, outside mu (Options.FramesNoWait); guarded by inMu.
	marksDue marksDue
	afterRun []func(bool)
	// sources counts the sources open: the merge's goroutine waits for
	// their calls while there are any; guarded by inMu.
	sources int
	// placing is the time spent placing delivered spans, and how many,
	// wherever they were placed; added to under mu.
	placing offload.Cost
	mergeFn func() // r.merge
	// asleep: the merge's goroutine waits for a wake, which the next
	// call left must send; otherwise it runs, or polls, and looks at the
	// inbox by itself (wait). woken counts the wakes calls sent, for the
	// tests. lastIn is when the last call was left, and gap the smoothed
	// time between calls (ns). Guarded by inMu.
	asleep bool
	woken  uint64
	lastIn int64
	gap    int64
	pollT  *time.Timer // the merge goroutine's own
	// markSleep: with FramesNoWait, the merge's goroutine waits for
	// markPoll rather than for a wake, since frame marks came within
	// markIdle; a mark left then does not wake it (the wake would cost
	// the program's thread a system call at every frame boundary), any
	// other call does. lastMark is when the last mark was left. Guarded
	// by inMu.
	markSleep bool
	lastMark  int64
}

// The merge polls the inbox every half of the time between calls, within
// these bounds, while calls keep coming: until none came for idleGaps
// times that time.
const (
	minPoll  = 20 * time.Microsecond
	maxPoll  = 4 * time.Millisecond
	idleGaps = 4
)

// With FramesNoWait, the merge applies frame marks within markPoll of
// their call while marks keep coming, at most markIdle apart; after a
// longer quiet the next mark wakes it.
const (
	markPoll = 4 * maxPoll
	markIdle = time.Second
)

// inline reports whether placing n spans is expected to cost the caller
// less than handing them to the merge (offload.Ns).
func (r *Recorder) inline(n int) bool { return !r.placing.Worth(uint64(n)) }

// tryLockIdle takes mu if it is free and the inbox is empty, so that a
// call placed now comes after every call before it.
func (r *Recorder) tryLockIdle() bool {
	if !r.mu.TryLock() {
		return false
	}
	r.inMu.Lock()
	empty := len(r.in.entries) == 0
	r.inMu.Unlock()
	if !empty {
		r.mu.Unlock()
	}
	return empty
}

// place is deliverLocked, timed for the merge's cost. The caller holds mu.
func (s *GPUSource) place(spans []GPUSpan, rep SourceReport) error {
	r := s.r
	if len(spans) == 0 {
		return s.deliverLocked(spans, rep)
	}
	t0 := timeline.Now()
	err := s.deliverLocked(spans, rep)
	r.placing.Add(uint64(timeline.Now()-t0), uint64(len(spans)))
	return err
}

// takeErr returns the source's error placing its spans, if any, once.
func (s *GPUSource) takeErr() error {
	s.r.inMu.Lock()
	defer s.r.inMu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// lock takes mu and applies what the inbox holds.
func (r *Recorder) lock() {
	r.mu.Lock()
	r.applyInbox()
}

// handIn adds a source's call to the inbox, which takes spans over, and
// starts the merge if none runs, or wakes it. It returns false, having
// added nothing, when the inbox has no room for spans: the caller places
// the call itself under the lock.
func (r *Recorder) handIn(e inboxEntry) bool {
	now := timeline.Now()
	r.inMu.Lock()
	if len(e.spans) > 0 && r.in.spans+len(e.spans) > maxInboxSpans {
		r.inMu.Unlock()
		return false
	}
	if !e.isSettle {
		r.inboxed++
	}
	if cap(e.spans) > 0 {
		e.src.spare, e.src.waiting = nil, true // until the merge places it
	}
	r.in.spans += len(e.spans)
	wake := r.leaveLocked(e, now)
	r.inMu.Unlock()
	if wake {
		r.wakeMerge()
	}
	return true
}

// leaveLocked adds e to the inbox and starts the merge if none runs; it
// reports whether the caller must wake it (wakeMerge, once inMu is
// released). The caller holds inMu.
func (r *Recorder) leaveLocked(e inboxEntry, now int64) bool {
	r.in.entries = append(r.in.entries, e)
	r.mergeStop = false
	r.startMerge()
	r.arrived(now)
	if e.isMark {
		r.lastMark = now
	}
	wake := r.asleep || r.markSleep && !e.isMark
	if wake {
		r.asleep, r.markSleep = false, false
		r.woken++
	}
	return wake
}

// startMerge starts the merge's goroutine unless it runs. The caller
// holds inMu.
func (r *Recorder) startMerge() {
	if !r.merging {
		r.merging = true
		go r.mergeFn() // a func value made once: go r.merge() would allocate its closure each time
	}
}

// merge applies the inbox whenever it has anything, until it is empty
// with no source open, or the recorder closes. It starts with the first
// source (GPUSource), so that no Deliver starts a goroutine (which may
// allocate), and ends with the last (GPUSource.Close) or at Close.
func (r *Recorder) merge() {
	for {
		r.lock()
		r.mu.Unlock()
		r.runAfter()
		r.runMarksDue()
		r.inMu.Lock()
		if len(r.in.entries) > 0 || r.marksDue.any() {
			r.inMu.Unlock()
			continue
		}
		if r.mergeStop || r.sources == 0 && !r.opt.FramesNoWait {
			r.merging, r.asleep = false, false
			r.inMu.Unlock()
			return
		}
		r.wait()
	}
}

// arrived notes a call left in the inbox at now, for the merge's polling.
// The caller holds inMu.
func (r *Recorder) arrived(now int64) {
	if r.lastIn != 0 {
		d := max(now-r.lastIn, 0)
		if r.gap == 0 {
			r.gap = d
		}
		r.gap += (d - r.gap) / 4
	}
	r.lastIn = now
}

// wait waits, on the merge's goroutine, for the next call left in the
// inbox. While calls keep coming it polls: it sleeps half the time
// between them (minPoll to maxPoll) and looks again, so that a source's
// Hand, on the application's goroutine, leaves its call without waking
// this goroutine, which would cost the caller a system call (about 10 µs
// a frame on a 2-core virtual machine). Once none came for idleGaps times
// that time, or when calls come more than 2*idleGaps*maxPoll (32 ms)
// apart, it sleeps until the next call wakes it; with FramesNoWait, while
// frame marks come, it looks again every markPoll instead (markSleep). A
// wake (stopMerge, at Close) ends a poll at once. The caller holds inMu,
// which wait releases.
func (r *Recorder) wait() {
	d := time.Duration(r.gap / 2)
	now := timeline.Now()
	if r.gap == 0 || d > idleGaps*maxPoll || now-r.lastIn > idleGaps*max(r.gap, int64(minPoll)) {
		if !r.opt.FramesNoWait || r.lastMark == 0 || now-r.lastMark > int64(markIdle) {
			r.asleep = true
			r.inMu.Unlock()
			<-r.mergeWake
			return
		}
		r.markSleep = true // marks still come: look again within markPoll
		d = markPoll
	} else {
		d = min(max(d, minPoll), maxPoll)
	}
	r.inMu.Unlock()
	r.sleep(d)
	r.inMu.Lock()
	r.markSleep = false
	r.inMu.Unlock()
}

// sleep waits, on the merge's goroutine, d or until a wake.
func (r *Recorder) sleep(d time.Duration) {
	if r.pollT == nil {
		r.pollT = time.NewTimer(d)
	} else {
		r.pollT.Reset(d)
	}
	select {
	case <-r.mergeWake:
		r.pollT.Stop()
	case <-r.pollT.C:
	}
}

// runAfter makes the AfterPlace calls due for the calls the inbox
// placed, whoever placed them: the merge's goroutine comes round for each
// call left in the inbox (woken, or polling), and runs this after every
// placing of its own.
// It runs on the merge's goroutine alone, outside mu.
func (r *Recorder) runAfter() {
	r.inMu.Lock()
	run := r.afterRun[:0]
	for _, s := range r.placed {
		s.afterDue = false
		run = append(run, s.after)
	}
	clear(r.placed)
	r.placed = r.placed[:0]
	r.inMu.Unlock()
	for _, fn := range run {
		fn(true)
	}
	clear(run) // they hold the sources' state
	r.afterRun = run[:0]
}

// stopMerge ends the merge's goroutine once the inbox is empty (Close);
// a call handed in later starts another.
func (r *Recorder) stopMerge() {
	r.inMu.Lock()
	stop := r.merging
	r.mergeStop = stop
	r.inMu.Unlock()
	if stop {
		r.wakeMerge()
	}
}

// wakeMerge wakes the merge's goroutine, unless a wake is pending.
func (r *Recorder) wakeMerge() {
	select {
	case r.mergeWake <- struct{}{}:
	default:
	}
}

// applyInbox applies the calls in the inbox, oldest first. The caller
// holds mu.
func (r *Recorder) applyInbox() {
	r.inMu.Lock()
	if len(r.in.entries) == 0 {
		r.inMu.Unlock()
		return
	}
	r.in, r.out = r.out, r.in
	r.inMu.Unlock()
	for i := range r.out.entries {
		e := &r.out.entries[i]
		if e.isMark {
			r.applyMark(e.mark)
			continue
		}
		if e.isSettle {
			e.src.settleLocked(e.settle)
			continue
		}
		err := e.src.place(e.spans, e.rep)
		r.inMu.Lock()
		if err != nil && e.src.err == nil {
			e.src.err = err
		}
		if cap(e.spans) > 0 {
			e.src.spare, e.src.waiting = e.spans[:0], false // for its next Hand
		}
		if e.src.after != nil && !e.src.afterDue {
			e.src.afterDue = true
			r.placed = append(r.placed, e.src)
		}
		r.inMu.Unlock()
	}
	clear(r.out.entries) // they hold sources and buffers
	r.out.entries = r.out.entries[:0]
	r.out.spans = 0
}

// MergeCost returns the time the recorder spent placing the spans its
// sources delivered, and how many it placed: the work Deliver leaves to
// the merge, with the small batches Deliver placed itself.
func (r *Recorder) MergeCost() (ns, spans uint64) {
	r.lock()
	defer r.mu.Unlock()
	return r.placing.Totals()
}

// settleCap is beforeNextFrame read without mu: never a later frame than
// it was at some moment during the call. last is read first: a frame
// begun and ended in between makes the answer older, never newer.
func (r *Recorder) settleCap() uint64 {
	last := r.last.Load()
	if f := r.frame.Load(); f != 0 {
		return f - 1
	}
	return last
}
