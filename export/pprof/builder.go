package pprof

import (
	"cmp"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/timeline"
)

// Options configure a [Builder]. The zero Options label each sample with
// its frame, as [Build] does.
type Options struct {
	// OmitFrames leaves the frame label off the samples, so that spans of
	// one stack and track share one sample whatever their frame: the
	// profile then grows with its distinct stacks, not with the frames of
	// a long run.
	OmitFrames bool
}

// Bounds of a Builder's memory besides the profile itself.
const (
	// maxPending bounds the spans a Builder holds back while it waits
	// for the span that encloses them (a later batch may bring it). Past
	// it, the oldest go under orphanName, as do those still waiting when
	// the profile is made.
	maxPending = 1 << 14
	// orphanName names the frame that stands for an enclosing zone that
	// never reached the Builder: its Depth said it had one.
	orphanName = "(enclosing zone not in the profile)"
	// recentPerDepth is how many spans of each depth of a track a
	// Builder keeps, for the children that come in a later batch than
	// their parent.
	recentPerDepth = 256
)

// pendingLimit is maxPending, lowered by tests.
var pendingLimit = maxPending

// ErrFinished is returned by [Builder.WriteBatch] after [Builder.Profile].
var ErrFinished = errors.New("pprof: the profile is already made")

// A Builder makes the profile of a trace that arrives in batches: it is a
// [timeline.Sink], so a recorder, a live capture or a reader's batches
// can feed it, and it keeps the profile, not the spans. A batch is what
// timeline.Sink says: the name table and tracks so far, the spans new
// since the last batch, in any order, each with its Depth in the whole
// stream. A span is placed under its parent, the span of Depth one less
// on its track that encloses it ([timeline.Encloses]), which may come in
// an earlier batch or a later one; a span whose parent has not come is
// held back until it does, at most 16Ki of them, and placed under a
// frame named "(enclosing zone not in the profile)" when it never does. A Builder keeps the last 256
// spans of each depth of a track for the children still to come: a child
// that comes after its parent has gone from those leaves its time with
// the parent, which took it whole. The profile's comments count both. The
// profile is the one [Build] makes of the whole trace when each span's
// Depth is its nesting depth, as the recorder and the readers give it,
// and no child comes 256 spans of its parent's depth after it, less
// Build's samples of the GPU's idle time: a frame's gaps take the frames
// after it and all their spans, which a Builder does not keep.
//
// The methods of a Builder must not be called concurrently.
type Builder struct {
	b        builder
	opt      Options
	finished bool
	names    []string
	tracks   map[timeline.TrackID]*trackTree
	drops    timeline.Drops
	ledger   timeline.Ledger
	first    int64
	last     int64
	spans    int
	pending  int        // spans held back, over all tracks
	fifo     []*waiting // the spans held back, oldest first; some placed since
	head     int        // fifo[:head] are gone
	orphans  int64
	late     int64 // spans whose parent had been let go: their time stayed with it
	invalid  int64 // spans with End < Start, or a duration past int64
	scratch  []int
	scratchW []*waiting
}

// trackTree is one track's state in a Builder: the recent spans of each
// depth, the spans waiting for their parent, and the sample labels.
type trackTree struct {
	id     timeline.TrackID
	gpu    bool
	skip   bool // neither a CPU nor a GPU track: its spans are left out
	root   int32
	labels map[string][]string
	recent [][]placed // by depth, sorted by start
	// gone holds, by depth, the latest end of the spans let go from
	// recent: a child that begins before it may have come after its
	// parent left.
	gone []int64
	// wait holds, by depth, the spans held back for their parent, sorted
	// by start; those placed since stay, marked, until half are.
	wait  [][]*waiting
	waitN []int // by depth, how many of wait are still waiting
}

// placed is a span already in the profile: its stack and the sample that
// took its time, from which its children's time is taken back.
type placed struct {
	span timeline.Span
	node int32
	smp  *profile.Sample
	own  *owners // see countWork; nil when no zone around has counts
}

type waiting struct {
	span   timeline.Span
	tt     *trackTree
	placed bool
}

// unknownTrack stands for a track the batch does not define.
var unknownTrack = &trackTree{skip: true}

// NewBuilder returns an empty Builder.
func NewBuilder(o Options) *Builder {
	return &Builder{b: newBuilder(), opt: o, tracks: map[timeline.TrackID]*trackTree{}}
}

// WriteBatch adds a batch's spans to the profile and keeps its Drops,
// which are running totals. It returns ErrFinished once Profile was
// called, and nil otherwise.
func (pb *Builder) WriteBatch(t *timeline.Trace) error {
	if pb.finished {
		return ErrFinished
	}
	if t == nil {
		return nil
	}
	pb.names = t.Names
	pb.drops, pb.ledger = t.Drops, t.Ledger
	idx := pb.scratch[:0]
	for i := range t.Spans {
		s := &t.Spans[i]
		if pb.tree(t, s.Track).skip {
			continue
		}
		if s.Work != nil && pb.tracks[s.Track].gpu {
			pb.b.stats |= s.Work.Stats & timeline.AllPipelineStats
		}
		if s.End < s.Start || s.Dur() < 0 {
			pb.invalid++
			continue
		}
		idx = append(idx, i)
		if pb.spans == 0 || s.Start < pb.first {
			pb.first = s.Start
		}
		pb.last = max(pb.last, s.End)
		pb.spans++
	}
	// Parents before their children, so that one pass places a batch.
	slices.SortFunc(idx, func(i, j int) int { return timeline.CompareSpans(&t.Spans[i], &t.Spans[j]) })
	for _, i := range idx {
		s := &t.Spans[i]
		pb.add(pb.tracks[s.Track], s)
	}
	pb.scratch = idx[:0]
	return nil
}

// tree returns the state of track id, made from the batch's track list
// the first time.
func (pb *Builder) tree(t *timeline.Trace, id timeline.TrackID) *trackTree {
	if tt := pb.tracks[id]; tt != nil {
		return tt
	}
	tr := t.Track(id)
	if tr == nil {
		return unknownTrack // not kept: the track may be defined in a later batch
	}
	tt := &trackTree{id: id, skip: true}
	pb.tracks[id] = tt
	root, queue := tr.Name, ""
	switch tr.Kind {
	case timeline.TrackCPU:
	case timeline.TrackGPUQueue, timeline.TrackGPULane:
		tt.gpu = true
		if p := t.Track(tr.Parent); tr.Kind == timeline.TrackGPULane && p != nil {
			root = p.Name
		}
		queue = queueString(tr.Queue)
	default:
		return tt
	}
	tt.skip = false
	tt.root = pb.b.node(-1, pb.b.loc(root, tt.gpu))
	tt.labels = map[string][]string{"track": {tr.Name}}
	if queue != "" {
		tt.labels["queue"] = []string{queue}
	}
	return tt
}

// add places s, or holds it back until its parent comes.
func (pb *Builder) add(tt *trackTree, s *timeline.Span) {
	if s.Depth > maxStackDepth {
		// Its time is already in its ancestor at maxStackDepth, whose
		// folded frame takes all time below it.
		pb.b.folded++
		return
	}
	if s.Depth == 0 {
		pb.place(tt, s, tt.root, nil, nil)
		return
	}
	if p := tt.parentOf(s); p != nil {
		pb.place(tt, s, p.node, p.smp, p.own)
		return
	}
	w := &waiting{span: *s, tt: tt}
	d := int(s.Depth)
	for d >= len(tt.wait) {
		tt.wait, tt.waitN = append(tt.wait, nil), append(tt.waitN, 0)
	}
	l := tt.wait[d]
	at := len(l)
	if at > 0 && l[at-1].span.Start > s.Start { // late: keep the list sorted by start
		at, _ = slices.BinarySearchFunc(l, s.Start, func(w *waiting, start int64) int {
			if w.span.Start <= start {
				return -1
			}
			return 1
		})
	}
	tt.wait[d] = slices.Insert(l, at, w)
	tt.waitN[d]++
	pb.fifo = append(pb.fifo, w)
	pb.pending++
	if pb.pending > pendingLimit {
		pb.orphanOldest()
	}
}

// parentOf returns the span of depth s.Depth-1 that encloses s, or nil.
func (tt *trackTree) parentOf(s *timeline.Span) *placed {
	d := int(s.Depth) - 1
	if d >= len(tt.recent) {
		return nil
	}
	r := tt.recent[d]
	// The last span of that depth starting at or before s.
	i, _ := slices.BinarySearchFunc(r, s.Start, func(p placed, start int64) int {
		if p.span.Start <= start {
			return -1
		}
		return 1
	})
	for i--; i >= 0; i-- {
		p := &r[i]
		if timeline.Encloses(&p.span, s) {
			return p
		}
		if p.span.End < s.Start {
			break // siblings of one depth do not overlap: none before encloses s
		}
	}
	return nil
}

// place adds s's time to its stack under parent, takes it from its
// parent's sample, does the same with its counts (parentOwn: see
// countWork), and keeps s for the children still to come.
func (pb *Builder) place(tt *trackTree, s *timeline.Span, parent int32, parentSmp *profile.Sample, parentOwn *owners) {
	var nd int32
	if s.Depth == maxStackDepth {
		nd = pb.b.node(parent, pb.b.loc(foldedName, tt.gpu))
		pb.b.folded++
	} else {
		nd = pb.b.node(parent, pb.b.loc(pb.name(s.Name), tt.gpu))
	}
	frame := s.Frame
	if pb.opt.OmitFrames {
		frame = 0
	}
	var smp *profile.Sample // none for a zero-length span without counts: it has neither time nor work
	if d := s.Dur(); d > 0 {
		smp = pb.b.sample(nd, tt.id, frame, tt.root, tt.labels)
		smp.Value[tt.value()] += d
		if parentSmp != nil {
			parentSmp.Value[tt.value()] -= d
		}
	}
	own := parentOwn
	if c := counted(s.Work); c != 0 && tt.gpu {
		if smp == nil {
			smp = pb.b.sample(nd, tt.id, frame, tt.root, tt.labels)
		}
		own = pb.b.countWork(smp, s.Work, c, parentOwn)
	}
	if s.Depth >= maxStackDepth {
		return // no child of it needs it: they are folded
	}
	for int(s.Depth) >= len(tt.recent) {
		tt.recent = append(tt.recent, nil)
	}
	r := tt.recent[s.Depth]
	at := len(r)
	for at > 0 && r[at-1].span.Start > s.Start {
		at-- // late: keep the list sorted by start
	}
	r = slices.Insert(r, at, placed{*s, nd, smp, own})
	if over := len(r) - recentPerDepth; over > 0 {
		for len(tt.gone) <= int(s.Depth) {
			tt.gone = append(tt.gone, math.MinInt64)
		}
		for _, p := range r[:over] {
			tt.gone[s.Depth] = max(tt.gone[s.Depth], p.span.End)
		}
		r = r[:copy(r, r[over:])]
	}
	tt.recent[s.Depth] = r
	pb.adopt(tt, s, nd, smp, own)
}

// adopt places the spans held back for s: those one deeper that s
// encloses.
func (pb *Builder) adopt(tt *trackTree, s *timeline.Span, nd int32, smp *profile.Sample, own *owners) {
	d := int(s.Depth) + 1
	if d >= len(tt.wait) || tt.waitN[d] == 0 {
		return
	}
	l := tt.wait[d]
	i, _ := slices.BinarySearchFunc(l, s.Start, func(w *waiting, start int64) int { return cmp.Compare(w.span.Start, start) })
	for ; i < len(l) && l[i].span.Start <= s.End; i++ {
		if w := l[i]; !w.placed && timeline.Encloses(s, &w.span) {
			w.placed = true
			tt.waitN[d]--
			pb.pending--
			pb.place(tt, &w.span, nd, smp, own)
		}
	}
	tt.compact(d)
}

// compact drops the placed spans from the list of depth d once they are
// half of it.
func (tt *trackTree) compact(d int) {
	l := tt.wait[d]
	if len(l) < 64 || 2*tt.waitN[d] > len(l) {
		return
	}
	k := 0
	for _, w := range l {
		if !w.placed {
			l[k] = w
			k++
		}
	}
	clear(l[k:])
	tt.wait[d] = l[:k]
}

func (tt *trackTree) value() int {
	if tt.gpu {
		return 0
	}
	return 1
}

func (pb *Builder) name(id timeline.NameID) string {
	if int(id) < len(pb.names) {
		return pb.names[id]
	}
	return ""
}

// orphanOldest places the span held back longest under orphanName.
func (pb *Builder) orphanOldest() {
	for pb.head < len(pb.fifo) {
		w := pb.fifo[pb.head]
		pb.fifo[pb.head] = nil
		pb.head++
		if !w.placed {
			w.placed = true
			d := int(w.span.Depth)
			w.tt.waitN[d]--
			pb.pending--
			pb.orphan(w.tt, &w.span)
			w.tt.compact(d)
			break
		}
	}
	if pb.head > len(pb.fifo)/2 {
		pb.fifo = pb.fifo[:copy(pb.fifo, pb.fifo[pb.head:])]
		pb.head = 0
	}
}

// orphan places s, whose parent never came, under orphanName; or, when
// its parent may have come and been let go already (recentPerDepth), it
// leaves s's time with that parent, which took it whole.
func (pb *Builder) orphan(tt *trackTree, s *timeline.Span) {
	if d := int(s.Depth) - 1; d < len(tt.gone) && s.Start < tt.gone[d] {
		pb.late++
		for len(tt.gone) <= int(s.Depth) {
			tt.gone = append(tt.gone, math.MinInt64)
		}
		tt.gone[s.Depth] = max(tt.gone[s.Depth], s.End) // its own children are late too
		return
	}
	pb.orphans++
	pb.place(tt, s, pb.b.node(tt.root, pb.b.loc(orphanName, tt.gpu)), nil, nil)
}

// Profile places the spans still held back under their stand-in parent
// (see Builder) and returns
// the profile. It ends the stream: later batches are refused.
func (pb *Builder) Profile() *profile.Profile {
	if !pb.finished {
		pb.finished = true
		// What still waits, shallowest first: a span placed here may
		// take in deeper ones (adopt), and the rest go under orphanName.
		for _, w := range pb.fifo[pb.head:] {
			if !w.placed {
				pb.scratchW = append(pb.scratchW, w)
			}
		}
		slices.SortFunc(pb.scratchW, func(a, b *waiting) int {
			if c := cmp.Compare(a.span.Depth, b.span.Depth); c != 0 {
				return c
			}
			return timeline.CompareSpans(&a.span, &b.span)
		})
		for _, w := range pb.scratchW {
			if w.placed {
				continue
			}
			w.placed = true
			w.tt.waitN[w.span.Depth]--
			if p := w.tt.parentOf(&w.span); p != nil {
				pb.place(w.tt, &w.span, p.node, p.smp, p.own)
			} else {
				pb.orphan(w.tt, &w.span)
			}
		}
		pb.fifo, pb.scratchW = nil, nil
		for _, tt := range pb.tracks {
			tt.wait, tt.waitN, tt.recent = nil, nil, nil
		}
		pb.pending = 0
		// A span wholly covered by its children leaves a sample of no
		// time, which Build never makes; with work, finishWork drops
		// those of no time and no work.
		pb.b.finishWork()
		pb.b.p.Sample = slices.DeleteFunc(pb.b.p.Sample, func(s *profile.Sample) bool { return s.Value[0] == 0 && s.Value[1] == 0 && len(s.Value) == 2 })
		if pb.spans > 0 {
			pb.b.p.DurationNanos = pb.last - pb.first
			if pb.b.p.DurationNanos < 0 {
				pb.b.p.DurationNanos = math.MaxInt64 // past int64
			}
		}
		pb.b.finish(pb.drops, pb.ledger)
		if pb.orphans > 0 {
			pb.b.p.Comments = append(pb.b.p.Comments, commentf("framescope placed %d spans under %q: the zone enclosing them was not in the stream", pb.orphans, orphanName))
		}
		if pb.late > 0 {
			pb.b.p.Comments = append(pb.b.p.Comments, commentf("framescope left the time of %d spans with the zone enclosing them: they came after the Builder had let it go", pb.late))
		}
		if pb.invalid > 0 {
			pb.b.p.Comments = append(pb.b.p.Comments, commentf("framescope left out %d spans that end before they start or last past int64", pb.invalid))
		}
	}
	return pb.b.p
}

// Write writes the profile (see [Builder.Profile]) to w, gzip-compressed.
func (pb *Builder) Write(w io.Writer) error {
	return pb.Profile().Write(w)
}
