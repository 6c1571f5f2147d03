package chrome

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/framescope/framescope/timeline"
)

// build replays each thread's events in time order, as Perfetto does, to
// pair B with E, place X events, and bind flow ends to the innermost open
// slice.
func (rd *reader) build() (*timeline.Trace, error) {
	t := &rd.t
	rd.countDrops()
	type end struct {
		from, to int
	}
	flows := map[uint64]*end{}
	var flowOrder []uint64
	var idx []int32
	if t.Spans == nil {
		t.Spans = make([]timeline.Span, 0, rd.nspans)
	}
	for _, k := range rd.keys {
		th := rd.threads[k]
		if th.recs.n == 0 || (th.framesList || th.derived) && th.track == 0 {
			th.recs = recList{}
			continue
		}
		if th.track == 0 {
			rd.nextID++
			th.track = rd.nextID
			name := th.name
			if name == "" {
				name = "thread " + strconv.FormatInt(k.tid, 10)
			}
			t.Tracks = append(t.Tracks, timeline.Track{ID: th.track, Kind: timeline.TrackCPU, Name: name})
		}
		// Replay in time order, file order breaking ties, as Perfetto
		// sorts. An X slice ends before anything at or after its end
		// time happens; one that would overlap the X slice it starts in
		// without nesting is dropped, as Perfetto drops it.
		idx = slices.Grow(idx[:0], th.recs.n)
		for i := range th.recs.n {
			idx = append(idx, int32(i))
		}
		slices.SortStableFunc(idx, func(a, b int32) int { return cmp64(th.recs.at(a).ts, th.recs.at(b).ts) })
		type open struct {
			span int
			xEnd int64 // end of an X slice; MaxInt64 for a B slice
		}
		var stack []open
		popX := func(ts int64) {
			for len(stack) > 0 && stack[len(stack)-1].xEnd <= ts {
				stack = stack[:len(stack)-1]
			}
		}
		for _, i := range idx {
			r := th.recs.at(i)
			popX(r.ts)
			switch r.ph {
			case 'B', 'X':
				if len(stack) >= rd.lim.MaxDepth {
					return nil, fmt.Errorf("%w: slices nested deeper than %d (Limits.MaxDepth)", ErrTooLarge, rd.lim.MaxDepth)
				}
				o := open{span: len(t.Spans), xEnd: math.MaxInt64}
				end := r.ts
				if r.ph == 'X' {
					end = r.ts + r.dur
					if len(stack) > 0 && stack[len(stack)-1].xEnd < end {
						t.Drops.Spans++
						continue
					}
					o.xEnd = end
					if r.dur == 0 {
						// Zero-length: it ends at once, on its own.
						o.xEnd = math.MinInt64
					}
				}
				s := timeline.Span{
					Track: th.track, Name: r.name, Start: r.ts, End: end,
					Frame: r.arg, ErrNs: r.err, Depth: uint16(min(len(stack), math.MaxUint16)),
				}
				if r.work != 0 {
					s.Work = rd.works[r.work-1]
				}
				t.Spans = append(t.Spans, s)
				if o.xEnd != math.MinInt64 {
					stack = append(stack, o)
				}
			case 'E':
				if len(stack) == 0 || stack[len(stack)-1].xEnd != math.MaxInt64 {
					// No B open, or an X slice open inside it.
					t.Drops.Unended++
					continue
				}
				t.Spans[stack[len(stack)-1].span].End = r.ts
				stack = stack[:len(stack)-1]
			case 's', 'f':
				if len(stack) == 0 {
					continue
				}
				e := flows[r.arg]
				if e == nil {
					e = &end{-1, -1}
					flows[r.arg] = e
					flowOrder = append(flowOrder, r.arg)
				}
				// A reversed flow runs from its 'f' span to its 's' span.
				if (r.ph == 's') != r.rev {
					e.from = stack[len(stack)-1].span
				} else {
					e.to = stack[len(stack)-1].span
				}
			}
		}
		// B slices never ended: lost, and counted. Every later span of
		// the thread began inside them, so is that much less deep.
		var lost []int
		for _, o := range stack {
			if o.xEnd == math.MaxInt64 {
				t.Spans[o.span].End = t.Spans[o.span].Start - 1
				t.Drops.Unended++
				lost = append(lost, o.span)
			}
		}
		for k, i := range lost {
			for j := i + 1; j < len(t.Spans); j++ {
				if k+1 < len(lost) && j == lost[k+1] {
					break
				}
				t.Spans[j].Depth -= uint16(k + 1)
			}
		}
		th.recs = recList{}
	}
	// Remove the unended spans, renumbering flow ends.
	remap := make([]int, len(t.Spans))
	kept := t.Spans[:0]
	for i, s := range t.Spans {
		if s.End < s.Start {
			remap[i] = -1
			continue
		}
		remap[i] = len(kept)
		kept = append(kept, s)
	}
	t.Spans = kept
	for _, id := range flowOrder {
		e := flows[id]
		if e.from < 0 || e.to < 0 || e.from == e.to || remap[e.from] < 0 || remap[e.to] < 0 {
			continue
		}
		t.Flows = append(t.Flows, timeline.Flow{From: remap[e.from], To: remap[e.to]})
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("chrome: the trace breaks Framescope's model: %w", err)
	}
	return t, nil
}
