package chrome

import (
	"slices"

	"github.com/framescope/framescope/timeline"
)

type interval struct{ start, end int64 }

// maxWritten bounds trackState.written; older intervals are forgotten.
const maxWritten = 256

// maxDepthSeen bounds trackState.lastAt.
const maxDepthSeen = 256

// parentWritten reports whether the parent of s was written already.
func (ts *trackState) parentWritten(s *timeline.Span) bool {
	d := int(s.Depth) - 1
	return d >= 0 && d < len(ts.lastAt) && ts.lastAt[d].End >= ts.lastAt[d].Start && timeline.Encloses(&ts.lastAt[d], s)
}

// wrote records a span just written.
func (ts *trackState) wrote(s *timeline.Span) {
	d := int(s.Depth)
	if d >= maxDepthSeen {
		return
	}
	for len(ts.lastAt) <= d {
		ts.lastAt = append(ts.lastAt, timeline.Span{Start: 0, End: -1})
	}
	ts.lastAt[d] = *s
}

// claim checks span s, about to be written outside any span of its
// batch, against the outermost spans written before. If it may be
// written, claim records it and returns true.
func (ts *trackState) claim(s *timeline.Span) bool {
	w := ts.written
	// First interval ending after s starts.
	lo, _ := slices.BinarySearchFunc(w, s.Start, func(iv interval, t int64) int {
		if iv.end <= t {
			return -1
		}
		return 1
	})
	hi := lo
	for hi < len(w) && w[hi].start < s.End {
		if w[hi].start <= s.Start && s.End <= w[hi].end {
			return true // inside a span written before
		}
		if w[hi].start < s.Start || w[hi].end > s.End {
			return false // partly over one
		}
		hi++
	}
	iv := interval{s.Start, s.End}
	if hi > lo {
		w[lo] = iv
		w = append(w[:lo+1], w[hi:]...)
	} else {
		w = slices.Insert(w, lo, iv)
	}
	if len(w) > maxWritten {
		w = append(w[:0], w[len(w)-maxWritten/2:]...)
	}
	ts.written = w
	return true
}

type flowMark struct {
	span int32
	in   bool
	// late: this (in) end is written at its span's end instead of its
	// start, where it still binds to the span and, the two spans starting
	// together, follows the out end in time.
	late bool
	// rev: the flow is written from its To span to its From span, which
	// starts later (see reversedFlow).
	rev bool
	id  uint64
}

// reversedFlow names the flow events of a flow written backwards: the
// trace processor links a flow only forwards in time, so a flow whose To
// span starts before its From span (a GPU zone timed, within the clock
// model's error bound, before its submit) is written from To to From, as
// the Perfetto writer does, under this name; Read turns it back.
const reversedFlow = "reversed flow"

// flowEnds decides how the flow from span a to span b is written: which
// span its out end is on, and whether its in end waits for its span's end.
// The out end must come first in time: a flow starting at the later span
// is reversed. When both start together, the in end moves to its span's
// end; if both are zero-length, the span written first (by track, then
// as emit orders them) takes the out end.
func flowEnds(a, b *timeline.Span) (rev, late bool) {
	switch {
	case a.Start != b.Start:
		return b.Start < a.Start, false
	case b.End > b.Start:
		return false, true
	case a.End > a.Start:
		return true, true
	case a.Track != b.Track:
		return b.Track < a.Track, false
	}
	return timeline.CompareSpans(b, a) < 0, false
}

// cand is a span about to be written, with its flow ends.
type cand struct {
	s     timeline.Span
	flows []flowMark
}

// writeSpans groups the batch's spans by track, joins them with the spans
// held from earlier batches, and writes those whose ancestors that could
// share their start time are known.
func (w *Writer) writeSpans(b *timeline.Trace) {
	n := len(b.Spans)
	if n == 0 {
		return
	}
	// Flow ends, sorted by span index.
	w.marks = w.marks[:0]
	for _, f := range b.Flows {
		if f.From < 0 || f.From >= n || f.To < 0 || f.To >= n {
			w.invalid.Flows++
			continue
		}
		if f.From == f.To {
			w.invalid.Flows++
			continue
		}
		rev, late := flowEnds(&b.Spans[f.From], &b.Spans[f.To])
		out, in := f.From, f.To
		if rev {
			out, in = in, out
		}
		w.flowID++
		w.marks = append(w.marks, flowMark{span: int32(out), rev: rev, id: w.flowID}, flowMark{span: int32(in), in: true, late: late, rev: rev, id: w.flowID})
	}
	if len(w.marks) > 1 {
		slices.SortFunc(w.marks, func(a, b flowMark) int { return int(a.span) - int(b.span) })
	}
	// Scratch sized once: grown by append, it would cost several times
	// its size in copies on a large batch.
	w.idx = slices.Grow(w.idx[:0], len(b.Spans))
	for i := range b.Spans {
		s := &b.Spans[i]
		ts := w.tracks[s.Track]
		if ts == nil || ts.t.Kind == timeline.TrackCounter || s.Start < 0 || s.End < s.Start {
			w.invalid.Spans++
			w.killFlows(w.flowsOf(int32(i)))
			continue
		}
		w.idx = append(w.idx, int32(i))
	}
	spans := b.Spans
	slices.SortFunc(w.idx, func(i, j int32) int { return timeline.CompareSpans(&spans[i], &spans[j]) })
	for lo := 0; lo < len(w.idx); {
		track := spans[w.idx[lo]].Track
		hi := lo + 1
		for hi < len(w.idx) && spans[w.idx[hi]].Track == track {
			hi++
		}
		ts := w.tracks[track]
		w.cands = slices.Grow(w.cands[:0], hi-lo+len(ts.held))
		// Merge the held spans (sorted) with this batch's (sorted).
		h := ts.held
		for k := lo; k < hi; k++ {
			s := spans[w.idx[k]]
			for len(h) > 0 && lessSpan(&h[0].s, &s) {
				w.cands = append(w.cands, h[0])
				h = h[1:]
			}
			w.cands = append(w.cands, cand{s: s, flows: w.flowsOf(w.idx[k])})
		}
		w.cands = append(w.cands, h...)
		w.held -= len(ts.held)
		ts.held = w.emit(ts, w.cands, ts.held[:0], false)
		w.held += len(ts.held)
		lo = hi
	}
	if w.held > maxHeld {
		for _, ts := range w.order {
			if len(ts.held) > 0 {
				w.invalid.Forced += uint64(len(ts.held))
				w.emit(ts, ts.held, nil, true)
				ts.held = ts.held[:0]
			}
		}
		w.held = 0
	}
}

// killFlows counts the flows of a refused span as refused, once each.
func (w *Writer) killFlows(fs []flowMark) {
	for _, f := range fs {
		if w.dead == nil {
			w.dead = map[uint64]bool{}
		}
		if !w.dead[f.id] {
			if len(w.dead) >= 1<<16 {
				clear(w.dead)
			}
			w.dead[f.id] = true
			w.invalid.Flows++
		}
	}
}

func (w *Writer) flowsOf(span int32) []flowMark {
	lo, _ := slices.BinarySearchFunc(w.marks, span, func(m flowMark, s int32) int { return int(m.span) - int(s) })
	hi := lo
	for hi < len(w.marks) && w.marks[hi].span == span {
		hi++
	}
	return w.marks[lo:hi:hi]
}

func lessSpan(a, b *timeline.Span) bool { return timeline.CompareSpans(a, b) < 0 }

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// emit writes the spans of cs (sorted by lessSpan) that are safe to write
// and appends the others, still sorted, to held, which it returns. With
// all set everything is written.
func (w *Writer) emit(ts *trackState, cs []cand, held []cand, all bool) []cand {
	// Pass 1: find each span's parent among cs, refuse spans that overlap
	// one without nesting, and decide what is safe to write now.
	w.safe = w.safe[:0]
	w.bad = w.bad[:0]
	w.stack = w.stack[:0]
	for i := range cs {
		s := &cs[i].s
		for len(w.stack) > 0 {
			t := &cs[w.stack[len(w.stack)-1]].s
			if timeline.Encloses(t, s) || s.Start < t.End {
				break
			}
			w.stack = w.stack[:len(w.stack)-1]
		}
		if len(w.stack) > 0 && !timeline.Encloses(&cs[w.stack[len(w.stack)-1]].s, s) {
			w.safe = append(w.safe, false)
			w.bad = append(w.bad, true)
			continue
		}
		ok := all || s.Depth == 0
		if !ok && len(w.stack) > 0 {
			p := w.stack[len(w.stack)-1]
			ok = cs[p].s.Start < s.Start || w.safe[p]
		} else if !ok {
			ok = ts.parentWritten(s)
		}
		w.safe = append(w.safe, ok)
		w.bad = append(w.bad, false)
		w.stack = append(w.stack, int32(i))
	}
	// Pass 2: write the safe spans as B/E pairs.
	w.stack = w.stack[:0]
	for i := range cs {
		c := &cs[i]
		if w.bad[i] {
			// Overlaps a span without nesting: writing it would corrupt
			// the track.
			w.invalid.Spans++
			w.killFlows(c.flows)
			continue
		}
		if !w.safe[i] {
			if c.flows != nil {
				c.flows = slices.Clone(c.flows)
			}
			held = append(held, *c)
			continue
		}
		s := &c.s
		for len(w.stack) > 0 {
			t := &cs[w.stack[len(w.stack)-1]].s
			if timeline.Encloses(t, s) {
				break
			}
			if s.Start < t.End {
				break // overlap, handled below
			}
			w.end(ts, &cs[w.stack[len(w.stack)-1]])
			w.stack = w.stack[:len(w.stack)-1]
		}
		if len(w.stack) > 0 && !timeline.Encloses(&cs[w.stack[len(w.stack)-1]].s, s) ||
			len(w.stack) == 0 && !ts.claim(s) {
			// Overlaps a span without nesting, here or written before:
			// writing it would corrupt the track.
			w.invalid.Spans++
			w.killFlows(c.flows)
			continue
		}
		w.begin(ts, c)
		w.stack = append(w.stack, int32(i))
	}
	for len(w.stack) > 0 {
		w.end(ts, &cs[w.stack[len(w.stack)-1]])
		w.stack = w.stack[:len(w.stack)-1]
	}
	return held
}
