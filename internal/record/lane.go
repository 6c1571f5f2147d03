package record

import "github.com/framescope/framescope/timeline"
import "sort"

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
type lane struct {
	track timeline.TrackID
	spans []laneSpan // sorted by start, then by end descending
	floor int64      // spans starting before floor cannot be checked here
}

// fit reports whether [s, e] can go on the lane, and if so where in spans
// and as what (depth and parent bounds).
func (l *lane) fit(s, e int64) (pos int, ls laneSpan, ok bool) {
	ls = laneSpan{start: s, end: e}
	if s < l.floor {
		return 0, ls, false
	}
	sp := l.spans
	pos = sort.Search(len(sp), func(i int) bool {
		return sp[i].start > s || (sp[i].start == s && sp[i].end < e)
	})
	if pos < len(sp) && sp[pos].start < e {
		return 0, ls, false // it would contain or cross a placed span
	}
	i := pos - 1
	for i >= 0 {
		p := &sp[i]
		if p.end > s || p.start == s { // p covers the start of the new span
			if p.end < e || p.depth == ^uint16(0) {
				return 0, ls, false // they cross
			}
			ls.depth, ls.pstart, ls.pend = p.depth+1, p.start, p.end
			return pos, ls, true
		}
		if p.depth == 0 {
			break
		}
		// Only an ancestor of p can cover s: jump to p's parent, the last
		// span with its bounds.
		ps, pe := p.pstart, p.pend
		j := sort.Search(i, func(k int) bool {
			return sp[k].start > ps || (sp[k].start == ps && sp[k].end < pe)
		})
		i = j - 1
	}
	return pos, ls, true
}

// insert places ls at pos, as fit said.
func (l *lane) insert(pos int, ls laneSpan) {
	l.spans = append(l.spans, laneSpan{})
	copy(l.spans[pos+1:], l.spans[pos:])
	l.spans[pos] = ls
	if len(l.spans) > laneHistory {
		l.forget()
	}
}

// forget drops the older half of the history, keeping the spans that
// still cover where the kept half begins (the ancestors of what is kept).
func (l *lane) forget() {
	k := len(l.spans) / 2
	x := l.spans[k].start
	kept := l.spans[:0]
	for i, p := range l.spans {
		if i >= k || p.end > x {
			kept = append(kept, p)
		} else if p.end > l.floor {
			l.floor = p.end
		}
	}
	l.spans = kept
}
