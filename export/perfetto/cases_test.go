package perfetto

import (
	"math"

	"github.com/framescope/framescope/internal/testkit/tracecases"
	"github.com/framescope/framescope/timeline"
)

// A conformance case: batches written, in order, by one Writer.
type tcase struct {
	name    string
	batches []*timeline.Trace
}

// cases are the cases of package tracecases, shared with the Chrome JSON
// writer's tests, and this package's own.
func cases() []tcase {
	var out []tcase
	for _, c := range tracecases.All() {
		out = append(out, tcase{c.Name, c.Batches})
	}
	return append(out, tcase{"work sums", workSums()})
}

const t0 = tracecases.T0

var names = tracecases.Names

var sp = tracecases.Span

var lateBatches = tracecases.LateBatches

// workSums is two batches of GPU zones with counts whose work counters
// add up several zones: per frame, outermost zones of a queue and of its
// lane (their sum), nested and uncounted zones (left out), statistics
// that differ between zones, a zero-length zone at the same time as the
// zone after it, a sum past 2^64 (saturated), a frame whose zones come in
// both batches (a sum each), a zone counting no statistic, a zone of each
// reason for no counts, and queues of two devices.
func workSums() []*timeline.Trace {
	qa := timeline.Queue{Device: "GPU A", Family: 0, Index: 0, Flags: "graphics+compute"}
	qb := timeline.Queue{Device: "GPU B", Family: 1, Index: 0, Flags: "compute"}
	tracks := []timeline.Track{
		{ID: 1, Kind: timeline.TrackGPUQueue, Name: "A graphics", Queue: qa},
		{ID: 2, Kind: timeline.TrackGPULane, Name: "A graphics lane 1", Parent: 1, Queue: qa, Lane: 1},
		{ID: 3, Kind: timeline.TrackGPUQueue, Name: "B compute", Queue: qb, Order: 1},
		{ID: 4, Kind: timeline.TrackCPU, Name: "render loop", Order: 2},
	}
	frag, vert, clip, comp := 7, 2, 6, 10 // bit positions
	counted := func(c map[int]uint64) *timeline.Work {
		w := &timeline.Work{}
		for i, v := range c {
			w.Stats |= 1 << i
			w.Count[i] = v
		}
		return w
	}
	z := func(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16, frame uint64, w *timeline.Work) timeline.Span {
		s := sp(track, name, start, end, depth)
		s.Frame, s.ErrNs, s.Work = frame, 700, w
		return s
	}
	nm := names("frame", "pass", "draw", "blit", "cull", "submit")
	b1 := &timeline.Trace{Process: timeline.Process{PID: 77, Name: "sums"}, Names: nm, Tracks: tracks,
		Spans: []timeline.Span{
			// Frame 1: A's outermost zones 1 and 3, its lane's 4, in no
			// order (a batch's spans come in any).
			z(2, 4, 900, 1600, 0, 1, counted(map[int]uint64{frag: 5})),
			z(1, 2, 1500, 2000, 0, 1, counted(map[int]uint64{frag: 20, clip: 7})),
			z(1, 2, 0, 1000, 0, 1, counted(map[int]uint64{frag: 10, vert: 3})),
			z(1, 3, 100, 200, 1, 1, counted(map[int]uint64{frag: 4})),
			z(1, 3, 2100, 2200, 0, 1, &timeline.Work{Stats: 1 << frag, Missing: timeline.WorkSpent}),
			// Frame 2: a zero-length zone where the next begins; a sum
			// past 2^64; a zone that counts nothing.
			z(1, 3, 4100, 4200, 0, 2, counted(map[int]uint64{frag: 5})),
			z(1, 3, 4210, 4220, 0, 2, nil),
			z(1, 2, 3000, 4000, 0, 2, counted(map[int]uint64{frag: math.MaxUint64 - 1})),
			z(1, 3, 3500, 3600, 1, 2, counted(map[int]uint64{frag: 9})),
			z(1, 4, 3000, 3000, 0, 2, counted(map[int]uint64{vert: 1})),
			sp(4, 6, 0, 50, 0),
		}}
	b2 := &timeline.Trace{Process: b1.Process, Names: nm, Tracks: tracks,
		Spans: []timeline.Span{
			// Frame 2 again, late; frame 3 on the other device.
			z(1, 3, 4300, 4400, 0, 2, counted(map[int]uint64{frag: 1})),
			z(3, 5, 5000, 6000, 0, 3, counted(map[int]uint64{comp: 1<<60 + 3})),
			z(3, 5, 6100, 6200, 0, 3, counted(map[int]uint64{comp: 2, frag: 0})),
			z(3, 5, 6300, 6400, 0, 3, counted(nil)),
			sp(4, 6, 5000, 5050, 0),
		},
		Drops: timeline.Drops{Work: 1 + uint64(timeline.NumWorkMissing-1)}} // the spent zone, and one a reason below
	// A zone of each reason it has no counts, whatever they are.
	for m := timeline.WorkCounted + 1; m < timeline.NumWorkMissing; m++ {
		at := 7000 + 100*int64(m)
		b2.Spans = append(b2.Spans, z(3, 5, at, at+50, 0, 3, &timeline.Work{Stats: 1<<comp | 1<<vert, Missing: m}))
	}
	return []*timeline.Trace{b1, b2}
}
