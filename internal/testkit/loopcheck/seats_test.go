package loopcheck

import (
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// A queue track may pass from one device to another made after the first
// left (the profiler's identity rule: seed 30 on the H100, a thread's
// device taking the track while the program made its own again), but
// never holds zones of two devices alive at once.
func TestSeatsShared(t *testing.T) {
	names := []string{"", "f1.d0", "f5.d0", "f8.d0", "h", "f2.t0", "f40.d0"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackGPUQueue}, {ID: 2, Kind: timeline.TrackGPUQueue}}
	zone := func(track timeline.TrackID, name timeline.NameID, at int64) timeline.Span {
		return timeline.Span{Track: track, Name: name, Start: at, End: at + 10}
	}
	b := Bare{Loop: Loop{Recreate: map[int]Recreate{7: RecreateDevice}}}
	// A label holds its frame modulo 100: in a loop of 150 frames made
	// again at 39, "f5" may be frame 5 or 105, of either device.
	long := Bare{Loop: Loop{Frames: 150, Recreate: map[int]Recreate{39: RecreateDevice}}}
	for _, tc := range []struct {
		name  string
		zones []timeline.Span
		want  string // in the one problem; "": none
		b     *Bare  // nil: b
	}{
		{"the thread's device after the program's left", []timeline.Span{
			zone(1, 1, 100), zone(1, 2, 500), zone(1, 4, 700), zone(2, 3, 800), zone(1, 4, 900)}, "", nil},
		{"the program's device made again takes its track back", []timeline.Span{
			zone(1, 1, 100), zone(1, 2, 500), zone(1, 4, 600), zone(1, 3, 800)}, "", nil},
		{"the thread's device while the program's lives", []timeline.Span{
			zone(1, 1, 100), zone(1, 4, 300), zone(1, 2, 500)}, `a device another thread made ("h", zone 1)`, nil},
		{"the second device beside the first", []timeline.Span{
			zone(1, 1, 100), zone(1, 5, 200), zone(1, 2, 500)}, "the program's second device", nil},
		{"the device made again while the old one still ran", []timeline.Span{
			zone(1, 1, 100), zone(1, 3, 300), zone(1, 2, 500)}, "made 1 times before", nil},
		{"a label whose frame wrapped says nothing of its device", []timeline.Span{
			zone(1, 2, 100), zone(1, 6, 300), zone(1, 2, 500)}, "", &long},
		{"a label whose frame is sure in a long loop", []timeline.Span{
			zone(1, 6, 100), zone(1, 4, 300), zone(1, 6, 500)}, `a device another thread made ("h", zone 1)`, &long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &timeline.Trace{Names: names, Tracks: tracks, Spans: tc.zones}
			bb := b
			if tc.b != nil {
				bb = *tc.b
			}
			got := bb.seatsShared(tr, tc.zones)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("problems %q, want one naming %q", got, tc.want)
			}
		})
	}
}
