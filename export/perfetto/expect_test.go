package perfetto

import (
	"bytes"
	"fmt"
	"slices"
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
}

func (k spanKey) String() string {
	return fmt.Sprintf("%d/%q %q [%d,%d] frame %d depth %d err %d", k.Track, k.trackName, k.Name, k.Start, k.End, k.Frame, k.Depth, k.ErrNs)
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
}

func expect(c tcase) expected {
	var x expected
	seen := map[timeline.TrackID]bool{}
	hasFramesTrack := false
	for _, b := range c.batches {
		x.process = b.Process
		for _, t := range b.Tracks {
			if !seen[t.ID] {
				seen[t.ID] = true
				x.tracks = append(x.tracks, t)
			}
			hasFramesTrack = hasFramesTrack || t.Kind == timeline.TrackFrames
		}
		key := func(s timeline.Span) spanKey {
			return spanKey{Track: s.Track, Name: b.Name(s.Name), Start: s.Start, End: s.End, Frame: s.Frame, Depth: s.Depth, ErrNs: s.ErrNs, trackName: b.Track(s.Track).Name}
		}
		for _, s := range b.Spans {
			x.spans = append(x.spans, key(s))
		}
		for _, f := range b.Flows {
			x.flows = append(x.flows, [2]spanKey{key(b.Spans[f.From]), key(b.Spans[f.To])})
		}
		if hasFramesTrack {
			x.frames = append(x.frames, b.Frames...)
		} else {
			x.framesList = append(x.framesList, b.Frames...)
		}
		x.samples = append(x.samples, b.Samples...)
		x.calibs = append(x.calibs, b.Calibrations...)
		x.drops = b.Drops
		x.ledger = b.Ledger
	}
	if !hasFramesTrack {
		x.frames = x.framesList
	}
	sortKeys(x.spans)
	return x
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
