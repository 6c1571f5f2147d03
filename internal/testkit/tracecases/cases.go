// Package tracecases holds the timelines that the exporters' conformance
// tests write: every trace kind the Perfetto and Chrome JSON writers must
// get right, shared so that both run the very same cases.
package tracecases

import (
	"strings"

	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/timeline"
)

// A Case is batches written, in order, by one writer.
type Case struct {
	Name    string
	Batches []*timeline.Trace
}

var queueG = timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics+compute"}
var queueC = timeline.Queue{Device: "NVIDIA H200", Family: 2, Index: 0, Flags: "compute"}
var queueT = timeline.Queue{Device: `lavapipe "LLVM 15" ; odd=name`, Family: 1, Index: 3, Flags: "transfer"}

// T0 is a plausible CLOCK_MONOTONIC start, ns.
const T0 = 5_000_000_000

const t0 = T0

// Names returns a name table: the empty name, then n.
func Names(n ...string) []string { return append([]string{""}, n...) }

func names(n ...string) []string { return Names(n...) }

// Span is a span at times relative to T0.
func Span(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16) timeline.Span {
	return timeline.Span{Track: track, Name: name, Start: t0 + start, End: t0 + end, Depth: depth}
}

func sp(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16) timeline.Span {
	return Span(track, name, start, end, depth)
}

// All returns every case, made anew (callers may change them).
func All() []Case {
	cpu := timeline.Track{ID: 1, Kind: timeline.TrackCPU, Name: "main"}
	worker := timeline.Track{ID: 2, Kind: timeline.TrackCPU, Name: "worker", Order: 1}
	gq := timeline.Track{ID: 10, Kind: timeline.TrackGPUQueue, Name: "graphics queue", Queue: queueG, Order: 0}
	gl1 := timeline.Track{ID: 11, Kind: timeline.TrackGPULane, Name: "graphics queue lane 1", Parent: 10, Queue: queueG, Lane: 1}
	gl2 := timeline.Track{ID: 12, Kind: timeline.TrackGPULane, Name: "graphics queue lane 2", Parent: 10, Queue: queueG, Lane: 2}
	cq := timeline.Track{ID: 13, Kind: timeline.TrackGPUQueue, Name: "compute queue", Queue: queueC, Order: 1}
	tq := timeline.Track{ID: 14, Kind: timeline.TrackGPUQueue, Name: "transfer queue", Queue: queueT, Order: -5}
	frames := timeline.Track{ID: 20, Kind: timeline.TrackFrames, Name: "Frames", Order: -1}
	cnt := timeline.Track{ID: 30, Kind: timeline.TrackCounter, Name: "CPU time", Unit: timeline.UnitNs}
	mem := timeline.Track{ID: 31, Kind: timeline.TrackCounter, Name: "memory", Unit: timeline.UnitBytes}
	ratio := timeline.Track{ID: 32, Kind: timeline.TrackCounter, Name: "ratio"}
	proc := timeline.Process{PID: 1234, Name: "demo"}

	var out []Case
	add := func(name string, b ...*timeline.Trace) { out = append(out, Case{name, b}) }

	add("empty", &timeline.Trace{Names: names()})
	add("cpu only", &timeline.Trace{Process: proc, Names: names("frame", "update", "draw", "wait"),
		Tracks: []timeline.Track{cpu, worker},
		Spans: []timeline.Span{
			sp(1, 1, 0, 10_000, 0), sp(1, 2, 100, 4_000, 1), sp(1, 3, 4_000, 9_000, 1), sp(1, 4, 5_000, 6_000, 2),
			sp(2, 4, 50, 7_000, 0), sp(1, 1, 10_000, 20_000, 0),
		}})
	gpu := &timeline.Trace{Process: proc, Names: names("pass", "draw", "copy"),
		Tracks: []timeline.Track{gq, gl1, gl2},
		Spans: []timeline.Span{
			{Track: 10, Name: 1, Start: t0, End: t0 + 8_000, Frame: 1, ErrNs: 2600},
			{Track: 10, Name: 2, Start: t0 + 1_000, End: t0 + 2_000, Frame: 1, Depth: 1, ErrNs: 2600},
			{Track: 11, Name: 1, Start: t0 + 500, End: t0 + 9_000, Frame: 1, ErrNs: 2600},
			{Track: 12, Name: 3, Start: t0 + 700, End: t0 + 9_500, Frame: 2, ErrNs: 3100},
			{Track: 11, Name: 2, Start: t0 + 600, End: t0 + 800, Frame: 2, Depth: 1, ErrNs: 3100},
		},
		Calibrations: []timeline.Calibration{{Track: 10, Time: t0 + 100, ErrNs: 2600.5, DriftPPM: 9.75, Samples: 16}, {Track: 10, Time: t0 + 9_000, ErrNs: 3100, DriftPPM: -19.6, Samples: 32}},
	}
	add("gpu with lanes", gpu)
	add("gpu work", WorkTrace())
	add("several queues", &timeline.Trace{Process: proc, Names: names("a", "b", "c"),
		Tracks: []timeline.Track{cq, gq, tq},
		Spans:  []timeline.Span{sp(13, 1, 0, 100, 0), sp(10, 2, 0, 100, 0), sp(14, 3, 50, 60, 0)}})
	add("flows", &timeline.Trace{Process: proc, Names: names("frame", "vkQueueSubmit", "pass", "zone"),
		Tracks: []timeline.Track{cpu, gq, cq},
		Spans: []timeline.Span{
			sp(1, 1, 0, 10_000, 0), sp(1, 2, 1_000, 1_200, 1), sp(1, 2, 3_000, 3_300, 1),
			sp(10, 3, 2_000, 5_000, 0), sp(10, 4, 2_500, 4_000, 1), sp(13, 3, 4_000, 6_000, 0),
		},
		Flows: []timeline.Flow{{From: 1, To: 3}, {From: 1, To: 5}, {From: 2, To: 4}}})
	add("counters", &timeline.Trace{Process: proc, Names: names(),
		Tracks: []timeline.Track{cnt, mem, ratio},
		Samples: []timeline.Sample{
			{Track: 30, Time: t0, Value: 1_000_000}, {Track: 30, Time: t0 + 16_000_000, Value: 1_250_000},
			{Track: 31, Time: t0 + 5, Value: 1 << 40}, {Track: 32, Time: t0 + 7, Value: 0.125}, {Track: 32, Time: t0 + 9, Value: -3.5},
		}})
	add("drops", &timeline.Trace{Process: proc, Names: names("x"),
		Tracks: []timeline.Track{cpu},
		Spans:  []timeline.Span{sp(1, 1, 0, 10, 0)},
		Drops:  timeline.Drops{QueryLimit: 3, Unended: 1, Spans: 7, Uncalibrated: 2, Evicted: 11, GPUSpans: 5, Untimed: 6}})
	add("unicode and hostile names", &timeline.Trace{
		Process: timeline.Process{PID: 1, Name: "プロセス \"quoted\"\n"},
		Names:   names("フレーム 🎮", `quote " and \ backslash`, "new\nline\ttab", strings.Repeat("long ", 2000), "", "x</script>&amp;", "same", "nul\x00byte", "bad utf8 \xff\xfe"),
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "same"}, {ID: 2, Kind: timeline.TrackCPU, Name: "same"},
			{ID: 3, Kind: timeline.TrackCPU, Name: ""}, {ID: 4, Kind: timeline.TrackGPUQueue, Name: "ÿ queue \"x\"", Queue: queueT},
		},
		Spans: []timeline.Span{
			sp(1, 1, 0, 10, 0), sp(1, 2, 1, 9, 1), sp(2, 3, 0, 5, 0), sp(3, 4, 0, 5, 0), sp(3, 5, 6, 8, 0),
			sp(4, 6, 0, 3, 0), sp(1, 7, 20, 30, 0), sp(2, 7, 20, 30, 0), sp(3, 8, 40, 50, 0), sp(3, 9, 60, 70, 0),
		}})
	add("zero-length spans", &timeline.Trace{Process: proc, Names: names("parent", "zero", "child", "nested zero"),
		Tracks: []timeline.Track{cpu},
		Spans: []timeline.Span{
			sp(1, 1, 0, 100, 0), sp(1, 2, 0, 0, 1), sp(1, 2, 50, 50, 1), sp(1, 3, 50, 100, 1),
			sp(1, 2, 100, 100, 0), sp(1, 2, 200, 200, 0), sp(1, 4, 200, 200, 1), sp(1, 2, 70, 70, 2),
		}})
	add("shared timestamps", &timeline.Trace{Process: proc, Names: names("outer", "first", "second", "inner"),
		Tracks: []timeline.Track{cpu, worker},
		Spans: []timeline.Span{
			sp(1, 3, 10, 20, 1), sp(1, 1, 0, 20, 0), sp(1, 2, 0, 10, 1), sp(1, 4, 0, 10, 2),
			sp(1, 1, 20, 30, 0), sp(2, 1, 0, 20, 0), sp(2, 2, 0, 20, 1),
		}})
	deep := &timeline.Trace{Process: proc, Names: names("level"), Tracks: []timeline.Track{cpu}}
	for d := 0; d < 200; d++ {
		deep.Spans = append(deep.Spans, sp(1, 1, int64(d)*10, 10_000-int64(d)*10, uint16(d)))
	}
	add("deep nesting", deep)
	add("frames without a frames track", &timeline.Trace{Process: proc, Names: names("work"),
		Tracks: []timeline.Track{cpu},
		Spans:  []timeline.Span{{Track: 1, Name: 1, Start: t0 + 10, End: t0 + 90, Frame: 7}},
		Frames: []timeline.Frame{{ID: 7, Start: t0, End: t0 + 100}, {ID: 8, Start: t0 + 100, End: t0 + 200}}})
	add("frames track", &timeline.Trace{Process: proc, Names: names("frame", "work"),
		Tracks: []timeline.Track{frames, cpu},
		Spans: []timeline.Span{{Track: 20, Name: 1, Start: t0, End: t0 + 100, Frame: 1}, {Track: 20, Name: 1, Start: t0 + 100, End: t0 + 200, Frame: 2},
			{Track: 1, Name: 2, Start: t0 + 10, End: t0 + 90, Frame: 1}, {Track: 1, Name: 2, Start: t0 + 110, End: t0 + 190, Frame: 2}},
		Frames: []timeline.Frame{{ID: 1, Start: t0, End: t0 + 100}, {ID: 2, Start: t0 + 100, End: t0 + 200}}})

	// Several batches as a recorder makes them: names and tracks grow, and
	// later batches reach back in time (outer spans end after inner ones,
	// GPU results come late), which forces new packet sequences. The
	// spans that reach back begin before others of their track written
	// earlier, with frames and error bounds that differ from the slice
	// before them in time but not from the one before them in the file.
	nm := names("frame", "inner", "gpu")
	args := func(s timeline.Span, frame uint64, errNs uint32) timeline.Span {
		s.Frame, s.ErrNs = frame, errNs
		return s
	}
	b1 := &timeline.Trace{Process: proc, Names: nm[:3], Tracks: []timeline.Track{cpu},
		Spans: []timeline.Span{args(sp(1, 2, 100, 200, 1), 1, 0), args(sp(1, 2, 300, 400, 1), 2, 0)}}
	b2 := &timeline.Trace{Process: proc, Names: nm, Tracks: []timeline.Track{cpu, gq},
		Spans: []timeline.Span{args(sp(1, 1, 0, 1_000, 0), 2, 0), args(sp(10, 3, 150, 800, 0), 1, 10)}, Drops: timeline.Drops{QueryLimit: 1}}
	b3 := &timeline.Trace{Process: proc, Names: nm, Tracks: []timeline.Track{cpu, gq},
		Spans: []timeline.Span{args(sp(10, 3, 900, 1_800, 0), 2, 20), args(sp(1, 1, 1_000, 2_000, 0), 3, 0), args(sp(10, 3, 100, 140, 0), 2, 20)},
		Drops: timeline.Drops{QueryLimit: 1, Spans: 2}}
	b4 := &timeline.Trace{Process: proc, Names: nm, Tracks: []timeline.Track{cpu, gq}, Drops: timeline.Drops{QueryLimit: 1, Spans: 2}}
	add("multiple batches", b1, b2, b3, b4)

	g := benchspans.New(3)
	var rb []*timeline.Trace
	for i := 0; i < 6; i++ {
		b := g.Batch(&timeline.Trace{Process: proc, Names: benchspans.Names, Tracks: benchspans.Tracks()})
		g.Frame(b)
		rb = append(rb, b)
	}
	add("realistic frames", rb...)
	add("late GPU results", LateBatches(8, 2)...)
	return out
}

// LateBatches makes n batches as a recorder streams them: each carries the
// CPU spans of its frame and the GPU zones of the frame lag frames before,
// whose results came late. It has no flows (they would cross batches).
func LateBatches(n, lag int) []*timeline.Trace {
	g := benchspans.New(5)
	var frames []*timeline.Trace
	for i := 0; i < n+lag; i++ {
		b := g.Batch(&timeline.Trace{Process: timeline.Process{PID: 5, Name: "late"}, Names: benchspans.Names, Tracks: benchspans.Tracks()})
		g.Frame(b)
		frames = append(frames, b)
	}
	gpu := func(id timeline.TrackID) bool {
		return id == benchspans.GraphicsQueue || id == benchspans.GraphicsLane || id == benchspans.ComputeQueue
	}
	var out []*timeline.Trace
	for i := 0; i < n+lag; i++ {
		b := &timeline.Trace{Process: frames[0].Process, Names: benchspans.Names, Tracks: benchspans.Tracks()}
		if i < n {
			for _, s := range frames[i].Spans {
				if !gpu(s.Track) {
					b.Spans = append(b.Spans, s)
				}
			}
			b.Frames, b.Samples = frames[i].Frames, frames[i].Samples
		}
		if i >= lag {
			for _, s := range frames[i-lag].Spans {
				if gpu(s.Track) {
					b.Spans = append(b.Spans, s)
				}
			}
			b.Calibrations = frames[i-lag].Calibrations
		}
		out = append(out, b)
	}
	return out
}

// WorkTrace is a trace of GPU zones that count pipeline statistics, on two
// queues: nested zones whose counts add up, a zone of each reason without
// counts, a zero count, a count past 2^53, and a zone of a context that
// counts nothing (no Work).
func WorkTrace() *timeline.Trace {
	gq := timeline.Track{ID: 10, Kind: timeline.TrackGPUQueue, Name: "graphics queue", Queue: queueG}
	cq := timeline.Track{ID: 13, Kind: timeline.TrackGPUQueue, Name: "compute queue", Queue: queueC, Order: 1}
	gfx := timeline.FragmentShaderInvocations | timeline.VertexShaderInvocations | timeline.InputAssemblyVertices |
		timeline.ClippingPrimitives | timeline.ComputeShaderInvocations
	counted := func(c map[timeline.PipelineStats]uint64) *timeline.Work {
		w := &timeline.Work{Stats: gfx}
		for b, v := range c {
			gfx.Each(func(i int) {
				if b == 1<<i {
					w.Count[i] = v
				}
			})
		}
		return w
	}
	missing := func(m timeline.WorkMissing) *timeline.Work { return &timeline.Work{Stats: gfx, Missing: m} }
	z := func(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16, frame uint64, w *timeline.Work) timeline.Span {
		s := sp(track, name, start, end, depth)
		s.Frame, s.ErrNs, s.Work = frame, 1500, w
		return s
	}
	frag, vert, ia, clip := timeline.FragmentShaderInvocations, timeline.VertexShaderInvocations, timeline.InputAssemblyVertices, timeline.ClippingPrimitives
	comp := timeline.ComputeShaderInvocations
	return &timeline.Trace{Process: timeline.Process{PID: 1234, Name: "demo"},
		Names:  names("frame", "shadow", "gbuffer", "draw", "cull", "post"),
		Tracks: []timeline.Track{gq, cq},
		Spans: []timeline.Span{
			z(10, 1, 0, 10_000, 0, 1, counted(map[timeline.PipelineStats]uint64{frag: 4_194_304 * 3, vert: 18, ia: 18, clip: 6, comp: 0})),
			z(10, 2, 100, 4_000, 1, 1, counted(map[timeline.PipelineStats]uint64{frag: 4_194_304, vert: 6, ia: 6, clip: 2})),
			z(10, 3, 4_000, 9_000, 1, 1, counted(map[timeline.PipelineStats]uint64{frag: 8_388_608, vert: 12, ia: 12, clip: 4})),
			z(10, 4, 4_100, 4_200, 2, 1, missing(timeline.WorkRenderPass)),
			z(10, 4, 4_300, 4_400, 2, 1, missing(timeline.WorkElsewhere)),
			z(10, 4, 4_500, 4_600, 2, 1, missing(timeline.WorkSpent)),
			z(10, 4, 4_700, 4_800, 2, 1, missing(timeline.WorkFrames)),
			z(10, 4, 4_900, 5_000, 2, 1, missing(timeline.WorkUnavailable)),
			z(10, 4, 5_100, 5_200, 2, 1, missing(timeline.WorkMisnested)),
			z(13, 5, 500, 3_000, 0, 1, counted(map[timeline.PipelineStats]uint64{comp: 1<<60 + 3})),
			z(13, 6, 3_000, 3_500, 0, 1, nil),
		},
		Drops: timeline.Drops{Work: 6}}
}
