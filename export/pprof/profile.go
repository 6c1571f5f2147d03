package pprof

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// Sample types, in the order of Sample.Value.
const (
	GPUTime = "gpu_time"
	CPUTime = "cpu_time"
)

// Write writes t to w as a gzip-compressed pprof profile.
func Write(w io.Writer, t *timeline.Trace) error {
	return Build(t).Write(w)
}

// Totals returns the GPU and CPU busy time of t: the sum of the durations
// of the outermost spans of every GPU queue and lane track, and of every
// CPU track. They are the totals of the work samples of the profile Build
// makes: its gpu_time also holds the GPU's idle time in frames, in
// samples labelled kind=idle (see the package comment).
func Totals(t *timeline.Trace) (gpu, cpu int64) {
	for _, s := range t.Spans {
		if s.Depth != 0 {
			continue
		}
		tr := t.Track(s.Track)
		if tr == nil {
			continue
		}
		switch tr.Kind {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			gpu += s.Dur()
		case timeline.TrackCPU:
			cpu += s.Dur()
		}
	}
	return gpu, cpu
}

type funcKey struct {
	name string
	gpu  bool
	idle bool // a function of the GPU's idle time (see idle), kept apart from zones of its name
}

type sampleKey struct {
	node  int32
	track timeline.TrackID
	frame uint64
}

// Bounds on the profile, which the format makes as large as the sum of
// its samples' stack depths: the stacks of deeply nested spans would
// otherwise make it quadratic in the input.
const (
	// maxStackDepth is the most zones in a sample's stack. Spans nested
	// deeper are folded into a frame named foldedName under their
	// ancestor at that depth, which takes their self time.
	maxStackDepth = 128
	// maxStackFrames bounds the frames of all samples' stacks together.
	// Past it, a new sample's stack is cut to foldedName under its track.
	maxStackFrames = 16 << 20
	// foldedName names the frame that stands for zones folded away.
	foldedName = "(deeper zones folded)"
	// maxFunctions bounds the distinct zone names: the spans of further
	// names count under otherName.
	maxFunctions = 1 << 18
	// otherName names the function of the zones past maxFunctions.
	otherName = "(other zones)"
	// maxSamples bounds the samples (distinct stack, track and frame).
	// Past it, the self time of a span that would make a new sample goes
	// to its track's own sample.
	maxSamples = 1 << 19
)

// functionLimit and sampleLimit are maxFunctions and maxSamples, lowered
// by tests.
var functionLimit, sampleLimit = maxFunctions, maxSamples

// node is a stack, interned: its leaf and the stack it is called from.
type node struct {
	parent int32 // -1 at a track's root
	loc    *profile.Location
	depth  int32 // zones below the track
	stack  []*profile.Location
}

type nodeKey struct {
	parent int32
	loc    uint64
}

type builder struct {
	p           *profile.Profile
	locs        map[funcKey]*profile.Location
	samples     map[sampleKey]*profile.Sample
	nodes       []node
	nodeIDs     map[nodeKey]int32
	frameLabels map[uint64]map[string][]int64
	frames      int   // stack frames of all samples
	folded      int64 // spans folded for depth
	cut         int64 // samples whose stacks were cut for size
	others      int64 // spans whose names went to otherName
	merged      int64 // spans whose time went to their track's sample

	// stats are the statistics of the GPU zones' work: a sample type
	// each. work holds the work of the samples that have some.
	stats       timeline.PipelineStats
	work        map[*profile.Sample]*sampleWork
	overcounted int64 // work values below 0, made 0
	capped      int64 // work values past int64, made 2^63-1
}

// frameLabel returns the NumLabel of a frame's samples.
func (b *builder) frameLabel(f uint64) map[string][]int64 {
	l := b.frameLabels[f]
	if l == nil {
		l = map[string][]int64{"frame": {int64(f)}}
		b.frameLabels[f] = l
	}
	return l
}

// node interns the stack of loc called from parent.
func (b *builder) node(parent int32, loc *profile.Location) int32 {
	k := nodeKey{parent, loc.ID}
	if id, ok := b.nodeIDs[k]; ok {
		return id
	}
	id := int32(len(b.nodes))
	d := int32(0)
	if parent >= 0 {
		d = b.nodes[parent].depth + 1
	}
	b.nodes = append(b.nodes, node{parent: parent, loc: loc, depth: d})
	b.nodeIDs[k] = id
	return id
}

// stack returns the locations of a node's stack, leaf first, made once
// and shared by every sample of that stack.
func (b *builder) stack(id int32) []*profile.Location {
	n := &b.nodes[id]
	if n.stack != nil {
		return n.stack
	}
	if b.frames+int(n.depth)+1 > maxStackFrames {
		b.cut++
		root := id
		for b.nodes[root].parent >= 0 {
			root = b.nodes[root].parent
		}
		return []*profile.Location{b.loc(foldedName, false), b.nodes[root].loc}
	}
	st := make([]*profile.Location, 0, n.depth+1)
	for i := id; i >= 0; i = b.nodes[i].parent {
		st = append(st, b.nodes[i].loc)
	}
	b.frames += len(st)
	n.stack = st
	return st
}

func (b *builder) loc(name string, gpu bool) *profile.Location {
	return b.locOf(funcKey{name: name, gpu: gpu})
}

// locOf returns the location of function k, made the first time. Past
// functionLimit functions, a zone's is otherName's; the few of the GPU's
// idle time are always their own.
func (b *builder) locOf(k funcKey) *profile.Location {
	if l := b.locs[k]; l != nil {
		return l
	}
	if len(b.p.Function) >= functionLimit && !k.idle && k.name != otherName && k.name != foldedName {
		b.others++
		return b.loc(otherName, k.gpu)
	}
	file := "cpu"
	switch {
	case k.idle:
		file = "idle"
	case k.gpu:
		file = "gpu"
	}
	name := k.name
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.p.Function = append(b.p.Function, f)
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: f}}}
	b.p.Location = append(b.p.Location, l)
	b.locs[k] = l
	return l
}

// newBuilder returns a builder of an empty profile.
func newBuilder() builder {
	return builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{
				{Type: GPUTime, Unit: "nanoseconds"},
				{Type: CPUTime, Unit: "nanoseconds"},
			},
			DefaultSampleType: GPUTime,
			PeriodType:        &profile.ValueType{Type: GPUTime, Unit: "nanoseconds"},
			Period:            1,
		},
		locs:        map[funcKey]*profile.Location{},
		samples:     map[sampleKey]*profile.Sample{},
		nodeIDs:     map[nodeKey]int32{},
		frameLabels: map[uint64]map[string][]int64{},
	}
}

// sample returns the sample of stack nd on a track in a frame (0: none),
// made the first time; past sampleLimit samples, the track's own sample
// (stack root) instead. The label maps are shared, read-only, by the
// samples of a track and of a frame.
func (b *builder) sample(nd int32, track timeline.TrackID, frame uint64, root int32, labels map[string][]string) *profile.Sample {
	k := sampleKey{nd, track, frame}
	smp := b.samples[k]
	if smp == nil && len(b.p.Sample) >= sampleLimit {
		b.merged++
		k = sampleKey{root, track, 0}
		nd = root
		smp = b.samples[k]
	}
	if smp == nil {
		smp = &profile.Sample{
			Location: b.stack(nd),
			Value:    []int64{0, 0},
			Label:    labels,
		}
		if k.frame != 0 {
			smp.NumLabel = b.frameLabel(k.frame)
		}
		b.samples[k] = smp
		b.p.Sample = append(b.p.Sample, smp)
	}
	return smp
}

// finish adds the comments `go tool pprof -comments` shows: the trace's
// drops and books, and what the bounds folded, merged or cut.
func (b *builder) finish(d timeline.Drops, l timeline.Ledger) {
	var cs []string
	if d.Total() > 0 || d.Misuse > 0 {
		cs = append(cs, DropsComment(d))
	}
	if !(l == timeline.Ledger{}) {
		cs = append(cs, LedgerComment(l, d))
	}
	if b.folded > 0 {
		cs = append(cs, fmt.Sprintf("framescope folded %d spans nested deeper than %d zones into %q", b.folded, maxStackDepth, foldedName))
	}
	if b.others > 0 {
		cs = append(cs, fmt.Sprintf("framescope counted %d spans under %q: their names were past %d", b.others, otherName, functionLimit))
	}
	if b.merged > 0 {
		cs = append(cs, fmt.Sprintf("framescope gave the self time of %d spans to their track: the samples were past %d", b.merged, sampleLimit))
	}
	if b.cut > 0 {
		cs = append(cs, fmt.Sprintf("framescope cut %d stacks to %q under their track: the stacks passed %d frames", b.cut, foldedName, maxStackFrames))
	}
	if b.overcounted > 0 {
		cs = append(cs, fmt.Sprintf("framescope gave %d work values 0, not less: the zones inside counted more than the zones around them", b.overcounted))
	}
	if b.capped > 0 {
		cs = append(cs, fmt.Sprintf("framescope gave %d work values %d, the most a profile holds: they were more", b.capped, int64(math.MaxInt64)))
	}
	b.p.Comments = append(cs, b.p.Comments...)
}

func commentf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// Build makes the profile of t. Spans are nested on each track by their
// times (Depth breaks ties between a zero-length span and a sibling that
// ends where it starts); spans on frame and counter tracks, or on unknown
// tracks, are left out. The GPU's idle time in t's frames is added by
// cause (see the package comment).
func Build(t *timeline.Trace) *profile.Profile {
	if t == nil {
		t = &timeline.Trace{} // a profile of nothing, as of an empty trace
	}
	b := newBuilder()
	byTrack := map[timeline.TrackID][]int{}
	var first, last int64
	for i, s := range t.Spans {
		byTrack[s.Track] = append(byTrack[s.Track], i)
		if i == 0 || s.Start < first {
			first = s.Start
		}
		last = max(last, s.End)
	}
	if len(t.Spans) > 0 {
		b.p.DurationNanos = last - first
	}
	ids := make([]timeline.TrackID, 0, len(byTrack))
	for id := range byTrack {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		tr := t.Track(id)
		if tr == nil {
			continue
		}
		var gpu bool
		root, queue := tr.Name, ""
		switch tr.Kind {
		case timeline.TrackCPU:
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			gpu = true
			if p := t.Track(tr.Parent); tr.Kind == timeline.TrackGPULane && p != nil {
				root = p.Name
			}
			queue = queueString(tr.Queue)
		default:
			continue
		}
		b.track(t, tr, byTrack[id], b.loc(root, gpu), gpu, queue)
	}
	b.idle(t)
	b.finishWork()
	b.finish(t.Drops, t.Ledger)
	return b.p
}

func queueString(q timeline.Queue) string {
	s := q.Device + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
	if q.Flags != "" {
		s += " (" + q.Flags + ")"
	}
	return s
}

// track adds the samples of one track's spans (indices into t.Spans).
func (b *builder) track(t *timeline.Trace, tr *timeline.Track, idx []int, root *profile.Location, gpu bool, queue string) {
	spans := t.Spans
	slices.SortFunc(idx, func(i, j int) int { return timeline.CompareSpans(&spans[i], &spans[j]) })
	self := make([]int64, len(idx))
	var stack []int   // positions in idx
	var nodes []int32 // the stack node of each span on stack
	// Of each span on stack: its sample, when its work made it already,
	// and its owners (see countWork), nil when it and the spans around
	// it have no counts.
	var smps []*profile.Sample
	var owns []*owners
	rootNode := b.node(-1, root)
	labels := map[string][]string{"track": {tr.Name}}
	if queue != "" {
		labels["queue"] = []string{queue}
	}
	flush := func() {
		top := stack[len(stack)-1]
		nd := nodes[len(nodes)-1]
		smp := smps[len(smps)-1]
		stack, nodes = stack[:len(stack)-1], nodes[:len(nodes)-1]
		smps, owns = smps[:len(smps)-1], owns[:len(owns)-1]
		s := &spans[idx[top]]
		if self[top] <= 0 {
			return
		}
		if smp == nil {
			smp = b.sample(nd, tr.ID, s.Frame, rootNode, labels)
		}
		if gpu {
			smp.Value[0] += self[top]
		} else {
			smp.Value[1] += self[top]
		}
	}
	for pos, i := range idx {
		s := &spans[i]
		for len(stack) > 0 && !timeline.Encloses(&spans[idx[stack[len(stack)-1]]], s) {
			flush()
		}
		if gpu && s.Work != nil {
			b.stats |= s.Work.Stats & timeline.AllPipelineStats
		}
		self[pos] = s.Dur()
		if len(stack) > 0 {
			self[stack[len(stack)-1]] -= s.Dur()
		}
		parent := rootNode
		if len(nodes) > 0 {
			parent = nodes[len(nodes)-1]
		}
		var nd int32
		switch {
		case len(stack) < maxStackDepth:
			nd = b.node(parent, b.loc(t.Name(s.Name), gpu))
		case len(stack) == maxStackDepth:
			nd = b.node(parent, b.loc(foldedName, gpu))
			b.folded++
		default:
			nd = parent // already the folded frame
			b.folded++
		}
		var smp *profile.Sample
		var own *owners
		if len(owns) > 0 {
			own = owns[len(owns)-1]
		}
		// A zone's counts are its sample's, less those of the zones with
		// counts inside it. Zones folded for depth count with the one
		// folded at maxStackDepth, which takes its whole count.
		if c := counted(s.Work); c != 0 && gpu && len(stack) <= maxStackDepth {
			smp = b.sample(nd, tr.ID, s.Frame, rootNode, labels)
			own = b.countWork(smp, s.Work, c, own)
		}
		stack = append(stack, pos)
		nodes = append(nodes, nd)
		smps = append(smps, smp)
		owns = append(owns, own)
	}
	for len(stack) > 0 {
		flush()
	}
}

// LedgerComment is the profile comment that gives the trace's books
// against its drops: "framescope ledger: zones 120 = 118 delivered + 0
// open + 2 lost; spans ...; flows ...", and "(does not balance)" after a
// book that does not.
func LedgerComment(l timeline.Ledger, d timeline.Drops) string {
	var b strings.Builder
	b.WriteString("framescope ledger:")
	for k := range books.NumKinds {
		if k > 0 {
			b.WriteByte(';')
		}
		bk := books.Of(&l, k)
		fmt.Fprintf(&b, " %s %d = %d delivered + %d open + %d lost", k, bk.Issued, bk.Delivered, bk.Open, books.Lost(&l, k, d).Total())
		if !books.Balances(&l, k, d) {
			b.WriteString(" (does not balance)")
		}
	}
	return b.String()
}

// DropsComment is the profile comment that lists t.Drops: "framescope
// dropped N: query_limit 1, no_frame 2, ..." with every cause, misuse last.
func DropsComment(d timeline.Drops) string {
	var b strings.Builder
	if d.Overflows() {
		fmt.Fprintf(&b, "framescope dropped at least %d (the causes add up past 2^64-1):", d.Total())
	} else {
		fmt.Fprintf(&b, "framescope dropped %d:", d.Total())
	}
	for c := range books.NumCauses {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d", c, *books.Count(&d, c))
	}
	return b.String()
}
