package record

import (
	"math"
	"slices"
	"sort"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// Item flags of a stored span.
const (
	sentFlag     uint8 = 1 << iota // in a dump or a sink batch
	streamedFlag                   // in a sink batch
	lostFlag                       // first sent in a sink batch that failed: booked as lost (Book.Sink)
)

// evictChunk is the least an eviction step may let go of each kind, so
// that a backlog drains even while little new comes.
const evictChunk = 256

// spanItem is a stored span with its sequence number, which flows refer
// to, and the submission keys still holding it back from the sink.
type spanItem struct {
	timeline.Span
	seq   uint64
	holds int32
	flags uint8
}

// flowItem links two stored spans by sequence number.
type flowItem struct {
	from, to uint64
	streamed bool // in a sink batch, or never will be (FlowsSplit)
	sent     bool // in a Dump
	lost     bool // first sent in a sink batch that failed: booked as lost
	split    bool // its ends went to different sink batches: booked as lost (Stats.FlowsSplit)
}

// held is a deque of frames, samples or calibrations with the two marks
// that tell whether an item was delivered.
type held[T any] struct {
	deque[T]
	cur    uint64 // absolute index of the first item not in a sink batch
	dumped uint64 // absolute index below which items were in a Dump
}

// pop lets the front item go and reports whether it was lost: neither in
// a sink batch nor in a Dump.
func (h *held[T]) pop() (lost bool) {
	a := h.base
	h.popFront()
	return a >= h.cur && a >= h.dumped
}

// takeNew appends to dst the items not yet in a sink batch and marks
// them as in one.
func (h *held[T]) takeNew(dst []T) []T {
	for a := max(h.cur, h.base); a < h.end(); a++ {
		dst = append(dst, *h.abs(a))
	}
	h.cur = h.end()
	return dst
}

// evict lets go, from the front, at most budget items that may go (see
// stays), stopping at the first that stays. It returns how many went and
// how many of those were lost.
func (h *held[T]) evict(budget int, stays func(unstreamed bool, it *T) bool) (gone, lost int) {
	for gone < budget && h.n > 0 && !stays(h.base >= h.cur, h.at(0)) {
		if h.pop() {
			lost++
		}
		gone++
	}
	return gone, lost
}

// filter keeps, in order, the items for which stays is true and returns
// how many of the others were lost.
func (h *held[T]) filter(stays func(unstreamed bool, it *T) bool) (lost int) {
	w, cur := 0, h.base
	for i := range h.n {
		a, it := h.base+uint64(i), h.at(i)
		if stays(a >= h.cur, it) {
			if a < h.cur {
				cur++
			}
			if w != i {
				*h.at(w) = *it
			}
			w++
			continue
		}
		if a >= h.cur && a >= h.dumped {
			lost++
		}
	}
	h.truncate(w)
	h.cur = cur
	return lost
}

// ItemCounts counts the items of a Trace by kind.
type ItemCounts struct {
	Spans, Flows, Frames, Samples, Calibrations uint64
}

func (c ItemCounts) add(o ItemCounts) ItemCounts {
	return ItemCounts{c.Spans + o.Spans, c.Flows + o.Flows, c.Frames + o.Frames, c.Samples + o.Samples, c.Calibrations + o.Calibrations}
}

// store is what the recorder holds in memory, oldest first, each kind in
// a deque of at most Options.MaxSpans items. Spans are in sequence order.
type store struct {
	seq     uint64
	spans   deque[spanItem]
	flows   deque[flowItem]
	frames  held[timeline.Frame]
	samples held[timeline.Sample]
	cals    held[timeline.Calibration]
	spanCur int    // index of the first span not streamed
	flowCur uint64 // absolute index of the first flow not streamed
	added   int    // items stored since the last eviction step
	// evicted counts what left memory undelivered: Drops.Evicted,
	// Frames, Samples and part of Flows.
	evicted ItemCounts
	// moved counts the items eviction let go or moved: the work it did,
	// for the tests that bound it.
	moved uint64
}

// appendSpan stores s and returns its sequence number, first letting the
// oldest span go when Options.MaxSpans are held. The caller holds mu.
func (r *Recorder) appendSpan(s timeline.Span) uint64 {
	it := r.newSpan()
	it.Span = s
	r.countSpan(s.Track, stored)
	return it.seq
}

// newSpan stores a zero span with the next sequence number, first letting
// the oldest span go when Options.MaxSpans are held, and returns it for
// the caller to fill and count (countSpan). The caller holds mu.
func (r *Recorder) newSpan() *spanItem {
	if r.spans.len() >= r.opt.MaxSpans {
		r.popSpan()
	}
	r.seq++
	r.added++
	it := r.spans.pushSlot()
	it.seq = r.seq
	return it
}

// popSpan lets the oldest span go. The caller holds mu.
func (r *Recorder) popSpan() {
	if it := r.spans.at(0); it.flags&sentFlag == 0 {
		r.evicted.Spans++
		r.countSpan(it.Track, evictedN)
	}
	r.spans.popFront()
	if r.spanCur > 0 {
		r.spanCur--
	}
	r.moved++
}

// appendFlow stores a flow. The caller holds mu.
func (r *Recorder) appendFlow(from, to uint64) {
	if r.flows.len() >= r.opt.MaxSpans {
		r.popFlow()
	}
	r.flows.push(flowItem{from: from, to: to})
	r.items[books.FlowBook].stored++
	r.added++
}

// popFlow lets the oldest flow go. The caller holds mu.
func (r *Recorder) popFlow() {
	if f := r.flows.at(0); !f.streamed && !f.sent {
		r.evicted.Flows++
	}
	r.flows.popFront()
	r.moved++
}

// appendFrame, appendSample and appendCal store an item, first letting
// the oldest of its kind go when Options.MaxSpans are held. The caller
// holds mu.
func (r *Recorder) appendFrame(f timeline.Frame) {
	pushHeld(&r.store, &r.frames, f, r.opt.MaxSpans, &r.evicted.Frames)
}

func (r *Recorder) appendSample(s timeline.Sample) {
	pushHeld(&r.store, &r.samples, s, r.opt.MaxSpans, &r.evicted.Samples)
}

func (r *Recorder) appendCal(c timeline.Calibration) {
	pushHeld(&r.store, &r.cals, c, r.opt.MaxSpans, &r.evicted.Calibrations)
}

// pushHeld appends v to h, first letting the oldest go when max are held,
// counted in *lost when it was never delivered.
func pushHeld[T any](st *store, h *held[T], v T, max int, lost *uint64) {
	if h.n >= max {
		if h.pop() {
			*lost++
		}
		st.moved++
	}
	h.deque.push(v)
	st.added++
}

// spanIndex returns the store index of the span with sequence seq, or -1.
func (st *store) spanIndex(seq uint64) int {
	i := st.spans.search(func(it *spanItem) bool { return it.seq >= seq })
	if i < st.spans.len() && st.spans.at(i).seq == seq {
		return i
	}
	return -1
}

// window is what the flight recorder keeps at one moment.
type window struct {
	frames     bool   // a frame window applies
	minFrame   uint64 // oldest frame kept
	frameSince int64  // data outside frames is kept from here
	timed      bool   // a duration window applies
	cutoff     int64  // data must end at or after cutoff
}

func (w window) on() bool { return w.frames || w.timed }

// windowAt computes the window at host time now. The caller holds mu.
func (r *Recorder) windowAt(now int64) window {
	var w window
	if n := r.opt.WindowFrames; n > 0 {
		w.frames = true
		w.minFrame = 1
		if r.lastEnded >= uint64(n) {
			w.minFrame = r.lastEnded - uint64(n) + 1
		}
		w.frameSince = math.MinInt64
		switch {
		case r.frames.len() > 0 && r.frames.last().ID >= w.minFrame:
			i := r.frames.search(func(f *timeline.Frame) bool { return f.ID >= w.minFrame })
			w.frameSince = r.frames.at(i).Start
		case r.open.ID != 0:
			w.frameSince = r.open.Start
		case r.lastEnded > 0:
			w.frameSince = r.lastEndTime
		}
	}
	if d := r.opt.WindowDuration; d > 0 {
		w.timed = true
		w.cutoff = now - int64(d)
	}
	return w
}

func (w window) keepSpan(s *timeline.Span) bool {
	if w.frames {
		if s.Frame != 0 {
			if s.Frame < w.minFrame {
				return false
			}
		} else if s.End < w.frameSince {
			return false
		}
	}
	return !w.timed || s.End >= w.cutoff
}

func (w window) keepFrame(f *timeline.Frame) bool {
	if w.frames && f.ID < w.minFrame {
		return false
	}
	return !w.timed || f.End >= w.cutoff
}

func (w window) keepTime(t int64) bool {
	if w.frames && t < w.frameSince {
		return false
	}
	return !w.timed || t >= w.cutoff
}

// stays reports whether an item stays in memory: the sink has not had it
// yet, or it is in the window w, or there is neither window nor sink.
func stays(sink, unstreamed bool, w window, in bool) bool {
	switch {
	case sink && unstreamed:
		return true
	case w.on():
		return in
	}
	return !sink
}

// maybeEvict runs an eviction step once enough was stored since the last
// one. The caller holds mu.
func (r *Recorder) maybeEvict() {
	if r.added >= evictChunk {
		r.evict(timeline.Now())
	}
}

// evict lets go, oldest first, what may go (see stays): of each kind at
// most twice what was stored since the last step, plus evictChunk, and
// only from the front, up to the first item that stays. Its work is thus
// bounded by what was recorded since the last step, never by what is
// held; what stays behind an item that stays waits for a later step, for
// Dump, or for Options.MaxSpans. The caller holds mu.
func (r *Recorder) evict(now int64) {
	budget := 2*r.added + evictChunk
	r.added = 0
	sink := r.opt.Sink != nil
	w := r.windowAt(now)
	if !sink && !w.on() {
		return // everything stays, up to Options.MaxSpans
	}
	for n := 0; n < budget && r.spans.len() > 0; n++ {
		it := r.spans.at(0)
		if stays(sink, it.flags&streamedFlag == 0, w, w.keepSpan(&it.Span)) {
			break
		}
		r.popSpan()
	}
	first := uint64(math.MaxUint64)
	if r.spans.len() > 0 {
		first = r.spans.at(0).seq
	}
	for n := 0; n < budget && r.flows.len() > 0; n++ {
		f := r.flows.at(0)
		if !(sink && f.streamed && !w.on()) && min(f.from, f.to) >= first {
			break // neither streamed without a window nor without a span
		}
		r.popFlow()
	}
	r.evictHeld(budget, sink, w)
}

// evictHeld is evict for frames, samples and calibrations. The caller
// holds mu.
func (r *Recorder) evictHeld(budget int, sink bool, w window) {
	n, lost := r.frames.evict(budget, func(unstreamed bool, f *timeline.Frame) bool {
		return stays(sink, unstreamed, w, w.keepFrame(f))
	})
	r.moved += uint64(n)
	r.evicted.Frames += uint64(lost)
	n, lost = r.samples.evict(budget, func(unstreamed bool, s *timeline.Sample) bool {
		return stays(sink, unstreamed, w, w.keepTime(s.Time))
	})
	r.moved += uint64(n)
	r.evicted.Samples += uint64(lost)
	n, lost = r.cals.evict(budget, func(unstreamed bool, c *timeline.Calibration) bool {
		return stays(sink, unstreamed, w, w.keepTime(c.Time))
	})
	r.moved += uint64(n)
	r.evicted.Calibrations += uint64(lost)
}

// compact lets go of everything that may go (see stays), wherever it is
// held, counting what went undelivered: the work of a Dump, which is in
// proportion to what is held anyway. The caller holds mu.
func (r *Recorder) compact(now int64) {
	w := r.windowAt(now)
	sink := r.opt.Sink != nil
	r.added = 0

	kept, cur := 0, 0
	for i := range r.spans.len() {
		it := r.spans.at(i)
		if stays(sink, it.flags&streamedFlag == 0, w, w.keepSpan(&it.Span)) {
			if i < r.spanCur {
				cur++
			}
			if kept != i {
				*r.spans.at(kept) = *it
			}
			kept++
			continue
		}
		if it.flags&sentFlag == 0 {
			r.evicted.Spans++
			r.countSpan(it.Track, evictedN)
		}
	}
	r.spans.truncate(kept)
	r.spanCur = cur

	kept = 0
	for i := range r.flows.len() {
		f := r.flows.at(i)
		if !(f.streamed && !w.on()) && r.spanIndex(f.from) >= 0 && r.spanIndex(f.to) >= 0 {
			if kept != i {
				*r.flows.at(kept) = *f
			}
			kept++
			continue
		}
		if !f.streamed && !f.sent {
			r.evicted.Flows++
		}
	}
	r.flows.truncate(kept)
	r.flowCur = r.flows.base
	for r.flowCur < r.flows.end() && r.flows.abs(r.flowCur).streamed {
		r.flowCur++
	}

	r.evicted.Frames += uint64(r.frames.filter(func(unstreamed bool, f *timeline.Frame) bool {
		return stays(sink, unstreamed, w, w.keepFrame(f))
	}))
	r.evicted.Samples += uint64(r.samples.filter(func(unstreamed bool, s *timeline.Sample) bool {
		return stays(sink, unstreamed, w, w.keepTime(s.Time))
	}))
	r.evicted.Calibrations += uint64(r.cals.filter(func(unstreamed bool, c *timeline.Calibration) bool {
		return stays(sink, unstreamed, w, w.keepTime(c.Time))
	}))
}

// Dump returns what the recorder holds now as a Trace: with a window, the
// window ending now; without one, everything held (the newest
// Options.MaxSpans of each kind) not yet handed to a sink.
// Depths are those within the dump.
// Everything in it counts as delivered, so it is not counted in
// Drops.Evicted when it ages out later.
func (r *Recorder) Dump() *timeline.Trace {
	r.lock()
	defer r.mu.Unlock()
	r.collectCPU()
	return r.dumpAt(timeline.Now())
}

// dumpAt is Dump at host time now. The caller holds mu.
func (r *Recorder) dumpAt(now int64) *timeline.Trace {
	r.compact(now)
	w := r.windowAt(now)
	tr := r.header()
	tr.Spans = make([]timeline.Span, 0, r.spans.len())
	seqs := make([]uint64, 0, r.spans.len())
	for i := range r.spans.len() {
		it := r.spans.at(i)
		if w.on() && !w.keepSpan(&it.Span) {
			continue
		}
		switch {
		case it.flags&sentFlag == 0:
			r.countSpan(it.Track, delivered)
		case it.flags&lostFlag != 0: // delivered after all
			r.countSpan(it.Track, unlost)
			it.flags &^= lostFlag
		}
		it.flags |= sentFlag
		tr.Spans = append(tr.Spans, it.Span)
		seqs = append(seqs, it.seq)
	}
	for i := range r.flows.len() {
		f := r.flows.at(i)
		from, ok1 := indexOf(seqs, f.from)
		to, ok2 := indexOf(seqs, f.to)
		if ok1 && ok2 {
			tr.Flows = append(tr.Flows, timeline.Flow{From: from, To: to})
			switch {
			case f.lost: // delivered after all
				unlost(&r.items[books.FlowBook])
			case f.split:
				r.items[books.FlowBook].delivered++
				r.stats.FlowsSplit--
			case !f.sent && !f.streamed:
				r.items[books.FlowBook].delivered++
			}
			f.sent, f.lost, f.split = true, false, false
		}
	}
	tr.Frames = dumpHeld(&r.frames, tr.Frames, func(f *timeline.Frame) bool { return !w.on() || w.keepFrame(f) })
	if r.open.ID != 0 {
		tr.Frames = append(tr.Frames, r.open)
	}
	tr.Samples = dumpHeld(&r.samples, tr.Samples, func(s *timeline.Sample) bool { return !w.on() || w.keepTime(s.Time) })
	tr.Calibrations = dumpHeld(&r.cals, tr.Calibrations, func(c *timeline.Calibration) bool { return !w.on() || w.keepTime(c.Time) })
	tr.Drops = r.totalDrops()
	tr.Ledger = r.ledger(tr.Drops)
	if w.on() || r.opt.Sink != nil {
		renest(tr.Spans) // parents may have aged out or gone to the sink
	}
	return tr
}

// dumpHeld appends to dst the items of h for which in is true, and marks
// everything h holds as dumped: compact left only those, and the ones
// kept for the sink, which will be delivered there.
func dumpHeld[T any](h *held[T], dst []T, in func(*T) bool) []T {
	for i := range h.n {
		if it := h.at(i); in(it) {
			dst = append(dst, *it)
		}
	}
	h.dumped = h.end()
	return dst
}

// renest sets each span's Depth to its nesting depth among the spans
// given, so that a window whose oldest parents aged out is consistent.
func renest(spans []timeline.Span) {
	byTrack := map[timeline.TrackID][]int{}
	for i := range spans {
		byTrack[spans[i].Track] = append(byTrack[spans[i].Track], i)
	}
	var stack []*timeline.Span
	for _, idx := range byTrack {
		slices.SortFunc(idx, func(a, b int) int { return timeline.CompareSpans(&spans[a], &spans[b]) })
		stack = stack[:0]
		for _, i := range idx {
			s := &spans[i]
			for len(stack) > 0 && !timeline.Encloses(stack[len(stack)-1], s) {
				stack = stack[:len(stack)-1]
			}
			s.Depth = uint16(min(len(stack), int(^uint16(0))))
			stack = append(stack, s)
		}
	}
}

// header returns a Trace holding copies of the name and track tables.
// The caller holds mu.
func (r *Recorder) header() *timeline.Trace {
	return &timeline.Trace{
		Process: r.opt.Process,
		Names:   append([]string(nil), r.names...),
		Tracks:  append([]timeline.Track(nil), r.tracks...),
	}
}

// indexOf finds seq in the sorted seqs.
func indexOf(seqs []uint64, seq uint64) (int, bool) {
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seq })
	return i, i < len(seqs) && seqs[i] == seq
}
