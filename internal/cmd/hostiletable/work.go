package main

import (
	"io"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
)

// workBatch is how many zones workZones hands a writer at once.
const workBatch = 1 << 16

// perfettoWork writes a Perfetto trace of n GPU zones side by side on one
// queue, each with counts of all 11 pipeline statistics, of values that
// differ from zone to zone (as a trace with work at the span limit would
// be), through Framescope's own writer in batches.
func perfettoWork(w io.Writer, n int) error {
	pw := perfetto.NewWriter(w, perfetto.Options{})
	if err := workZones(n, pw.Write); err != nil {
		return err
	}
	return pw.Close()
}

// chromeWork is perfettoWork as a Chrome JSON trace.
func chromeWork(w io.Writer, n int) error {
	cw := chrome.NewWriter(w)
	if err := workZones(n, cw.WriteBatch); err != nil {
		return err
	}
	return cw.Close()
}

// workZones hands write n zones with work, a batch at a time, each batch
// made anew (a sink may keep what it is handed).
func workZones(n int, write func(*timeline.Trace) error) error {
	queue := timeline.Track{ID: 1, Kind: timeline.TrackGPUQueue, Name: "queue",
		Queue: timeline.Queue{Device: "hostile", Flags: "graphics"}}
	for done := 0; done < n; {
		k := min(workBatch, n-done)
		works := make([]timeline.Work, k)
		b := &timeline.Trace{Process: timeline.Process{PID: 1, Name: "hostile"},
			Names: []string{"", "zone"}, Tracks: []timeline.Track{queue}, Spans: make([]timeline.Span, 0, k)}
		for i := range k {
			z := int64(done + i)
			wk := &works[i]
			*wk = timeline.Work{Stats: timeline.AllPipelineStats}
			for s := range wk.Count {
				wk.Count[s] = uint64(z*int64(s+1)) + uint64(s)<<20
			}
			b.Spans = append(b.Spans, timeline.Span{Track: 1, Name: 1,
				Start: 10 * z, End: 10*z + 9, Frame: uint64(z/1000 + 1), ErrNs: 100, Work: wk})
		}
		if err := write(b); err != nil {
			return err
		}
		done += k
	}
	return nil
}
