package timeline

import "cmp"

// CompareSpans is the one order of spans in Framescope, which every
// exporter writes in and Validate and the recorder nest by: by track; then
// by start, earlier first; then by depth, outermost first; then a
// zero-length span before a longer one (it ends where the longer one
// starts, so it is its sibling, not its child); then by end, later first.
// On a track whose depths are its nesting depths, a parent comes before
// each of its children and siblings come in time order, so a writer of
// begin/end pairs nests them as the recorder did. It returns -1, 0 or +1,
// as cmp.Compare does.
func CompareSpans(a, b *Span) int {
	if a.Track != b.Track {
		return cmp.Compare(a.Track, b.Track)
	}
	return compareExtent(a.Start, a.End, a.Depth, b.Start, b.End, b.Depth)
}

// Encloses reports whether s nests inside t, for two spans of one track
// with CompareSpans(t, s) <= 0: s lies within t and starts before t ends,
// or, starting where t ends (t may be zero-length), is deeper than t.
// A span's parent is the innermost span before it in CompareSpans order
// that encloses it; its Depth is the number of spans enclosing it.
func Encloses(t, s *Span) bool {
	if s.Start < t.Start || s.End > t.End {
		return false
	}
	return s.Start < t.End || s.Depth > t.Depth
}

// compareExtent is CompareSpans within one track.
func compareExtent(aStart, aEnd int64, aDepth uint16, bStart, bEnd int64, bDepth uint16) int {
	if aStart != bStart {
		return cmp.Compare(aStart, bStart)
	}
	if aDepth != bDepth {
		return cmp.Compare(aDepth, bDepth)
	}
	if az, bz := aEnd == aStart, bEnd == bStart; az != bz {
		if az {
			return -1
		}
		return 1
	}
	return cmp.Compare(bEnd, aEnd)
}
