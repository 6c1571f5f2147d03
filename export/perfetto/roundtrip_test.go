package perfetto

import (
	"bytes"
	"slices"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// TestRoundTrip writes every case and reads it back: the timeline must
// come back as it went in.
func TestRoundTrip(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			x := expect(c)
			got, err := Read(bytes.NewReader(write(t, c)))
			if err != nil {
				t.Fatal(err)
			}
			checkTrace(t, x, got)
		})
	}
}

func checkTrace(t *testing.T, x expected, got *timeline.Trace) {
	t.Helper()
	if got.Process != x.process {
		t.Errorf("process: got %+v, want %+v", got.Process, x.process)
	}
	gotTracks := slices.Clone(got.Tracks)
	wantTracks := slices.Clone(x.tracks)
	byID := func(a, b timeline.Track) int { return int(a.ID) - int(b.ID) }
	slices.SortFunc(gotTracks, byID)
	slices.SortFunc(wantTracks, byID)
	if !slices.Equal(gotTracks, wantTracks) {
		t.Errorf("tracks:\n got %+v\nwant %+v", gotTracks, wantTracks)
	}
	var spans []spanKey
	for _, s := range got.Spans {
		tr := got.Track(s.Track)
		if tr == nil {
			t.Fatalf("span on unknown track: %+v", s)
		}
		spans = append(spans, keyOf(got, s))
	}
	sortKeys(spans)
	if !slices.Equal(spans, x.spans) {
		t.Errorf("spans: got %d, want %d", len(spans), len(x.spans))
		for i := 0; i < max(len(spans), len(x.spans)); i++ {
			var g, w spanKey
			if i < len(spans) {
				g = spans[i]
			}
			if i < len(x.spans) {
				w = x.spans[i]
			}
			if g != w {
				t.Errorf("  first difference at %d:\n   got %v\n  want %v", i, g, w)
				break
			}
		}
	}
	var flows [][2]spanKey
	for _, f := range got.Flows {
		k := func(i int) spanKey { return keyOf(got, got.Spans[i]) }
		flows = append(flows, [2]spanKey{k(f.From), k(f.To)})
	}
	cmpFlow := func(a, b [2]spanKey) int {
		return cmpAll(a[0].Start, b[0].Start, int64(a[0].Track), int64(b[0].Track), a[1].Start, b[1].Start, int64(a[1].Track), int64(b[1].Track))
	}
	slices.SortFunc(flows, cmpFlow)
	wantFlows := slices.Clone(x.flows)
	slices.SortFunc(wantFlows, cmpFlow)
	if !slices.Equal(flows, wantFlows) {
		t.Errorf("flows:\n got %v\nwant %v", flows, wantFlows)
	}
	var wantFrames []timeline.Frame
	for _, f := range x.frames {
		if f.End != 0 {
			wantFrames = append(wantFrames, f)
		}
	}
	cmpFrame := func(a, b timeline.Frame) int { return cmpAll(a.Start, b.Start, int64(a.ID), int64(b.ID)) }
	gotFrames := slices.Clone(got.Frames)
	slices.SortFunc(gotFrames, cmpFrame)
	slices.SortFunc(wantFrames, cmpFrame)
	if !slices.Equal(gotFrames, wantFrames) {
		t.Errorf("frames:\n got %+v\nwant %+v", gotFrames, wantFrames)
	}
	cmpSample := func(a, b timeline.Sample) int { return cmpAll(int64(a.Track), int64(b.Track), a.Time, b.Time) }
	gotSamples, wantSamples := slices.Clone(got.Samples), slices.Clone(x.samples)
	slices.SortStableFunc(gotSamples, cmpSample)
	slices.SortStableFunc(wantSamples, cmpSample)
	if !slices.Equal(gotSamples, wantSamples) {
		t.Errorf("samples:\n got %+v\nwant %+v", gotSamples, wantSamples)
	}
	cmpCalib := func(a, b timeline.Calibration) int { return cmpAll(int64(a.Track), int64(b.Track), a.Time, b.Time) }
	gotCalibs, wantCalibs := slices.Clone(got.Calibrations), slices.Clone(x.calibs)
	slices.SortFunc(gotCalibs, cmpCalib)
	slices.SortFunc(wantCalibs, cmpCalib)
	if !slices.Equal(gotCalibs, wantCalibs) {
		t.Errorf("calibrations:\n got %+v\nwant %+v", gotCalibs, wantCalibs)
	}
	if got.Ledger != x.ledger {
		t.Errorf("ledger: got %+v, want %+v", got.Ledger, x.ledger)
	}
	if got.Drops != x.drops {
		t.Errorf("drops: got %+v, want %+v", got.Drops, x.drops)
	}
}

// TestCountsRoundTripExactly: drops and ledger counts went through float64
// counters (issue 38): drops of 2^64-2 came back 0, and a ledger of 2^53+1
// issued and 2^53 delivered came back balanced. Every count now comes back
// as it went in, and a counter that is no count is refused.
func TestCountsRoundTripExactly(t *testing.T) {
	for _, n := range []uint64{0, 1<<53 - 1, 1<<53 + 1, 1<<63 - 1, 1 << 63, 1<<64 - 2, 1<<64 - 1} {
		in := &timeline.Trace{Names: []string{""}, Drops: timeline.Drops{Spans: n, Misuse: n},
			Ledger: timeline.Ledger{Zones: timeline.Book{Issued: n, Delivered: n / 2}}}
		var b bytes.Buffer
		if err := Write(&b, in); err != nil {
			t.Fatal(err)
		}
		got, err := Read(&b)
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if got.Drops != in.Drops || got.Ledger != in.Ledger {
			t.Errorf("%d: drops %+v, ledger %+v; want %+v, %+v", n, got.Drops, got.Ledger, in.Drops, in.Ledger)
		}
	}
}
