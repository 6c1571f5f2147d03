package timeline

import (
	"math"
	"strings"
	"testing"
)

// goodTrace is a small well-formed trace.
func goodTrace() *Trace {
	return &Trace{
		Names: []string{"", "a", "b"},
		Tracks: []Track{
			{ID: 1, Kind: TrackCPU, Name: "main"},
			{ID: 2, Kind: TrackGPUQueue, Name: "gpu"},
			{ID: 3, Kind: TrackGPULane, Name: "gpu lane 1", Parent: 2, Lane: 1},
			{ID: 4, Kind: TrackCounter, Name: "c", Unit: UnitNs},
		},
		Spans: []Span{
			{Track: 1, Name: 1, Start: 0, End: 100},
			{Track: 1, Name: 2, Start: 10, End: 20, Depth: 1},
			{Track: 1, Name: 2, Start: 20, End: 100, Depth: 1}, // touches its sibling, ends with its parent
			{Track: 2, Name: 1, Start: 5, End: 50},
			{Track: 3, Name: 1, Start: 40, End: 60},
		},
		Flows:        []Flow{{From: 0, To: 3}},
		Frames:       []Frame{{ID: 1, Start: 0, End: 100}, {ID: 2, Start: 100}},
		Samples:      []Sample{{Track: 4, Time: 5, Value: 1}},
		Calibrations: []Calibration{{Track: 2, Time: 0, ErrNs: 2600}},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(tr *Trace)
		want  string // in the error; "" for none
	}{
		{"good", func(*Trace) {}, ""},
		{"empty", func(tr *Trace) { *tr = Trace{} }, ""},
		{"names[0]", func(tr *Trace) { tr.Names[0] = "x" }, "Names[0]"},
		{"track ID 0", func(tr *Trace) { tr.Tracks[0].ID = 0 }, "has ID 0"},
		{"duplicate track", func(tr *Trace) { tr.Tracks[1].ID = 1 }, "defined twice"},
		{"unknown kind", func(tr *Trace) { tr.Tracks[0].Kind = 99 }, "unknown kind"},
		{"undefined parent", func(tr *Trace) { tr.Tracks[0].Parent = 42 }, "undefined parent"},
		{"own parent", func(tr *Trace) { tr.Tracks[0].Parent = 1 }, "its own parent"},
		{"lane not under queue", func(tr *Trace) { tr.Tracks[2].Parent = 1 }, "want gpu-queue"},
		{"lane number", func(tr *Trace) { tr.Tracks[2].Lane = 0 }, "lane >= 1"},
		{"unit", func(tr *Trace) { tr.Tracks[3].Unit = 9 }, "unknown unit"},
		{"span track", func(tr *Trace) { tr.Spans[0].Track = 9 }, "undefined track"},
		{"span on counter", func(tr *Trace) { tr.Spans[4].Track = 4 }, "counter track"},
		{"span name", func(tr *Trace) { tr.Spans[0].Name = 3 }, "out of 3 names"},
		{"end before start", func(tr *Trace) { tr.Spans[3].End = 1 }, "before it starts"},
		{"crossing spans", func(tr *Trace) { tr.Spans[1].End = 150 }, "overlap without nesting"},
		{"crossing on a lane", func(tr *Trace) { tr.Spans[4].Track = 2 }, "overlap without nesting"},
		{"flow out of range", func(tr *Trace) { tr.Flows[0].To = 5 }, "flow 0"},
		{"flow negative", func(tr *Trace) { tr.Flows[0].From = -1 }, "flow 0"},
		{"flow to itself", func(tr *Trace) { tr.Flows[0].To = 0 }, "flow 0"},
		{"frame ID 0", func(tr *Trace) { tr.Frames[0].ID = 0 }, "has ID 0"},
		{"frame twice", func(tr *Trace) { tr.Frames[1].ID = 1 }, "frame ID 1 appears 2 times"},
		{"frame thrice, said once", func(tr *Trace) {
			tr.Frames = append(tr.Frames, Frame{ID: 1, Start: 300, End: 400})
			tr.Frames[1].ID = 1
		}, "frame ID 1 appears 3 times"},
		{"frame ends early", func(tr *Trace) { tr.Frames[1].End = 50 }, "before it starts"},
		{"sample track", func(tr *Trace) { tr.Samples[0].Track = 1 }, "not a defined counter"},
		{"sample NaN", func(tr *Trace) { tr.Samples[0].Value = math.NaN() }, "NaN"},
		{"calibration track", func(tr *Trace) { tr.Calibrations[0].Track = 4 }, "not a defined GPU queue"},
		{"calibration bound", func(tr *Trace) { tr.Calibrations[0].ErrNs = -1 }, "error bound"},
		{"many problems", func(tr *Trace) {
			for i := range 30 {
				tr.Spans = append(tr.Spans, Span{Track: 1, Start: int64(i) + 1, End: 0})
			}
		}, "and 10 more problems"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := goodTrace()
			tc.spoil(tr)
			err := tr.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}
