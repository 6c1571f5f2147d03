package timeline

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Item flags of a stored span.
const (
	sentFlag     uint8 = 1 << iota // in a dump or a sink batch
	streamedFlag                   // in a sink batch
)

// minCompact is the store size below which nothing is evicted early.
const minCompact = 4096

// spanItem is a stored span with its sequence number, which flows refer
// to, and the submission keys still holding it back from the sink.
type spanItem struct {
	Span
	seq   uint64
	holds int32
	flags uint8
}

// flowItem links two stored spans by sequence number.
type flowItem struct {
	from, to uint64
	streamed bool
}

// store is what the recorder holds in memory. Spans are in sequence
// order. Everything before a stream cursor has gone to the sink.
type store struct {
	seq       uint64
	spans     []spanItem
	flows     []flowItem
	frames    []Frame
	samples   []Sample
	cals      []Calibration
	spanCur   int // first span not streamed
	frameCur  int
	sampleCur int
	calCur    int
	compactAt int
}

// appendSpan stores s and returns its sequence number. The caller holds
// mu.
func (r *Recorder) appendSpan(s Span) uint64 {
	r.seq++
	r.spans = append(r.spans, spanItem{Span: s, seq: r.seq})
	return r.seq
}

// spanIndex returns the store index of the span with sequence seq, or -1.
func (st *store) spanIndex(seq uint64) int {
	i := sort.Search(len(st.spans), func(i int) bool { return st.spans[i].seq >= seq })
	if i < len(st.spans) && st.spans[i].seq == seq {
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
		case len(r.frames) > 0 && r.frames[len(r.frames)-1].ID >= w.minFrame:
			i := sort.Search(len(r.frames), func(i int) bool { return r.frames[i].ID >= w.minFrame })
			w.frameSince = r.frames[i].Start
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

func (w window) keepSpan(s *Span) bool {
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

func (w window) keepFrame(f *Frame) bool {
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

// maybeCompact evicts once the store has doubled since the last time, so
// memory stays within about twice the window. The caller holds mu.
func (r *Recorder) maybeCompact() {
	if len(r.spans) >= r.compactAt || len(r.samples) >= r.compactAt ||
		len(r.frames) >= r.compactAt || len(r.cals) >= r.compactAt {
		r.compact(Now())
	}
}

// compact drops what is outside the window (or, with a sink and no
// window, what the sink already has), counting in Drops.Evicted the spans
// that went nowhere. The caller holds mu.
func (r *Recorder) compact(now int64) {
	w := r.windowAt(now)
	sink := r.opt.Sink != nil
	// stays reports whether an item stays: the sink has not had it yet,
	// or it is in the window, or there is neither window nor sink.
	stays := func(unstreamed, in bool) bool {
		switch {
		case sink && unstreamed:
			return true
		case w.on():
			return in
		}
		return !sink
	}
	keep := func(i, cur int, in bool) bool { return stays(i >= cur, in) }

	kept, cur := r.spans[:0], 0
	for i := range r.spans {
		it := r.spans[i]
		if stays(it.flags&streamedFlag == 0, w.keepSpan(&it.Span)) {
			if i < r.spanCur {
				cur++
			}
			kept = append(kept, it)
			continue
		}
		if it.flags&sentFlag == 0 {
			r.drops.Evicted++
		}
	}
	clear(r.spans[len(kept):])
	r.spans = kept
	if over := len(r.spans) - r.opt.MaxSpans; over > 0 {
		for i := range over {
			if r.spans[i].flags&sentFlag == 0 {
				r.drops.Evicted++
			}
		}
		r.spans = append(r.spans[:0], r.spans[over:]...)
		cur -= over
		if cur < 0 {
			cur = 0
		}
	}
	r.spanCur = cur

	fk, fcur := r.frames[:0], 0
	for i := range r.frames {
		if keep(i, r.frameCur, w.keepFrame(&r.frames[i])) {
			if i < r.frameCur {
				fcur++
			}
			fk = append(fk, r.frames[i])
		}
	}
	r.frames, r.frameCur = fk, fcur

	sk, scur := r.samples[:0], 0
	for i := range r.samples {
		if keep(i, r.sampleCur, w.keepTime(r.samples[i].Time)) {
			if i < r.sampleCur {
				scur++
			}
			sk = append(sk, r.samples[i])
		}
	}
	r.samples, r.sampleCur = sk, scur

	ck, ccur := r.cals[:0], 0
	for i := range r.cals {
		if keep(i, r.calCur, w.keepTime(r.cals[i].Time)) {
			if i < r.calCur {
				ccur++
			}
			ck = append(ck, r.cals[i])
		}
	}
	r.cals, r.calCur = ck, ccur

	fl := r.flows[:0]
	for _, f := range r.flows {
		if f.streamed && !w.on() {
			continue
		}
		if r.spanIndex(f.from) >= 0 && r.spanIndex(f.to) >= 0 {
			fl = append(fl, f)
		}
	}
	r.flows = fl

	n := max(2*max(len(r.spans), len(r.samples), len(r.frames), len(r.cals)), minCompact)
	r.compactAt = min(n, r.opt.MaxSpans+1)
}

// Dump returns what the recorder holds now as a Trace: with a window, the
// window ending now; without one, everything not yet handed to a sink.
// Depths are those within the dump.
// Everything in it counts as delivered, so it is not counted in
// Drops.Evicted when it ages out later.
func (r *Recorder) Dump() *Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectCPU()
	return r.dumpAt(Now())
}

// dumpAt is Dump at host time now. The caller holds mu.
func (r *Recorder) dumpAt(now int64) *Trace {
	r.compact(now)
	w := r.windowAt(now)
	tr := r.header()
	tr.Spans = make([]Span, 0, len(r.spans))
	seqs := make([]uint64, 0, len(r.spans))
	for i := range r.spans {
		it := &r.spans[i]
		if w.on() && !w.keepSpan(&it.Span) {
			continue
		}
		it.flags |= sentFlag
		tr.Spans = append(tr.Spans, it.Span)
		seqs = append(seqs, it.seq)
	}
	for _, f := range r.flows {
		from, ok1 := indexOf(seqs, f.from)
		to, ok2 := indexOf(seqs, f.to)
		if ok1 && ok2 {
			tr.Flows = append(tr.Flows, Flow{From: from, To: to})
		}
	}
	for i := range r.frames {
		if !w.on() || w.keepFrame(&r.frames[i]) {
			tr.Frames = append(tr.Frames, r.frames[i])
		}
	}
	if r.open.ID != 0 {
		tr.Frames = append(tr.Frames, r.open)
	}
	for i := range r.samples {
		if !w.on() || w.keepTime(r.samples[i].Time) {
			tr.Samples = append(tr.Samples, r.samples[i])
		}
	}
	for i := range r.cals {
		if !w.on() || w.keepTime(r.cals[i].Time) {
			tr.Calibrations = append(tr.Calibrations, r.cals[i])
		}
	}
	tr.Drops = r.totalDrops()
	if w.on() || r.opt.Sink != nil {
		renest(tr.Spans) // parents may have aged out or gone to the sink
	}
	return tr
}

// renest sets each span's Depth to its nesting depth among the spans
// given, so that a window whose oldest parents aged out is consistent.
func renest(spans []Span) {
	byTrack := map[TrackID][]int{}
	for i := range spans {
		byTrack[spans[i].Track] = append(byTrack[spans[i].Track], i)
	}
	var stack []*Span
	for _, idx := range byTrack {
		slices.SortFunc(idx, func(a, b int) int {
			x, y := &spans[a], &spans[b]
			switch {
			case x.Start != y.Start:
				return cmp.Compare(x.Start, y.Start)
			case x.End != y.End:
				return cmp.Compare(y.End, x.End)
			}
			return cmp.Compare(x.Depth, y.Depth)
		})
		stack = stack[:0]
		for _, i := range idx {
			s := &spans[i]
			for len(stack) > 0 && stack[len(stack)-1].End <= s.Start && stack[len(stack)-1].Start != s.Start {
				stack = stack[:len(stack)-1]
			}
			s.Depth = uint16(min(len(stack), int(^uint16(0))))
			stack = append(stack, s)
		}
	}
}

// header returns a Trace holding copies of the name and track tables.
// The caller holds mu.
func (r *Recorder) header() *Trace {
	return &Trace{
		Process: r.opt.Process,
		Names:   append([]string(nil), r.names...),
		Tracks:  append([]Track(nil), r.tracks...),
	}
}

// indexOf finds seq in the sorted seqs.
func indexOf(seqs []uint64, seq uint64) (int, bool) {
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seq })
	return i, i < len(seqs) && seqs[i] == seq
}
