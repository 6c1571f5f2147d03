package perfetto

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// spanKey is a span with its names resolved, comparable across traces.
type spanKey struct {
	Track      timeline.TrackID
	Name       string
	Start, End int64
	Frame      uint64
	Depth      uint16
	ErrNs      uint32
	trackName  string
	// The span's Work, by value: HasWork is false for a nil Work.
	HasWork bool
	Work    timeline.Work
}

func (k spanKey) String() string {
	s := fmt.Sprintf("%d/%q %q [%d,%d] frame %d depth %d err %d", k.Track, k.trackName, k.Name, k.Start, k.End, k.Frame, k.Depth, k.ErrNs)
	if k.HasWork {
		s += fmt.Sprintf(" work %s %v %s", k.Work.Stats, k.Work.Count, k.Work.Missing)
	}
	return s
}

// keyOf is the spanKey of a span of trace t.
func keyOf(t *timeline.Trace, s timeline.Span) spanKey {
	k := spanKey{Track: s.Track, Name: t.Name(s.Name), Start: s.Start, End: s.End, Frame: s.Frame, Depth: s.Depth, ErrNs: s.ErrNs}
	if tr := t.Track(s.Track); tr != nil {
		k.trackName = tr.Name
	}
	if s.Work != nil {
		k.HasWork, k.Work = true, *s.Work
	}
	return k
}

// expected is what a case's batches put in the trace.
type expected struct {
	tracks  []timeline.Track
	spans   []spanKey // timeline spans
	frames  []timeline.Frame
	flows   [][2]spanKey
	samples []timeline.Sample
	calibs  []timeline.Calibration
	drops   timeline.Drops
	ledger  timeline.Ledger
	process timeline.Process
	// framesList holds frames written on the writer's own frames track.
	framesList []timeline.Frame
	// workCounters are the samples of the GPU queues' work counters
	// ("name | ts | value"), workTracks their tracks ("name | parent").
	workCounters, workTracks []string
	// batches is how many batches were written: the writer marks the
	// end of each.
	batches int
}

func expect(c tcase) expected {
	var x expected
	seen := map[timeline.TrackID]bool{}
	seenWork := map[string]bool{}
	framesTracks := map[timeline.TrackID]bool{}
	for _, b := range c.batches {
		x.process = b.Process
		for _, t := range b.Tracks {
			if !seen[t.ID] {
				seen[t.ID] = true
				x.tracks = append(x.tracks, t)
			}
			if t.Kind == timeline.TrackFrames {
				framesTracks[t.ID] = true
			}
		}
		key := func(s timeline.Span) spanKey { return keyOf(b, s) }
		x.workCounters = append(x.workCounters, wantWork(b, seenWork, &x.workTracks)...)
		for _, s := range b.Spans {
			x.spans = append(x.spans, key(s))
		}
		for _, f := range b.Flows {
			x.flows = append(x.flows, [2]spanKey{key(b.Spans[f.From]), key(b.Spans[f.To])})
		}
		// A batch's frames are its frames track's spans where it has
		// spans on one; else the writer lists them on a track of its own.
		onTrack := false
		for _, s := range b.Spans {
			onTrack = onTrack || framesTracks[s.Track]
		}
		x.frames = append(x.frames, b.Frames...)
		if !onTrack {
			x.framesList = append(x.framesList, b.Frames...)
		}
		x.samples = append(x.samples, b.Samples...)
		x.calibs = append(x.calibs, b.Calibrations...)
		x.drops = b.Drops
		x.ledger = b.Ledger
	}
	x.batches = len(c.batches)
	sortKeys(x.spans)
	return x
}

// wantWork returns the work counter samples a batch makes, as the
// package comment says: per GPU queue (a lane's zones count for its
// queue) and frame, for each statistic that the queue's outermost zones
// with counts of that frame counted, the sum of their counts, at the
// earliest start among them. It adds the counter tracks not in seen to
// tracks.
func wantWork(b *timeline.Trace, seen map[string]bool, tracks *[]string) []string {
	type group struct {
		start int64
		sum   map[int]float64
	}
	groups := map[string]*group{}
	var keys []string
	for _, s := range b.Spans {
		tr := b.Track(s.Track)
		if s.Work == nil || s.Work.Missing != timeline.WorkCounted || s.Work.Stats == 0 || s.Depth != 0 || tr == nil {
			continue
		}
		if tr.Kind == timeline.TrackGPULane {
			tr = b.Track(tr.Parent)
		}
		if tr == nil || tr.Kind != timeline.TrackGPUQueue {
			continue
		}
		k := fmt.Sprintf("%s/%d", tr.Name, s.Frame)
		g := groups[k]
		if g == nil {
			g = &group{start: s.Start, sum: map[int]float64{}}
			groups[k] = g
			keys = append(keys, k)
		}
		g.start = min(g.start, s.Start)
		for i := range timeline.NumPipelineStats {
			if v, ok := s.Work.Value(i); ok {
				g.sum[i] += float64(v)
				name := tr.Name + " " + timeline.StatKey(i)
				if !seen[name] {
					seen[name] = true
					*tracks = append(*tracks, name+" | "+tr.Name)
				}
			}
		}
	}
	var out []string
	for _, k := range keys {
		g := groups[k]
		q, _, _ := strings.Cut(k, "/")
		for i, v := range g.sum {
			out = append(out, fmt.Sprintf("%s %s | %d | %v", q, timeline.StatKey(i), g.start, v))
		}
	}
	return out
}

func sortKeys(k []spanKey) {
	slices.SortFunc(k, func(a, b spanKey) int {
		return cmpAll(int64(a.Track), int64(b.Track), a.Start, b.Start, int64(a.Depth), int64(b.Depth), a.End, b.End) * 2
	})
}

func cmpAll(v ...int64) int {
	for i := 0; i < len(v); i += 2 {
		if v[i] != v[i+1] {
			if v[i] < v[i+1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// write writes a case's batches with one Writer.
func write(t testing.TB, c tcase) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	for _, b := range c.batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readBytes(b []byte) (*timeline.Trace, error) { return Read(bytes.NewReader(b)) }
