package chrome_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/timeline"
)

func ExampleWrite() {
	tr := &timeline.Trace{
		Process: timeline.Process{PID: 42, Name: "demo"},
		Names:   []string{"", "frame", "draw"},
		Tracks:  []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 1_000_000, End: 1_016_667, Frame: 1},
			{Track: 1, Name: 2, Start: 1_000_000, End: 1_004_321, Frame: 1, Depth: 1},
		},
	}
	var buf bytes.Buffer
	if err := chrome.Write(&buf, tr); err != nil {
		fmt.Println(err)
		return
	}
	back, err := chrome.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range back.Spans {
		fmt.Println(back.Name(s.Name), s.Start, s.End, s.Depth)
	}
	// Output:
	// frame 1000000 1016667 0
	// draw 1000000 1004321 1
}

func ExampleWriter_WriteBatch() {
	names := []string{"", "frame", "draw"}
	tracks := []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}}
	w := chrome.NewWriter(os.Stdout)
	// The child ends first, so a recorder sends it first; the writer holds
	// it until its parent, which starts at the same time, has been written.
	w.WriteBatch(&timeline.Trace{Names: names, Tracks: tracks, Spans: []timeline.Span{
		{Track: 1, Name: 2, Start: 0, End: 1500, Depth: 1},
	}})
	w.WriteBatch(&timeline.Trace{Names: names, Tracks: tracks, Spans: []timeline.Span{
		{Track: 1, Name: 1, Start: 0, End: 16000},
	}})
	w.Close()
	// Output:
	// [
	// {"ph":"M","pid":1,"name":"process_name","args":{"name":"framescope"}},
	// {"ph":"M","pid":1,"name":"process_sort_index","args":{"sort_index":0}},
	// {"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"main"}},
	// {"ph":"M","pid":1,"tid":1,"name":"thread_sort_index","args":{"sort_index":0}},
	// {"ph":"M","pid":1,"tid":1,"name":"framescope_track","args":{"id":1,"kind":"cpu","name":"main","parent":0,"order":0,"lane":0,"unit":0}},
	// {"ph":"B","pid":1,"tid":1,"ts":0.000,"name":"frame"},
	// {"ph":"B","pid":1,"tid":1,"ts":0.000,"name":"draw"},
	// {"ph":"E","pid":1,"tid":1,"ts":1.500},
	// {"ph":"E","pid":1,"tid":1,"ts":16.000},
	// {"ph":"M","pid":1,"name":"framescope_drops","args":{"query_limit":0,"no_frame":0,"closed":0,"unended":0,"unsubmitted":0,"pending":0,"overlapped":0,"run_again":0,"abandoned":0,"uncalibrated":0,"gpu_spans":0,"spans":0,"evicted":0,"untimed":0,"work":0,"flows":0,"frames":0,"samples":0,"sink":0,"misuse":0,"invalid_flows":0,"invalid_samples":0,"held_overflow":0}}
	// ]
}
