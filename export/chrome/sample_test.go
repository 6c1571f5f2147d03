package chrome

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// sampleTrace builds a trace with every kind of track and the nesting
// cases that are easy to get wrong: a child starting with its parent, one
// ending with it, a zero-length span where its sibling ends, names that
// need escaping, flows, counters, frames, calibrations and drops.
func sampleTrace(seed uint64, frames int) *timeline.Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	t := &timeline.Trace{
		Process: timeline.Process{PID: 4242, Name: "triangle \"demo\""},
		Names:   []string{"", "frame", "update", "render", "submit", "marker", "gpu frame", "shadow", "main pass", "post \"fx\"\n\x01\xff ünï", "async compute"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main thread", Order: 0},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "GPU graphics", Order: 1, Queue: timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics+compute"}},
			{ID: 3, Kind: timeline.TrackGPULane, Name: "GPU graphics lane 1", Parent: 2, Lane: 1, Queue: timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics+compute"}},
			{ID: 4, Kind: timeline.TrackFrames, Name: "Frames", Order: -1},
			{ID: 5, Kind: timeline.TrackCounter, Name: "GPU busy %", Unit: timeline.UnitCount},
		},
		Drops: timeline.Drops{QueryLimit: 3, Unended: 1, Evicted: 2, GPUSpans: 4, Untimed: 5},
	}
	for f := 0; f < frames; f++ {
		id := uint64(f + 1)
		t0 := int64(1_000_000_000) + int64(f)*2_000_000 + rng.Int64N(1000)
		j := func() int64 { return rng.Int64N(997) }
		cpu := func(name timeline.NameID, s, e int64, d uint16) int {
			t.Spans = append(t.Spans, timeline.Span{Track: 1, Name: name, Start: s, End: e, Frame: id, Depth: d})
			return len(t.Spans) - 1
		}
		gpu := func(track timeline.TrackID, name timeline.NameID, s, e int64, d uint16) int {
			t.Spans = append(t.Spans, timeline.Span{Track: track, Name: name, Start: s, End: e, Frame: id, Depth: d, ErrNs: 1500})
			return len(t.Spans) - 1
		}
		u := t0 + 300_000 + j()
		r := t0 + 800_000 + j()
		cpu(1, t0, t0+900_000, 0)
		cpu(2, t0, u, 1)
		cpu(3, u, r, 1)
		sub := cpu(4, r-100_000, r, 2)
		cpu(5, r, r, 1)
		g := t0 + 810_000 + j()
		ge := g + 690_000 + j()
		gf := gpu(2, 6, g, ge, 0)
		gpu(2, 7, g, g+190_000, 1)
		gpu(2, 8, g+190_000, ge, 1)
		gpu(2, 9, ge-100_000, ge, 2)
		gpu(3, 10, g+90_000, g+390_000+j(), 0)
		t.Spans = append(t.Spans, timeline.Span{Track: 4, Name: 1, Start: t0, End: ge, Frame: id})
		t.Flows = append(t.Flows, timeline.Flow{From: sub, To: gf})
		t.Frames = append(t.Frames, timeline.Frame{ID: id, Start: t0, End: ge})
		t.Samples = append(t.Samples, timeline.Sample{Track: 5, Time: t0, Value: float64(f) * 1.5})
		if f%10 == 0 {
			t.Calibrations = append(t.Calibrations, timeline.Calibration{Track: 2, Time: t0, ErrNs: 1234.5, DriftPPM: 9.81, Samples: 16})
		}
	}
	return t
}

// canonical is a trace in a form where equal traces compare equal: items
// sorted, names resolved, flows as pairs of span keys.
type canonical struct {
	Process      timeline.Process
	Tracks       []timeline.Track
	Spans        []string
	Flows        []string
	Frames       []timeline.Frame
	Samples      []timeline.Sample
	Calibrations []timeline.Calibration
	Drops        timeline.Drops
}

func spanKey(t *timeline.Trace, s timeline.Span) string {
	return fmt.Sprintf("track=%d %q [%d,%d] depth=%d frame=%d err=%d%s", s.Track, validUTF8(t.Name(s.Name)), s.Start, s.End, s.Depth, s.Frame, s.ErrNs, workKey(s.Work))
}

// workKey is all of a span's Work, so that spans compare equal only with
// equal work: nothing when it has none, else its Stats, Missing and every
// count, those outside Stats too.
func workKey(w *timeline.Work) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf(" work=%#x/%d%v", uint32(w.Stats), w.Missing, w.Count)
}

func canon(t *timeline.Trace) canonical {
	c := canonical{
		Process:      t.Process,
		Tracks:       slices.Clone(t.Tracks),
		Frames:       slices.Clone(t.Frames),
		Samples:      slices.Clone(t.Samples),
		Calibrations: slices.Clone(t.Calibrations),
		Drops:        t.Drops,
	}
	slices.SortFunc(c.Tracks, func(a, b timeline.Track) int { return cmp.Compare(a.ID, b.ID) })
	for _, s := range t.Spans {
		c.Spans = append(c.Spans, spanKey(t, s))
	}
	slices.Sort(c.Spans)
	for _, f := range t.Flows {
		c.Flows = append(c.Flows, spanKey(t, t.Spans[f.From])+" -> "+spanKey(t, t.Spans[f.To]))
	}
	slices.Sort(c.Flows)
	slices.SortFunc(c.Frames, func(a, b timeline.Frame) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(c.Samples, func(a, b timeline.Sample) int { return cmp.Compare(a.Time, b.Time) })
	return c
}

func diffCanon(t *testing.T, got, want canonical) {
	t.Helper()
	g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want)
	if g == w {
		return
	}
	if got.Process != want.Process {
		t.Errorf("process: got %+v want %+v", got.Process, want.Process)
	}
	if !slices.Equal(got.Tracks, want.Tracks) {
		t.Errorf("tracks:\ngot  %+v\nwant %+v", got.Tracks, want.Tracks)
	}
	for i := 0; i < max(len(got.Spans), len(want.Spans)); i++ {
		var a, b string
		if i < len(got.Spans) {
			a = got.Spans[i]
		}
		if i < len(want.Spans) {
			b = want.Spans[i]
		}
		if a != b {
			t.Errorf("span %d:\ngot  %s\nwant %s", i, a, b)
			break
		}
	}
	if !slices.Equal(got.Flows, want.Flows) {
		t.Errorf("flows: got %d want %d\n%v\n%v", len(got.Flows), len(want.Flows), got.Flows, want.Flows)
	}
	if !slices.Equal(got.Frames, want.Frames) || !slices.Equal(got.Samples, want.Samples) || fmt.Sprint(got.Calibrations) != fmt.Sprint(want.Calibrations) {
		t.Errorf("frames, samples or calibrations differ")
	}
	if got.Drops != want.Drops {
		t.Errorf("drops: got %+v want %+v", got.Drops, want.Drops)
	}
}

// validUTF8 is s with each byte that is not UTF-8 made U+FFFD, as the
// writer writes it.
func validUTF8(s string) string {
	return strings.Map(func(r rune) rune { return r }, s)
}
