package perfetto

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// randomFrames draws a trace's frames from seed: most well formed, some
// ending before they begin, begun before the clock's zero, or with the
// ID of one before them; and, for some seeds, a frames track with no
// spans on it (the frames are then in Trace.Frames alone); or ID 0. It returns
// the trace and how many of its frames are well formed.
func randomFrames(seed uint64) (*timeline.Trace, int) {
	r := rand.New(rand.NewPCG(seed, 1))
	t := &timeline.Trace{Names: []string{"", "work"}, Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}},
		Spans: []timeline.Span{{Track: 1, Name: 1, Start: 1000, End: 2000}}}
	if r.IntN(2) == 0 {
		t.Tracks = append(t.Tracks, timeline.Track{ID: 2, Kind: timeline.TrackFrames, Name: "Frames"})
	}
	ids, good := map[uint64]bool{}, 0
	for i := range 1 + r.IntN(20) {
		start := int64(1000 + 100*i)
		f := timeline.Frame{ID: uint64(i + 1), Start: start, End: start + int64(r.IntN(300))}
		switch r.IntN(6) {
		case 0:
			f.End = start - 1 - int64(r.IntN(50))
		case 1:
			f.Start, f.End = -start, -start+int64(r.IntN(int(start))) // ended before the zero too: an End of 0 is an open frame
		case 2:
			f.ID = uint64(1 + r.IntN(i+1))
		case 3:
			f.ID = 0
		}
		if f.ID != 0 && f.Start >= 0 && f.End >= f.Start && !ids[f.ID] {
			good++
			ids[f.ID] = true
		}
		t.Frames = append(t.Frames, f)
	}
	return t, good
}

// Whatever frames a trace holds, Write writes a trace Read reads: a frame
// the readers would refuse the whole trace for (ending before it
// begins, begun before the clock's zero, an ID twice, ID 0) is left out and
// counted (Stats.Invalid), every other frame reads back, and a frames
// track with no spans does not hide Trace.Frames. This includes the
// frame limits Write adds, drawn from the frames.
func TestWriteFramesReadersRead(t *testing.T) {
	for seed := range uint64(300) {
		tr, good := randomFrames(seed)
		var b bytes.Buffer
		w := NewWriter(&b, Options{})
		if err := w.WriteBatch(tr); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := Read(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("seed %d: %v (frames %+v)", seed, err, tr.Frames)
		}
		if len(got.Frames) != good || int(w.Stats().Invalid) != len(tr.Frames)-good {
			t.Fatalf("seed %d: %d frames, %d well formed: %d read back, %d counted invalid (frames %+v)",
				seed, len(tr.Frames), good, len(got.Frames), w.Stats().Invalid, tr.Frames)
		}
		b.Reset()
		if err := Write(&b, tr); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(bytes.NewReader(b.Bytes())); err != nil {
			t.Fatalf("seed %d: Write, with the limits: %v", seed, err)
		}
	}
}
