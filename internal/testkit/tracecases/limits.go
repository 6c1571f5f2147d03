package tracecases

import "github.com/framescope/framescope/timeline"

// Limits is a trace of three frames whose limits are known, for the
// writers' tests of what limits each frame, built as package limits'
// tests build theirs: a CPU thread (track 1) that submits to a GPU queue
// (track 2), an arrow from each vkQueueSubmit to the zone it carried
// (with a child half its length), and a fourth frame, the last, left out:
//
//   - frame 1, [0, 10 ms), CPU-bound: 8 ms of work, then 1 ms of GPU
//     (8.2-9.2 ms), waited for; idle 9 ms waiting for submit;
//   - frame 2, [10, 20 ms), GPU-bound: the thread waits 9.7 ms for 9.5 ms
//     of GPU (10.3-19.8 ms); idle 0.5 ms waiting for submit;
//   - frame 3, [20, 40 ms), presentation-bound: 3 ms of GPU (22.2-25.2
//     ms), then a present to the frame's end; idle 2.2 ms waiting for
//     submit before it and 14.8 ms waiting on present after it.
func Limits() *timeline.Trace {
	const ms = int64(1_000_000)
	t := &timeline.Trace{
		Process: timeline.Process{PID: 7, Name: "limits"},
		Names:   Names("update", "vkQueueSubmit", "vkWaitForFences", "vkQueuePresentKHR", "gpu frame", "shadow"),
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics", Order: 1, Queue: timeline.Queue{Device: "gpu0", Flags: "graphics"}},
		},
	}
	span := func(track timeline.TrackID, name timeline.NameID, s, e int64, d uint16, frame uint64) int {
		t.Spans = append(t.Spans, timeline.Span{Track: track, Name: name, Start: s, End: e, Depth: d, Frame: frame})
		return len(t.Spans) - 1
	}
	submit := func(frame uint64, at, gs, ge int64) {
		s := span(1, 2, at, at+ms/10, 0, frame)
		t.Flows = append(t.Flows, timeline.Flow{From: s, To: span(2, 5, gs, ge, 0, frame)})
		span(2, 6, gs, gs+(ge-gs)/2, 1, frame)
	}
	span(1, 1, 0, 8*ms, 0, 1)
	submit(1, 8*ms, 82*ms/10, 92*ms/10)
	span(1, 3, 81*ms/10, 93*ms/10, 0, 1)
	submit(2, 101*ms/10, 103*ms/10, 198*ms/10)
	span(1, 3, 102*ms/10, 199*ms/10, 0, 2)
	submit(3, 22*ms, 222*ms/10, 252*ms/10)
	span(1, 4, 253*ms/10, 40*ms, 0, 3)
	t.Frames = []timeline.Frame{{ID: 1, Start: 0, End: 10 * ms}, {ID: 2, Start: 10 * ms, End: 20 * ms},
		{ID: 3, Start: 20 * ms, End: 40 * ms}, {ID: 4, Start: 40 * ms, End: 41 * ms}}
	return t
}
