package pprof

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

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
// CPU track. They are the totals of the profile Build makes.
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
}

type sampleKey struct {
	stack string
	track timeline.TrackID
	frame uint64
}

type builder struct {
	p       *profile.Profile
	locs    map[funcKey]*profile.Location
	samples map[sampleKey]*profile.Sample
}

func (b *builder) loc(name string, gpu bool) *profile.Location {
	k := funcKey{name, gpu}
	if l := b.locs[k]; l != nil {
		return l
	}
	file := "cpu"
	if gpu {
		file = "gpu"
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.p.Function = append(b.p.Function, f)
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: f}}}
	b.p.Location = append(b.p.Location, l)
	b.locs[k] = l
	return l
}

// Build makes the profile of t. Spans are nested on each track by their
// times (Depth breaks ties between a zero-length span and a sibling that
// ends where it starts); spans on frame and counter tracks, or on unknown
// tracks, are left out.
func Build(t *timeline.Trace) *profile.Profile {
	b := &builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{
				{Type: GPUTime, Unit: "nanoseconds"},
				{Type: CPUTime, Unit: "nanoseconds"},
			},
			DefaultSampleType: GPUTime,
			PeriodType:        &profile.ValueType{Type: GPUTime, Unit: "nanoseconds"},
			Period:            1,
		},
		locs:    map[funcKey]*profile.Location{},
		samples: map[sampleKey]*profile.Sample{},
	}
	if d := t.Drops; d.Total() > 0 || d.Misuse > 0 {
		// Shown by `go tool pprof -comments`: the profile misses these.
		b.p.Comments = append(b.p.Comments, DropsComment(d))
	}
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
	return b.p
}

func queueString(q timeline.Queue) string {
	s := q.Device + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
	if q.Flags != "" {
		s += " (" + q.Flags + ")"
	}
	return s
}

func contains(t, s *timeline.Span) bool {
	if s.Start < t.Start || s.End > t.End {
		return false
	}
	return s.Start < t.End || s.Depth > t.Depth
}

// track adds the samples of one track's spans (indices into t.Spans).
func (b *builder) track(t *timeline.Trace, tr *timeline.Track, idx []int, root *profile.Location, gpu bool, queue string) {
	spans := t.Spans
	slices.SortFunc(idx, func(i, j int) int {
		a, c := &spans[i], &spans[j]
		switch {
		case a.Start != c.Start:
			return cmp64(a.Start, c.Start)
		case a.End != c.End:
			return cmp64(c.End, a.End)
		}
		return int(a.Depth) - int(c.Depth)
	})
	self := make([]int64, len(idx))
	var stack []int // positions in idx
	var locs []*profile.Location
	var key strings.Builder
	flush := func() {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s := &spans[idx[top]]
		// The stack, leaf first: the zones from top down, then the track.
		locs = locs[:0]
		locs = append(locs, b.loc(t.Name(s.Name), gpu))
		for k := len(stack) - 1; k >= 0; k-- {
			locs = append(locs, b.loc(t.Name(spans[idx[stack[k]]].Name), gpu))
		}
		locs = append(locs, root)
		if self[top] <= 0 {
			return
		}
		key.Reset()
		for _, l := range locs {
			key.WriteString(strconv.FormatUint(l.ID, 36))
			key.WriteByte(',')
		}
		k := sampleKey{key.String(), tr.ID, s.Frame}
		smp := b.samples[k]
		if smp == nil {
			smp = &profile.Sample{
				Location: slices.Clone(locs),
				Value:    []int64{0, 0},
				Label:    map[string][]string{"track": {tr.Name}},
			}
			if queue != "" {
				smp.Label["queue"] = []string{queue}
			}
			if s.Frame != 0 {
				smp.NumLabel = map[string][]int64{"frame": {int64(s.Frame)}}
			}
			b.samples[k] = smp
			b.p.Sample = append(b.p.Sample, smp)
		}
		if gpu {
			smp.Value[0] += self[top]
		} else {
			smp.Value[1] += self[top]
		}
	}
	for pos, i := range idx {
		s := &spans[i]
		for len(stack) > 0 && !contains(&spans[idx[stack[len(stack)-1]]], s) {
			flush()
		}
		self[pos] = s.Dur()
		if len(stack) > 0 {
			self[stack[len(stack)-1]] -= s.Dur()
		}
		stack = append(stack, pos)
	}
	for len(stack) > 0 {
		flush()
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DropsComment is the profile comment that lists t.Drops: "framescope
// dropped N: zones 1, no_slot 2, ..." with every cause, misuse last.
func DropsComment(d timeline.Drops) string {
	var b strings.Builder
	fmt.Fprintf(&b, "framescope dropped %d:", d.Total())
	for c := range timeline.NumDropCauses {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d", c, *d.Count(c))
	}
	return b.String()
}
