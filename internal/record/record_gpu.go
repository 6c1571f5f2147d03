package record

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// GPUSpan is a GPU zone handed to the recorder by the profiler, already on
// the host clock.
type GPUSpan struct {
	Name  timeline.NameID
	Start int64  // host CLOCK_MONOTONIC ns
	End   int64  // host CLOCK_MONOTONIC ns; End >= Start
	Frame uint64 // the frame whose command buffers recorded the zone
	ErrNs uint32 // the clock model's error bound
	// Depth is the zone's nesting level in its command buffer. It only
	// breaks ties: a parent and child with equal times keep their order.
	Depth uint16
	// Across marks a zone carried from one command buffer to a later one
	// of the queue: it spans the gaps between them, so it is no part of
	// its frame's GPU busy time, and it goes on lanes that hold only such
	// zones, nested among themselves: never the queue track, whose
	// command buffers' zones it crosses.
	Across bool
	// Track is the queue the zone ran on (QueueTrack), where its source
	// times zones of several queues (the same device's): 0 for the
	// source's own.
	Track timeline.TrackID
	// Key is the submission that carried the zone (see [OpenSpan.Submitted]);
	// 0 for none.
	Key uint64
	// Work is the zone's pipeline statistics, or why it has none; nil
	// where its context counts none. The span keeps it as it is.
	Work *timeline.Work
}

// queueState is one GPU queue: its track, its lanes, its clock error
// counter, and the sources that add its spans.
type queueState struct {
	q        timeline.Queue
	name     string
	errTrack timeline.TrackID
	lanes    []*lane // lanes[0] is the queue track
	sources  []*GPUSource
}

// MaxSettleFrames bounds how long a frame waits for a source that reports
// its progress (GPUSource.Settle) but stops doing so: MaxSettleFrames
// frames after it ended, a frame settles whatever the source says.
const MaxSettleFrames = 256

// GPUSource is one producer of a GPU queue's spans, a profiler's GPU
// context, that tells the recorder how far its results are in. While a
// queue has an open source, the recorder waits for its word before it
// samples a frame's GPU time and before a submission key gives up waiting
// for its zones, rather than Options.SettleFrames: however late results
// come, they are timed and linked. A queue may have several sources over
// a run, one after the other (a context closed and made again on the same
// queue) or at once; each waits only for the frames it may still deliver.
type GPUSource struct {
	r  *Recorder
	qs *queueState
	// settled is the newest frame up to which the source has delivered
	// or counted everything; guarded by r.mu.
	settled uint64
	closed  bool
	last    SourceReport // the last report Deliver had
	err     error        // the first error placing its spans not returned yet; guarded by r.inMu
	// spare is the buffer Hand gives back next, and waiting says the
	// source's last batch is in the inbox; guarded by r.inMu.
	spare   []GPUSpan
	waiting bool
	copied  []GPUSpan // Deliver's copy, used by the source's caller alone
	// after is AfterPlace's function, set before the source's first call
	// and only read after; afterDue says a batch the merge placed has not
	// had its call yet (guarded by r.inMu).
	after    func(merged bool)
	afterDue bool
}

// SourceReport is what a source says of the zones it handed out, as
// running totals, with every Deliver.
type SourceReport struct {
	// Issued counts the zones it began, refused ones included; Open, those
	// not read back or given up yet (in flight on the GPU).
	Issued, Open uint64
	// Lost counts its zones lost by cause (QueryLimit, NoFrame, Closed,
	// Unended, Unsubmitted, Pending, Overlapped, Uncalibrated) and its
	// misuse (Misuse).
	Lost timeline.Drops
	// Unlinked counts the zones it delivered without the submission key
	// their frame's submissions should have given them: arrows lost.
	Unlinked uint64
}

// Deliver adds the source's zones spans, as AddGPUSpans does, and its
// report, in one step: the recorder's Ledger and Drops never show the
// spans without the report, or the report without the spans. spans may
// be empty, to report refusals promptly.
//
// Deliver copies spans, and the caller may reuse them at once; Hand,
// which takes them over, says how the recorder places them.
func (s *GPUSource) Deliver(spans []GPUSpan, rep SourceReport) error {
	if s == nil {
		return nil
	}
	next, err := s.Hand(append(s.copied[:0], spans...), rep)
	s.copied = next
	return err
}

// Hand is Deliver without a copy: the recorder takes spans over and
// gives back an empty buffer for the source's next call, spans itself
// or the one it took over the call before. A source's calls are made one
// at a time.
//
// Hand leaves the call in the recorder's inbox and returns: the recorder
// places the spans on a goroutine of its own, and any of its methods that
// reads or changes what it holds places them first, so that no caller
// sees it without them. Hand places them itself when that costs less
// than waking that goroutine (offload.Ns, at the cost measured so far)
// and the recorder is idle; when the source's last batch still waits (the
// merge is behind: each source has at most one batch waiting, so that
// two buffers take turns and no third is made); and when the
// inbox is full (maxInboxSpans). The error is the first the recorder met
// placing this source's spans since the last call returned one (spans
// dropped, as AddGPUSpans says).
func (s *GPUSource) Hand(spans []GPUSpan, rep SourceReport) ([]GPUSpan, error) {
	if s == nil {
		return spans[:0], nil
	}
	r := s.r
	if r.inline(len(spans)) && r.tryLockIdle() {
		return s.placeHere(spans, rep)
	}
	r.inMu.Lock()
	next, waiting := s.spare, s.waiting
	r.inMu.Unlock()
	if cap(spans) == 0 {
		next, waiting = nil, false // the books alone: no buffer changes hands
	}
	if !waiting {
		if next == nil && cap(spans) > 0 {
			next = make([]GPUSpan, 0, cap(spans)) // the second buffer, once
		}
		if r.handIn(inboxEntry{src: s, spans: spans, rep: rep}) {
			return next, s.takeErr()
		}
	}
	r.lock()
	return s.placeHere(spans, rep)
}

// placeHere places a Hand on the caller's goroutine, releases mu, which
// the caller holds, and makes the source's AfterPlace call.
func (s *GPUSource) placeHere(spans []GPUSpan, rep SourceReport) ([]GPUSpan, error) {
	err := s.place(spans, rep)
	s.r.mu.Unlock()
	if s.after != nil {
		s.after(false)
	}
	return spans[:0], cmp.Or(s.takeErr(), err)
}

// AfterPlace gives the source a function that the recorder calls after
// placing the spans of each of its Hand and Deliver calls (once for
// several placed together), outside its lock: on the merge's goroutine
// (merged is true) for a call left in the inbox, else on the caller's
// goroutine. A source hands it work of its own that costs the caller
// less there, where the recorder's goroutine runs anyway, than on a
// goroutine woken for it. fn may run after the source closed, and must
// not call the recorder. Call AfterPlace before the source's first Hand
// or Deliver, and once.
func (s *GPUSource) AfterPlace(fn func(merged bool)) {
	if s != nil {
		s.after = fn
	}
}

// deliverLocked is Deliver under the lock. The caller holds mu.
func (s *GPUSource) deliverLocked(spans []GPUSpan, rep SourceReport) error {
	r := s.r
	old := s.last
	s.last = rep
	r.srcZones.Issued += rep.Issued - old.Issued
	r.srcZones.Open += rep.Open - old.Open
	r.srcUnlinked += rep.Unlinked - old.Unlinked
	d := books.Sub(rep.Lost, old.Lost)
	d.Flows += rep.Unlinked - old.Unlinked
	r.drops = books.Add(r.drops, d)
	if len(spans) == 0 {
		return nil
	}
	return r.addGPUSpans(s.qs.lanes[0].track, spans)
}

// GPUSource opens a source of the queue whose track is track (from
// QueueTrack). It has delivered nothing yet, and can deliver nothing of
// the frames that ended before it opened: it holds back only the frame in
// progress and later ones. nil for an unknown track.
func (r *Recorder) GPUSource(track timeline.TrackID) *GPUSource {
	r.lock()
	defer r.mu.Unlock()
	qs := r.queueOf[track]
	if qs == nil {
		return nil
	}
	s := &GPUSource{r: r, qs: qs, settled: r.beforeNextFrame()}
	qs.sources = append(qs.sources, s)
	r.sourced = true
	r.inMu.Lock()
	r.sources++
	r.startMerge()
	r.inMu.Unlock()
	return s
}

// beforeNextFrame is the newest frame that a source can no longer begin:
// the one before the frame in progress, or the last ended when none is.
// The caller holds mu.
func (r *Recorder) beforeNextFrame() uint64 {
	if r.open.ID != 0 {
		return r.open.ID - 1
	}
	return r.lastID
}

// Settle tells the recorder that every zone of frames up to frame has
// been added (AddGPUSpans) or counted as lost (AddDrops): no more will
// come from this source. A frame the source may still begin is not
// settled by it, whatever frame says: ^uint64(0) means everything so far.
// Settle never moves back. Methods on a nil or closed source do nothing.
// Like Deliver, it goes through the recorder's inbox, in order after the
// source's earlier Delivers, unless the recorder is idle.
func (s *GPUSource) Settle(frame uint64) {
	if s == nil {
		return
	}
	r := s.r
	if r.tryLockIdle() {
		s.settleLocked(frame)
		r.mu.Unlock()
		return
	}
	r.handIn(inboxEntry{src: s, settle: min(frame, r.settleCap()), isSettle: true})
}

// settleLocked is Settle under the lock, for a frame already clamped to
// one the source can no longer begin. The caller holds mu.
func (s *GPUSource) settleLocked(frame uint64) {
	if s.closed {
		return
	}
	frame = min(frame, s.r.beforeNextFrame())
	s.settled = max(s.settled, frame)
}

// Close says the source has delivered or counted everything it will:
// from now on its queue waits only for its other sources.
func (s *GPUSource) Close() {
	if s == nil {
		return
	}
	r := s.r
	r.lock()
	defer r.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.qs.sources = slices.DeleteFunc(s.qs.sources, func(x *GPUSource) bool { return x == s })
	r.inMu.Lock()
	r.sources--
	r.inMu.Unlock()
	r.wakeMerge() // with no source left, it ends
}

// gpuWatermark returns the newest frame up to which every open source has
// settled, or everything when sources were opened and none is open now;
// ok is false when no source was ever opened. The caller holds mu.
func (r *Recorder) gpuWatermark() (frame uint64, ok bool) {
	frame = ^uint64(0)
	for _, qs := range r.queues {
		for _, s := range qs.sources {
			frame = min(frame, s.settled)
		}
	}
	return frame, r.sourced
}

// QueueName is the name of a queue's track, e.g.
// "NVIDIA H200 / graphics queue 0.0".
func QueueName(q timeline.Queue) string {
	kind := q.Flags
	if kind == "" {
		kind = "gpu"
	}
	dev := q.Device
	if dev == "" {
		dev = "GPU"
	}
	return dev + " / " + kind + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
}

// QueueTrack returns the track of queue q, defining it on first use.
func (r *Recorder) QueueTrack(q timeline.Queue) timeline.TrackID {
	r.lock()
	defer r.mu.Unlock()
	return r.queueLocked(q)
}

func (r *Recorder) queueLocked(q timeline.Queue) timeline.TrackID {
	if qs := r.queues[q]; qs != nil {
		return qs.lanes[0].track
	}
	qs := &queueState{q: q, name: QueueName(q)}
	id := r.addTrack(timeline.Track{Kind: timeline.TrackGPUQueue, Name: qs.name, Queue: q, Order: int32(len(r.queues))})
	qs.lanes = []*lane{{track: id}}
	r.queues[q] = qs
	r.queueOf[id] = qs
	return id
}

// ErrUnknownTrack is returned for a track ID the recorder did not define
// for the use asked.
var ErrUnknownTrack = errors.New("timeline: unknown track")

// AddGPUSpans adds GPU zones of the queue whose track is track (from
// QueueTrack). Zones may come in any batches and order; each goes on a
// lane of the queue where it nests properly (see placeGPU), a new lane
// when none fits. Zones with End < Start, an unknown name or no lane left
// (Options.MaxLanes), and all zones given for an unknown track, are
// dropped, counted in Drops.GPUSpans, and reported in the error; the
// others are kept.
func (r *Recorder) AddGPUSpans(track timeline.TrackID, spans []GPUSpan) error {
	if len(spans) == 0 {
		return nil
	}
	r.lock()
	defer r.mu.Unlock()
	r.handed += uint64(len(spans))
	return r.addGPUSpans(track, spans)
}

// addGPUSpans is AddGPUSpans. The caller holds mu.
func (r *Recorder) addGPUSpans(track timeline.TrackID, spans []GPUSpan) error {
	qs := r.queueOf[track]
	if qs == nil {
		r.drops.GPUSpans += uint64(len(spans))
		return fmt.Errorf("%w %d for %d GPU spans", ErrUnknownTrack, track, len(spans))
	}
	buf := spans // mostly they come sorted: then placed as they are
	if !gpuSorted(spans) {
		buf = append(r.gpuScratch[:0], spans...)
		slices.SortFunc(buf, cmpGPUSpan)
		r.gpuScratch = buf[:0]
	}
	var bad, full int
	for i := range buf {
		g := &buf[i]
		q := qs
		if g.Track != 0 && g.Track != track {
			q = r.queueOf[g.Track]
		}
		if q == nil || g.End < g.Start || int(g.Name) >= len(r.names) {
			bad++
			continue
		}
		if !r.placeGPU(q, g) {
			full++
		}
	}
	r.drops.GPUSpans += uint64(bad + full)
	r.items[books.ZoneBook].stored += uint64(len(buf) - bad - full) // placeGPU's, counted at once
	r.maybeEvict()
	if bad > 0 || full > 0 {
		return fmt.Errorf("timeline: %d GPU spans dropped on %q: %d with End < Start or an unknown name, %d with no free lane", bad+full, qs.name, bad, full)
	}
	return nil
}

// placeGPU puts g on a lane of qs where it nests properly: the lane where
// it nests deepest, so that a zone stays with the zone containing it, and
// the first such lane on a tie; a new lane when none fits and one is
// allowed. The caller holds mu, and counts the span stored.
func (r *Recorder) placeGPU(qs *queueState, g *GPUSpan) bool {
	var l *lane
	var pos int
	var buf [2]laneSpan // the best fit so far and the next lane's, swapped
	ls, try := &buf[0], &buf[1]
	for _, c := range qs.lanes {
		if c.across != g.Across {
			continue
		}
		if p, ok := c.fit(g.Start, g.End, try); ok && (l == nil || try.depth > ls.depth) {
			l, pos = c, p
			ls, try = try, ls
		}
	}
	if l == nil {
		if len(qs.lanes) >= r.opt.MaxLanes {
			return false
		}
		n := len(qs.lanes)
		name := qs.name + " lane " + strconv.Itoa(n)
		if g.Across {
			name = qs.name + " across command buffers " + strconv.Itoa(n)
		}
		l = &lane{track: r.addTrack(timeline.Track{
			Kind: timeline.TrackGPULane, Name: name,
			Parent: qs.lanes[0].track, Order: int32(n), Queue: qs.q, Lane: int32(n), Across: g.Across,
		}), across: g.Across}
		qs.lanes = append(qs.lanes, l)
		pos = 0
		ls.set(g.Start, g.End, 0, 0, 0)
	}
	l.insert(pos, ls)
	it := r.newSpan()
	it.Track, it.Name, it.Start, it.End = l.track, g.Name, g.Start, g.End
	it.Frame, it.Depth, it.ErrNs, it.Work = g.Frame, ls.depth, g.ErrNs, g.Work
	if g.Work != nil && g.Work.Missing != timeline.WorkCounted {
		r.drops.Work++
	}
	if g.Key != 0 {
		r.linkGPU(g.Key, it.seq, g.Frame)
	}
	if ls.depth == 0 && !g.Across {
		r.noteGPUFrame(g.Frame, g.Start, g.End)
	}
	return true
}
