package timeline

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// maxProblems is how many problems Validate spells out.
const maxProblems = 20

// problems gathers what Validate finds.
type problems struct {
	errs []error
	more int
}

func (p *problems) add(format string, args ...any) {
	if len(p.errs) >= maxProblems {
		p.more++
		return
	}
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

func (p *problems) err() error {
	if p.more > 0 {
		p.errs = append(p.errs, fmt.Errorf("and %d more problems", p.more))
	}
	return errors.Join(p.errs...)
}

// Validate checks that t is well formed, as every exporter expects: track
// IDs unique and non-zero, every referenced track defined and of the right
// kind, lanes under a queue track, names in range, End >= Start, spans of
// each track properly nested (two spans either do not overlap or one
// contains the other), flows indexing spans, frame IDs unique, samples
// finite and on counter tracks. It returns nil, or an error listing the
// first problems found. It works on a streaming batch as well.
func (t *Trace) Validate() error {
	var p problems
	if len(t.Names) > 0 && t.Names[0] != "" {
		p.add("Names[0] is %q, want the empty name", t.Names[0])
	}
	kinds := make(map[TrackID]TrackKind, len(t.Tracks))
	for i, tr := range t.Tracks {
		switch {
		case tr.ID == 0:
			p.add("track %d (%q) has ID 0", i, tr.Name)
		case kinds[tr.ID] != 0:
			p.add("track ID %d defined twice", tr.ID)
		case tr.Kind < TrackCPU || tr.Kind > TrackCounter:
			p.add("track %d (%q) has unknown kind %d", tr.ID, tr.Name, tr.Kind)
		}
		if tr.ID != 0 && kinds[tr.ID] == 0 {
			kinds[tr.ID] = tr.Kind
		}
	}
	for _, tr := range t.Tracks {
		if tr.Parent != 0 {
			pk, ok := kinds[tr.Parent]
			switch {
			case tr.Parent == tr.ID:
				p.add("track %d is its own parent", tr.ID)
			case !ok:
				p.add("track %d has undefined parent %d", tr.ID, tr.Parent)
			case tr.Kind == TrackGPULane && pk != TrackGPUQueue:
				p.add("lane track %d has parent %d of kind %v, want gpu-queue", tr.ID, tr.Parent, pk)
			}
		}
		if tr.Kind == TrackGPULane && (tr.Parent == 0 || tr.Lane < 1) {
			p.add("lane track %d has parent %d and lane %d; want a queue parent and lane >= 1", tr.ID, tr.Parent, tr.Lane)
		}
		if tr.Unit > UnitBytes {
			p.add("track %d has unknown unit %d", tr.ID, tr.Unit)
		}
	}

	// Spans by track, in one array: counted first, so that it costs
	// 4 bytes a span.
	if len(t.Spans) > math.MaxInt32 {
		p.add("%d spans, more than 2^31-1", len(t.Spans))
		return p.err()
	}
	count := map[TrackID]int{}
	for i := range t.Spans {
		count[t.Spans[i].Track]++
	}
	all := make([]int32, len(t.Spans))
	byTrack := make(map[TrackID][]int32, len(count))
	at := 0
	for id, n := range count {
		byTrack[id] = all[at : at : at+n]
		at += n
	}
	for i := range t.Spans {
		s := &t.Spans[i]
		k, ok := kinds[s.Track]
		switch {
		case !ok:
			p.add("span %d is on undefined track %d", i, s.Track)
			continue
		case k == TrackCounter:
			p.add("span %d is on counter track %d", i, s.Track)
		}
		if int(s.Name) >= len(t.Names) {
			p.add("span %d has name %d, out of %d names", i, s.Name, len(t.Names))
		}
		if s.End < s.Start {
			p.add("span %d on track %d ends (%d) before it starts (%d)", i, s.Track, s.End, s.Start)
			continue
		}
		byTrack[s.Track] = append(byTrack[s.Track], int32(i))
	}
	for id, idx := range byTrack {
		checkNesting(&p, t.Spans, id, idx)
	}

	for i, f := range t.Flows {
		if f.From < 0 || f.From >= len(t.Spans) || f.To < 0 || f.To >= len(t.Spans) || f.From == f.To {
			p.add("flow %d links spans %d -> %d, out of %d spans", i, f.From, f.To, len(t.Spans))
		}
	}
	seen := make(map[uint64]int, len(t.Frames)) // how many frames have the ID
	for i, f := range t.Frames {
		if f.ID == 0 {
			p.add("frame %d has ID 0", i)
		}
		seen[f.ID]++
		if f.End != 0 && f.End < f.Start {
			p.add("frame %d ends (%d) before it starts (%d)", f.ID, f.End, f.Start)
		}
	}
	for _, f := range t.Frames { // each ID held more than once said once, in the frames' order
		if n := seen[f.ID]; f.ID != 0 && n > 1 {
			p.add("frame ID %d appears %d times", f.ID, n)
			seen[f.ID] = 0
		}
	}
	for i, s := range t.Samples {
		if k, ok := kinds[s.Track]; !ok || k != TrackCounter {
			p.add("sample %d is on track %d, not a defined counter track", i, s.Track)
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			p.add("sample %d on track %d is %v", i, s.Track, s.Value)
		}
	}
	for i, c := range t.Calibrations {
		if k, ok := kinds[c.Track]; !ok || k != TrackGPUQueue {
			p.add("calibration %d is on track %d, not a defined GPU queue track", i, c.Track)
		}
		if math.IsNaN(c.ErrNs) || math.IsInf(c.ErrNs, 0) || c.ErrNs < 0 {
			p.add("calibration %d has error bound %v", i, c.ErrNs)
		}
	}
	checkSums(&p, t.Drops, t.Ledger)
	return p.err()
}

// checkSums reports counts whose sums pass 2^64-1, which no recorder
// counts: the drops' total, and each book's Delivered + Open + Evicted +
// Sink with the drops (wrapped, such sums made a book of 2^64-1 lost and
// 1 more look balanced, and the total 0).
func checkSums(p *problems, d Drops, l Ledger) {
	if d.Overflows() {
		p.add("the drops add up past 2^64-1")
	}
	for i, b := range [3]Book{l.Zones, l.Spans, l.Flows} {
		if _, ok := Sum(b.Delivered, b.Open, b.Evicted, b.Sink); !ok {
			p.add("the %s book's delivered, open, evicted and sink add up past 2^64-1", [3]string{"zones", "spans", "flows"}[i])
		}
	}
}

// checkNesting reports spans of one track that overlap without one
// containing the other. idx indexes spans on the track.
func checkNesting(p *problems, spans []Span, id TrackID, idx []int32) {
	slices.SortFunc(idx, func(a, b int32) int { return CompareSpans(&spans[a], &spans[b]) })
	var stack []int32
	for _, i := range idx {
		s := &spans[i]
		for len(stack) > 0 && spans[stack[len(stack)-1]].End <= s.Start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if spans[top].End < s.End {
				p.add("spans %d [%d, %d] and %d [%d, %d] on track %d overlap without nesting",
					top, spans[top].Start, spans[top].End, i, s.Start, s.End, id)
				continue
			}
		}
		stack = append(stack, i)
	}
}
