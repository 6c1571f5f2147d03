package perfetto_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
)

// A whole timeline to a trace file, and back.
func ExampleWrite() {
	tr := &timeline.Trace{
		Process: timeline.Process{PID: 7, Name: "demo"},
		Names:   []string{"", "frame", "draw"},
		Tracks: []timeline.Track{
			{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
			{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics", Queue: timeline.Queue{Device: "GPU", Flags: "graphics"}},
		},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 1_000, End: 9_000, Frame: 1},
			{Track: 2, Name: 2, Start: 3_000, End: 7_000, Frame: 1, ErrNs: 2_600},
		},
		Flows: []timeline.Flow{{From: 0, To: 1}},
	}
	var buf bytes.Buffer // an *os.File in real use
	if err := perfetto.Write(&buf, tr); err != nil {
		fmt.Println(err)
		return
	}
	back, err := perfetto.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range back.Spans {
		fmt.Printf("%s on %s: %d..%d ns, frame %d, ±%d ns\n", back.Name(s.Name), back.Track(s.Track).Name, s.Start, s.End, s.Frame, s.ErrNs)
	}
	fmt.Println("flows:", len(back.Flows))
	// Output:
	// frame on main: 1000..9000 ns, frame 1, ±0 ns
	// draw on graphics: 3000..7000 ns, frame 1, ±2600 ns
	// flows: 1
}

// Streaming: a Writer is a timeline.Sink. Each batch is flushed as it is
// written, so a trace survives its process being killed.
func ExampleWriter() {
	f, err := os.CreateTemp("", "example-*.pftrace")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()

	var sink timeline.Sink = perfetto.NewWriter(f, perfetto.Options{})
	w := sink.(*perfetto.Writer)
	names := []string{"", "frame"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}
	for i := int64(0); i < 3; i++ {
		batch := &timeline.Trace{Names: names, Tracks: tracks,
			Spans: []timeline.Span{{Track: 1, Name: 1, Start: 1_000 + i*16_000, End: 15_000 + i*16_000, Frame: uint64(i + 1)}}}
		if err := sink.WriteBatch(batch); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	f.Seek(0, 0)
	back, err := perfetto.Read(f)
	fmt.Println(len(back.Spans), "spans,", w.Stats().Batches, "batches,", err)
	// Output: 3 spans, 3 batches, <nil>
}
