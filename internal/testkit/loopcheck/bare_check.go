package loopcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// BareJournal is what `bare run` wrote of its run.
type BareJournal struct {
	t0, done map[int]int64 // each submission's, on CLOCK_MONOTONIC
	Checksum string        // of what the GPU wrote
	Messages uint64        // the validation layer's warnings and errors
	Last     string        // the latest of them
}

// ParseBareJournal reads a journal `bare run` wrote.
func ParseBareJournal(b []byte) (BareJournal, error) {
	j := BareJournal{t0: map[int]int64{}, done: map[int]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch f[0] {
		case "s", "d":
			var sub int
			var t int64
			if _, err = fmt.Sscan(strings.Join(f[1:], " "), &sub, &t); err == nil && f[0] == "s" {
				j.t0[sub] = t
			} else if err == nil {
				j.done[sub] = t
			}
		case "checksum":
			j.Checksum = f[1]
		case "messages":
			_, err = fmt.Sscan(f[1], &j.Messages)
		case "last":
			j.Last = strings.Join(f[1:], " ")
		}
		if err != nil {
			return j, fmt.Errorf("bare journal: %q: %w", sc.Text(), err)
		}
	}
	if j.Checksum == "" {
		return j, fmt.Errorf("bare journal: no checksum: the run did not finish")
	}
	return j, sc.Err()
}

// Check holds a trace of the bare loop, made by a profiler outside the
// program, to what the script did and the journal says, and returns what
// broke: the books balance; what was lost is what the script lost (labels
// open at their command buffer's end, Unended; recordings never run,
// Unsubmitted; recordings on transfer-only queues, NoFrame), and nothing
// else but misuse; each zone name's count is its executions; each zone
// lies within the window of a submission that ran its name, from just
// before the submit to the return of the wait for it, within its error
// bound; a label's zone lies at the depth its name says, a secondary's
// inside a primary's command buffer zone; no queue track holds zones of
// two devices alive at once (the second device's, a thread's, the
// program's own), though a device made after another left may take its
// track. Where the profiler had to refuse recordings or
// zones past its bounds (Bare.want.exact false), counts may be less, but
// never more, and those causes are allowed. The shape's recordings past
// the layer's bound (Shape.Burst) may fall short, each execution missing
// counted no_frame; past its 4,096 label names (Shape.Names), a name is
// all there or all "(other labels)", which holds the executions of those
// that are not.
func (b Bare) Check(tr *timeline.Trace, j BareJournal) []string {
	var p problems
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		p.add("books", "%v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	zones := GPUZones(tr)
	got := map[string]int{}
	for _, z := range zones {
		got[tr.Name(z.Name)]++
	}
	want, slack, subs := b.named(&p, got)
	primaries := Primaries(tr, zoneCommandBuffer)
	// A secondary executed by a primary the profiler refused (counted
	// no_frame) lies in no primary's zone.
	orphans := b.want.refused && tr.Drops.NoFrame > 0
	for _, z := range zones {
		name := tr.Name(z.Name)
		if kind, _, ok := parseLabel(name); ok && kind == labelCarried {
			if !inAcross(j, b.want.across[name], z) {
				p.add("window", "a carried zone %q at [%d, %d] (error bound %d ns) lies in no window from the submission that began it to the end of the one that ended it", name, z.Start, z.End, z.ErrNs)
			}
		} else if !inWindow(j, subs[name], z) {
			p.add("window", "a zone %q at [%d, %d] (error bound %d ns) lies in no window of a submission that ran it", name, z.Start, z.End, z.ErrNs)
		}
		if msg := bareNesting(tr, z, primaries, orphans, b.want.anyRenderDepth); msg != "" {
			p.add("nesting", "%s", msg)
		}
	}
	for _, m := range b.seatsShared(tr, zones) {
		p.add("devices", "%s", m)
	}
	exact := b.want.exact
	short := 0 // the executions of zones the profiler may refuse, refused
	for name, n := range got {
		if w := want[name]; n > w || exact && n < w-slack[name] {
			p.add("zones", "%d zones %q, the script ran %d (of which the profiler may refuse %d)", n, name, w, slack[name])
		}
	}
	for name, w := range want {
		short += w - got[name]
		if got[name] == 0 && w > slack[name] && exact {
			p.add("zones", "no zone %q, the script ran %d", name, w)
		}
	}
	b.checkDrops(&p, tr.Drops, short)
	return p.list
}

// named is what the trace must hold by name, given what it holds (got):
// each name's executions, by how many each may fall short, and the
// submissions that ran it. Past the layer's 4,096 label names, a name it
// met first when full is otherLabels at every execution: each name is
// either all there or all otherLabels, which holds the executions of
// those that are not.
func (b Bare) named(p *problems, got map[string]int) (want, slack map[string]int, subs map[string][]int) {
	w := b.want
	want, slack, subs = maps.Clone(w.zones), maps.Clone(w.slack), maps.Clone(w.subs)
	labels := 0
	for name := range got {
		if name != otherLabels && !layerZone(name) {
			labels++
		}
	}
	if labels > layerNames {
		p.add("names", "%d label names, more than the layer's %d", labels, layerNames)
	}
	if w.labels <= layerNames {
		return want, slack, subs
	}
	for name, n := range w.zones {
		if got[name] > 0 || layerZone(name) {
			continue
		}
		want[otherLabels] += n
		slack[otherLabels] += w.slack[name]
		subs[otherLabels] = append(subs[otherLabels], w.subs[name]...)
		delete(want, name)
		delete(slack, name)
	}
	return want, slack, subs
}

// layerZone reports whether name is one of the layer's own zones'.
func layerZone(name string) bool {
	return name == zoneCommandBuffer || name == zoneSecondary || name == zoneRendering
}

// CheckCut holds the trace of a program a signal ended (cut, perhaps, at
// its last whole batch) to what the script did up to then: the books
// balance, and no name has more zones than the whole script ran.
func (b Bare) CheckCut(tr *timeline.Trace) []string {
	var p problems
	if k := books.Unbalanced(&tr.Ledger, tr.Drops); len(k) > 0 {
		p.add("books", "%v do not balance: %+v, drops %+v", k, tr.Ledger, tr.Drops)
	}
	got := map[string]int{}
	for _, z := range GPUZones(tr) {
		got[tr.Name(z.Name)]++
	}
	all := 0
	for name, n := range b.want.zones {
		if !layerZone(name) {
			all += n
		}
	}
	for name, n := range got {
		if w := b.want.zones[name]; n > w && !(name == otherLabels && n <= all) {
			p.add("zones", "%d zones %q, the whole script ran %d", n, name, w)
		}
	}
	return p.list
}

// checkDrops holds the trace's losses to the script's: short is the
// executions of zones the profiler could refuse (want.slack) that the
// trace does not hold, each of which it must count no_frame.
func (b Bare) checkDrops(p *problems, d timeline.Drops, short int) {
	w := b.want
	if w.exact && (d.Unended != w.unended || d.Unsubmitted != w.unsubmitted || d.NoFrame != w.noFrame+uint64(short)) {
		p.add("drops", "unended %d, unsubmitted %d, no_frame %d; the script left %d open, %d never run, %d on recordings refused (and %d executions of zones the layer could refuse are missing)",
			d.Unended, d.Unsubmitted, d.NoFrame, w.unended, w.unsubmitted, w.noFrame, short)
	}
	rest := d
	rest.Unended, rest.Unsubmitted, rest.NoFrame = 0, 0, 0
	if b.Shape.Work {
		rest.Work = 0 // which zones have counts, the layer's rules say
	}
	if !w.exact {
		rest.QueryLimit = 0
	}
	if rest.Total() != 0 {
		p.add("drops", "lost for causes the script never made: %+v", rest)
	}
}

// inWindow reports whether z lies within the window of one of subs,
// with its error bound.
func inWindow(j BareJournal, subs []int, z timeline.Span) bool {
	for _, sub := range subs {
		t0, ok0 := j.t0[sub]
		t1, ok1 := j.done[sub]
		if ok0 && ok1 && InWindow(z, t0, t1) {
			return true
		}
	}
	return false
}

// inAcross reports whether z lies within the window from the start of
// one submission to the end of another, of one of the pairs given.
func inAcross(j BareJournal, pairs [][2]int, z timeline.Span) bool {
	for _, pr := range pairs {
		t0, ok0 := j.t0[pr[0]]
		t1, ok1 := j.done[pr[1]]
		if ok0 && ok1 && InWindow(z, t0, t1) {
			return true
		}
	}
	return false
}

// parseLabel reads a label's name: its kind and the depth of its zone.
// seatsShared says which queue tracks hold zones of two devices alive at
// once. A seat is one device's at a time, but one made after another left
// may take its track (the profiler's identity rule). The program's
// devices are told apart by when the loop made them again (their epoch,
// from the frame in the label, where it tells); a thread's device makes
// one zone.
func (b Bare) seatsShared(tr *timeline.Trace, zones []timeline.Span) []string {
	type use struct{ from, to int64 }
	uses := map[timeline.TrackID]map[string]*use{}
	threadZones := 0
	for _, z := range zones {
		if k := tr.Track(z.Track); k == nil || k.Kind != timeline.TrackGPUQueue {
			continue
		}
		name := tr.Name(z.Name)
		var who string
		switch kind, _, ok := parseLabel(name); {
		case ok:
			e, sure := b.epochOf(labelFrame(name))
			if !sure {
				continue
			}
			who = fmt.Sprintf("the program's device (made %d times before)", e)
			if kind == labelTwin {
				who = fmt.Sprintf("the program's second device (made %d times before)", e)
			}
		case name == labelThread:
			threadZones++
			who = fmt.Sprintf("a device another thread made (%q, zone %d)", labelThread, threadZones)
		default:
			continue
		}
		if uses[z.Track] == nil {
			uses[z.Track] = map[string]*use{}
		}
		if u := uses[z.Track][who]; u == nil {
			uses[z.Track][who] = &use{z.Start, z.End}
		} else {
			u.from, u.to = min(u.from, z.Start), max(u.to, z.End)
		}
	}
	var out []string
	for t, byWho := range uses {
		for a, ua := range byWho {
			for c, uc := range byWho {
				if a < c && ua.from < uc.to && uc.from < ua.to {
					out = append(out, fmt.Sprintf("track %d holds zones of %s over [%d, %d] and of %s over [%d, %d]: two devices at once", t, a, ua.from, ua.to, c, uc.from, uc.to))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// labelFrame is the frame in a label's name (parseLabel's form).
func labelFrame(name string) int {
	var frame int
	fmt.Sscanf(name, "f%d.", &frame)
	return frame
}

// epochOf is how many times the loop made its device again before or at
// the start of the frame whose label says v. A label holds the frame
// modulo 100 (labelName): v may be frame v, v+100, ...; where those
// frames fall in different epochs, sure is false and the zone says
// nothing of its device.
func (b Bare) epochOf(v int) (epoch int, sure bool) {
	epoch = -1
	for f := v; f < max(b.Loop.Frames, v+1); f += 100 {
		n := 0
		for at, what := range b.Loop.Recreate {
			if what == RecreateDevice && at <= f {
				n++
			}
		}
		if epoch >= 0 && n != epoch {
			return 0, false
		}
		epoch = n
	}
	return epoch, true
}

func parseLabel(name string) (kind byte, depth int, ok bool) {
	var frame int
	var k rune
	if _, err := fmt.Sscanf(name, "f%d.%c%d", &frame, &k, &depth); err != nil {
		return 0, 0, false
	}
	return byte(k), depth, true
}

// bareNesting holds a zone to the depth its name says (Nesting), a
// secondary's to lying within a primary's command buffer zone, or, with
// orphans, within one or none; a rendering instance's to depth 1, but
// with anyRenderDepth.
func bareNesting(tr *timeline.Trace, z timeline.Span, primaries []timeline.Span, orphans, anyRenderDepth bool) string {
	name := tr.Name(z.Name)
	kind, depth, ok := parseLabel(name)
	switch {
	case ok && kind == labelCarried:
		return "" // on a lane of its own, among the carried
	case ok && kind == labelInterleaved, name == zoneRendering && anyRenderDepth:
		return "" // it and a rendering instance do not nest
	case name == zoneSecondary || ok && kind == labelSecondary:
		if orphans && orphan(z, primaries) {
			return ""
		}
		return Nesting(tr, z, 0, true, primaries)
	case name == zoneCommandBuffer:
		depth, ok = 0, true
	case name == zoneRendering:
		depth, ok = 1, true
	}
	if !ok {
		return ""
	}
	return Nesting(tr, z, depth, false, nil)
}

// orphan reports whether a secondary's zone z may be one a refused
// primary executed: it meets no primary's command buffer zone on its
// queue's track, where that primary ran (one shifted out of its own
// primary by the clock model would, in all but the farthest shifts).
func orphan(z timeline.Span, primaries []timeline.Span) bool {
	for _, p := range primaries {
		if p.Track == z.Track && p.Start <= z.End && z.Start <= p.End {
			return false
		}
	}
	return true
}
