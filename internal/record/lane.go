package record

import (
	"slices"
	"sort"

	"github.com/framescope/framescope/timeline"
)

// laneHistory is how many placed spans a lane remembers before it forgets
// the older half of them (keeping the ancestors of what it keeps).
const laneHistory = 2048

// laneSpan is a span already placed on a lane, with the bounds of its
// parent so that the chain of ancestors can be walked.
type laneSpan struct {
	start, end   int64
	pstart, pend int64
	depth        uint16
}

// lane is one properly nested track of a GPU queue: lane 0 is the queue
// track itself, lanes 1.. its overflow tracks. A placed span never moves
// and its depth never changes: a new span goes on a lane only where it
// fits inside or beside what is there, never around it.
//
// Zones mostly come in start order, each after every span placed: spine
// keeps the last span and its ancestors, so that such a zone finds its
// parent by walking up from the last span without a search.
type lane struct {
	track timeline.TrackID
	spans []laneSpan // sorted by start, then by end descending
	// spine is the last span of spans and its ancestors, outermost
	// first, as fitSearch's walk from the last span finds them.
	spine []laneSpan
	floor int64 // spans starting before floor cannot be checked here
	// across: the lane holds zones carried across command buffers
	// (GPUSpan.Across), and only those.
	across bool
}

// fit reports whether [s, e] can go on the lane, and if so where in spans;
// it sets ls to the span as it would be placed there (its depth and its
// parent's bounds). ls is set field by field, here and wherever a
// laneSpan moves on the placement path: a whole-struct copy of one just
// written stalls the store buffer on x86, at a cost the size of the rest
// of placement.
func (l *lane) fit(s, e int64, ls *laneSpan) (pos int, ok bool) {
	if s < l.floor {
		ls.set(s, e, 0, 0, 0)
		return 0, false
	}
	if n := len(l.spans); n == 0 || l.spans[n-1].start < s || (l.spans[n-1].start == s && l.spans[n-1].end >= e) {
		return n, fitSpine(l.spine, s, e, ls)
	}
	return l.fitSearch(s, e, ls)
}

// set sets the span's fields one by one (see fit).
func (ls *laneSpan) set(s, e int64, depth uint16, pstart, pend int64) {
	ls.start, ls.end, ls.depth, ls.pstart, ls.pend = s, e, depth, pstart, pend
}

// fitSpine is fit for a span that sorts after every placed span: its
// parent, if any, is on the spine.
func fitSpine(spine []laneSpan, s, e int64, ls *laneSpan) bool {
	for d := len(spine) - 1; d >= 0; d-- {
		p := &spine[d]
		if p.end > s || p.start == s { // p covers the start of the new span
			if p.end < e || p.depth == ^uint16(0) {
				ls.set(s, e, 0, 0, 0)
				return false // they cross
			}
			ls.set(s, e, p.depth+1, p.start, p.end)
			return true
		}
	}
	ls.set(s, e, 0, 0, 0)
	return true
}

// fitSearch is fit anywhere on the lane, by binary search.
func (l *lane) fitSearch(s, e int64, ls *laneSpan) (pos int, ok bool) {
	ls.set(s, e, 0, 0, 0)
	if s < l.floor {
		return 0, false
	}
	sp := l.spans
	pos = sort.Search(len(sp), func(i int) bool {
		return sp[i].start > s || (sp[i].start == s && sp[i].end < e)
	})
	if pos < len(sp) && sp[pos].start < e {
		return 0, false // it would contain or cross a placed span
	}
	i := pos - 1
	for i >= 0 {
		p := &sp[i]
		if p.end > s || p.start == s { // p covers the start of the new span
			if p.end < e || p.depth == ^uint16(0) {
				return 0, false // they cross
			}
			ls.set(s, e, p.depth+1, p.start, p.end)
			return pos, true
		}
		if p.depth == 0 {
			break
		}
		// Only an ancestor of p can cover s: jump to p's parent, the last
		// span with its bounds.
		i = parentOf(sp, i)
	}
	return pos, true
}

// parentOf returns the index of the parent of sp[i] (depth > 0): the last
// span with its parent's bounds.
func parentOf(sp []laneSpan, i int) int {
	ps, pe := sp[i].pstart, sp[i].pend
	return sort.Search(i, func(k int) bool {
		return sp[k].start > ps || (sp[k].start == ps && sp[k].end < pe)
	}) - 1
}

// insert places ls at pos, as fit said.
func (l *lane) insert(pos int, ls *laneSpan) {
	if pos == len(l.spans) {
		l.spans = appendLaneSpan(l.spans, ls)
		n := len(l.spine)
		for n > 0 && l.spine[n-1].depth >= ls.depth {
			n--
		}
		l.spine = appendLaneSpan(l.spine[:n], ls)
	} else {
		// Not last, and containing no placed span: not on the spine.
		l.spans = append(l.spans, laneSpan{})
		copy(l.spans[pos+1:], l.spans[pos:])
		l.spans[pos].set(ls.start, ls.end, ls.depth, ls.pstart, ls.pend)
	}
	if len(l.spans) > laneHistory {
		l.forget()
		l.buildSpine()
	}
}

// appendLaneSpan appends a copy of ls made field by field (see fit).
func appendLaneSpan(to []laneSpan, ls *laneSpan) []laneSpan {
	if len(to) < cap(to) {
		to = to[:len(to)+1]
	} else {
		to = append(to, laneSpan{})
	}
	to[len(to)-1].set(ls.start, ls.end, ls.depth, ls.pstart, ls.pend)
	return to
}

// buildSpine makes the spine again from spans: the last span and the
// ancestors the search finds for it.
func (l *lane) buildSpine() {
	l.spine = l.spine[:0]
	i := len(l.spans) - 1
	for i >= 0 {
		l.spine = append(l.spine, l.spans[i])
		if l.spans[i].depth == 0 {
			break
		}
		i = parentOf(l.spans, i)
	}
	slices.Reverse(l.spine)
}

// forget drops the older half of the history, keeping the spans that
// still cover where the kept half begins: the ancestors of its first
// span, which are the spans before it that end after it begins. The kept
// half moves down in one copy, its ancestors ahead of it. The floor rises
// to the latest end among the spans let go.
//
// Both come from walks up parent links, not a pass over the half let go:
// spans on a lane nest and never cross, and a span placed later never
// contains one placed before (fitSearch), so the spans covering a point
// are one chain of parents; and among the spans let go, the latest end is
// that of the outermost container, short of the kept span's ancestors, of
// the last one let go that does not cover where the kept half begins.
func (l *lane) forget() {
	k := len(l.spans) / 2
	x := l.spans[k].start
	// The floor: the last span before k not covering x (past at most
	// depth-many ancestors), then its containers that do not cover x.
	j := k - 1
	for j >= 0 && l.spans[j].end > x {
		j--
	}
	for j >= 0 {
		l.floor = max(l.floor, l.spans[j].end)
		if l.spans[j].depth == 0 {
			break
		}
		p := parentOf(l.spans, j)
		if l.spans[p].end > x {
			break // an ancestor of the kept span: it stays
		}
		j = p
	}
	// The ancestors, innermost first, go just before the kept half, in
	// order: each moves to a place at or after its own.
	w := k
	for i := k; l.spans[i].depth > 0; {
		i = parentOf(l.spans, i)
		if l.spans[i].end > x { // else a parent that only starts at x, as long as nothing: let go
			w--
			l.spans[w] = l.spans[i]
		}
	}
	n := copy(l.spans, l.spans[w:])
	l.spans = l.spans[:n]
}
