package loopcheck

import (
	"bytes"
	"fmt"
	"os"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// problems gathers what a run got wrong, a few of each kind.
type problems struct {
	list  []string
	kinds map[string]int
}

func (p *problems) add(kind, format string, args ...any) {
	if p.kinds == nil {
		p.kinds = map[string]int{}
	}
	p.kinds[kind]++
	if p.kinds[kind] <= 3 {
		p.list = append(p.list, kind+": "+fmt.Sprintf(format, args...))
	} else if p.kinds[kind] == 4 {
		p.list = append(p.list, kind+": and more")
	}
}

// exact reports whether the loop must deliver every zone that was handed
// out, ended and submitted: no window or span cap lets anything go, and
// the application waits for its frames as it says.
func (l Loop) exact() bool { return !l.LateWait && l.Window == 0 && l.MaxSpans == 0 }

// check holds the trace at path, and the profiler's counts, to the
// journal.
func (r *run) check(path string) (*timeline.Trace, problems) {
	var p problems
	for _, err := range r.errs {
		p.add("call", "%v", err)
	}
	for i, g := range r.all {
		if st := g.Stats(); !st.Balanced() || st.Open != 0 {
			p.add("context book", "context %d: %d issued, %d delivered, %d open; %+v", i, st.Issued, st.Delivered, st.Open, st)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		p.add("trace", "%v", err)
		return nil, p
	}
	tr, err := perfetto.Read(bytes.NewReader(b))
	if err != nil {
		p.add("trace", "reading it back: %v", err)
		return nil, p
	}
	r.checkChrome(tr, &p)
	r.checkBooks(tr, &p)
	r.checkZones(tr, &p)
	r.checkTwin(tr, &p)
	return tr, p
}

// checkChrome writes the trace as Chrome JSON and reads it back: the same
// slices, flows, drops and books.
func (r *run) checkChrome(tr *timeline.Trace, p *problems) {
	var js bytes.Buffer
	if err := chrome.Write(&js, tr); err != nil {
		p.add("chrome", "%v", err)
		return
	}
	ct, err := chrome.Read(&js)
	if err != nil {
		p.add("chrome", "reading it back: %v", err)
		return
	}
	if len(ct.Spans) != len(tr.Spans) || len(ct.Flows) != len(tr.Flows) || ct.Drops != tr.Drops || ct.Ledger != tr.Ledger {
		p.add("chrome", "%d spans, %d flows, drops %+v, books %+v; Perfetto: %d, %d, %+v, %+v",
			len(ct.Spans), len(ct.Flows), ct.Drops, ct.Ledger, len(tr.Spans), len(tr.Flows), tr.Drops, tr.Ledger)
	}
}

// checkBooks: the trace's books balance with nothing open, hold what the
// application handed out by its own count, and delivered what the trace
// holds.
func (r *run) checkBooks(tr *timeline.Trace, p *problems) {
	l, d := tr.Ledger, tr.Drops
	if u := books.Unbalanced(&l, d); len(u) > 0 {
		p.add("books", "%v do not balance: %+v against %+v", u, l, d)
	}
	for k := range books.NumKinds {
		if b := books.Of(&l, k); b.Open != 0 {
			p.add("books", "%v: %d open after Close", k, b.Open)
		}
	}
	// The executions of a command buffer submitted again are issued as
	// the library sees them run (its timestamp changed): one whose first
	// readback came after it ran again may be seen once fewer, never more.
	var unseen uint64
	if d.RunAgain <= r.j.resubmitted {
		unseen = r.j.resubmitted - d.RunAgain
	}
	if l.Zones.Issued+unseen != r.j.calls || d.RunAgain > r.j.resubmitted {
		p.add("books", "%d zones issued, %d of them run again; the application asked for %d, %d of them run again", l.Zones.Issued, d.RunAgain, r.j.calls, r.j.resubmitted)
	}
	if l.Spans.Issued != r.j.cpuSpans {
		p.add("books", "%d CPU spans issued; the application ended %d", l.Spans.Issued, r.j.cpuSpans)
	}
	gpu, cpu := 0, 0
	for _, s := range tr.Spans {
		switch tr.Track(s.Track).Kind {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			gpu++
		case timeline.TrackCPU:
			cpu++
		}
	}
	if l.Zones.Delivered != uint64(gpu) || l.Spans.Delivered != uint64(cpu) || l.Flows.Delivered != uint64(len(tr.Flows)) {
		p.add("books", "delivered %d zones, %d spans, %d flows; the trace holds %d, %d, %d",
			l.Zones.Delivered, l.Spans.Delivered, l.Flows.Delivered, gpu, cpu, len(tr.Flows))
	}
}

// zoneKey names a zone in a trace: its frame and name.
type zoneKey struct {
	frame uint64
	name  string
}

// checkZones holds each GPU slice to the zone the application recorded:
// one it handed out, ended and submitted; inside [its submission's CPU
// time, the return of the wait for it] within its error bound; inside
// its parent; with the arrow from its submission's span when it should
// have one. In an exact loop, every such zone is there, and each cause
// of loss counts what the application did.
func (r *run) checkZones(tr *timeline.Trace, p *problems) {
	byKey := map[zoneKey]*zoneRec{}
	for _, z := range r.j.zones {
		if z.valid {
			byKey[zoneKey{z.frame, z.name}] = z
		}
	}
	slices := map[*zoneRec]*timeline.Span{}
	index := map[*zoneRec]int{}
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if k := tr.Track(s.Track).Kind; k != timeline.TrackGPUQueue && k != timeline.TrackGPULane {
			continue
		}
		z := byKey[zoneKey{s.Frame, tr.Name(s.Name)}]
		switch {
		case z == nil:
			p.add("phantom", "slice %q of frame %d: the application recorded no such zone", tr.Name(s.Name), s.Frame)
			continue
		case !z.deliverable():
			p.add("phantom", "slice %q of frame %d: the zone was not ended or not submitted (ended %d)", z.name, z.frame, z.ended)
		case slices[z] != nil:
			p.add("phantom", "zone %q of frame %d twice", z.name, z.frame)
		}
		slices[z], index[z] = s, i
		r.checkTime(z, s, p)
		r.checkWork(z, s, p)
	}
	for z, s := range slices {
		if ps := slices[z.parent]; z.parent != nil && ps != nil && (s.Start < ps.Start || s.End > ps.End) {
			p.add("nesting", "%q [%d, %d] of frame %d is not inside its parent %q [%d, %d]", z.name, s.Start, s.End, z.frame, z.parent.name, ps.Start, ps.End)
		}
	}
	r.checkFlows(tr, slices, index, p)
	if r.l.exact() {
		r.checkLosses(tr, slices, p)
		var missing uint64
		for _, s := range slices {
			if s.Work != nil && s.Work.Missing != timeline.WorkCounted {
				missing++
			}
		}
		if tr.Drops.Work != missing {
			p.add("causes", "%d slices without their counts; drops.work %d", missing, tr.Drops.Work)
		}
	}
}

// checkWork holds a slice's work to what the application did: a zone of a
// context that counts statistics has them, and its counts are the compute
// invocations the application dispatched between its Begin and End, and
// none of any other statistic (it dispatched nothing else); or it has
// none for the one reason such a loop can give, its frame's statistics
// queries spent. A zone of a context that counts none has no Work.
func (r *run) checkWork(z *zoneRec, s *timeline.Span, p *problems) {
	want := r.stats(z.queue)
	w := s.Work
	switch {
	case want == 0:
		if w != nil {
			p.add("work", "%q of frame %d has work %+v; its context counts none", z.name, z.frame, *w)
		}
		return
	case w == nil:
		p.add("work", "%q of frame %d has no work; its context counts %v", z.name, z.frame, want)
		return
	case w.Missing == timeline.WorkSpent:
		return
	case w.Missing != timeline.WorkCounted:
		p.add("work", "%q of frame %d has no counts (%v), which the loop cannot cause", z.name, z.frame, w.Missing)
		return
	case w.Stats != want:
		p.add("work", "%q of frame %d counts %v; its context counts %v", z.name, z.frame, w.Stats, want)
	}
	for i := range timeline.NumPipelineStats {
		exp := uint64(0)
		if timeline.PipelineStats(1)<<i == timeline.ComputeShaderInvocations {
			exp = z.compute
		}
		if w.Count[i] != exp {
			p.add("work", "%q of frame %d: %s %d, the application's %d", z.name, z.frame, timeline.StatKey(i), w.Count[i], exp)
		}
	}
}

// checkTime: a zone ran after its submission began and before the wait
// for it returned, within the clock model's error bound.
func (r *run) checkTime(z *zoneRec, s *timeline.Span, p *problems) {
	lo, hi := z.begin.submission(), z.end.submission()
	if lo == nil || hi == nil {
		return
	}
	e := int64(s.ErrNs)
	if s.Start < lo.t0-e || (hi.done != 0 && s.End > hi.done+e && !z.stale) || s.End < s.Start {
		p.add("time", "%q of frame %d at [%d, %d] ± %d ns, submitted at %d, waited for until %d", z.name, z.frame, s.Start, s.End, e, lo.t0, hi.done)
	}
}

// checkFlows: each zone that should have an arrow has one, from its
// submission's span of its frame; no other zone has one.
func (r *run) checkFlows(tr *timeline.Trace, slices map[*zoneRec]*timeline.Span, index map[*zoneRec]int, p *problems) {
	into := map[int][]int{}
	for _, f := range tr.Flows {
		into[f.To] = append(into[f.To], f.From)
	}
	for z := range slices {
		from := into[index[z]]
		switch {
		case z.linked() && len(from) == 0:
			if r.l.exact() {
				p.add("arrow", "%q of frame %d has no arrow from %q", z.name, z.frame, z.begin.submission().span)
			}
		case z.linked():
			src := tr.Spans[from[0]]
			if len(from) != 1 || tr.Name(src.Name) != z.begin.submission().span || src.Frame != z.frame {
				p.add("arrow", "%q of frame %d has arrows from %v, want one from %q", z.name, z.frame, from, z.begin.submission().span)
			}
		case len(from) > 0:
			p.add("arrow", "%q of frame %d has an arrow, but its command buffer was not named to Submitted", z.name, z.frame)
		}
	}
}

// checkLosses, for an exact loop: every zone that should arrive did, and
// each cause counts what the application did.
func (r *run) checkLosses(tr *timeline.Trace, slices map[*zoneRec]*timeline.Span, p *problems) {
	var unended, unsubmitted, unlinked, overlapped uint64
	refused := r.j.afterClose
	for _, z := range r.j.zones {
		switch {
		case !z.valid:
			refused++
		case z.ended == 0:
			unended++
		case !z.deliverable():
			unsubmitted++
		case slices[z] == nil && z.mayOverlap:
			overlapped++
		case slices[z] == nil:
			p.add("lost", "%q of frame %d on queue %d was handed out, ended and submitted, and is not in the trace", z.name, z.frame, z.queue)
		case !z.linked() && z.begin.submission().linked:
			unlinked++
		}
	}
	d := tr.Drops
	if d.QueryLimit+d.NoFrame+d.Closed != refused || d.Unended != unended || d.Unsubmitted+d.Pending != unsubmitted || d.Uncalibrated+d.GPUSpans != 0 {
		p.add("causes", "refused %d, never ended %d, never submitted %d, run again %d; drops %+v", refused, unended, unsubmitted, r.j.resubmitted, d)
	}
	if d.Overlapped != overlapped {
		p.add("causes", "%d zones of simultaneous-use recordings not in the trace; drops.overlapped %d", overlapped, d.Overlapped)
	}
	if d.Flows != unlinked {
		p.add("causes", "%d zones of submissions that did not name their command buffer; drops.flows %d", unlinked, d.Flows)
	}
}
