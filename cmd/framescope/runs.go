package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// maxRuns bounds the trace files of one side of `framescope diff`, so that
// a directory of the wrong thing fails with a message, not after hours:
// the test's work grows with the product of the runs of both sides
// (splitBudget): 50 a side of 10 zones take it some seconds.
const maxRuns = 50

// zoneKey tells zones apart across runs: the same name on two GPU queues
// or on two CPU tracks is two zones. Track is the queue without the
// device's name ("graphics queue 0.0"), so that a zone keeps its key when
// the same queue of another device ran it, or the CPU track's name.
type zoneKey struct {
	Kind  string // "gpu" or "cpu", or frameKind for the frames' own series (addFrameSeries)
	Track string
	Name  string
}

func (k zoneKey) String() string { return k.Kind + ":" + k.Track + "/" + k.Name }

func compareKeys(a, b zoneKey) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return -c // gpu first
	}
	if c := cmp.Compare(a.Track, b.Track); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// runZone is one zone in one run: how many times it ran and the run's
// statistics of its durations, with their precision.
type runZone struct {
	N        int
	P50, P95 float64 // ns
	// SE50 and SE95 are the standard errors of log(P50) and log(P95)
	// that the run's own frames give (stats.QuantileSE).
	SE50, SE95 float64
	// Box is p5, p25, p50, p75 and p95 of the run's durations, for plots.
	Box      [5]float64
	Min, Max int64
	// Work is the zone's pipeline statistics in the run (diff_work.go);
	// nil when no occurrence of it carried any.
	Work *runWork
}

// runTrace is one trace file of a side: one run.
type runTrace struct {
	Path    string
	Zones   map[zoneKey]runZone
	Devices []string // GPU devices its queues belong to
	// CPUWork counts CPU spans that carry pipeline statistics, which only
	// GPU zones count: loadSide refuses such a trace.
	CPUWork int
	// Cut says how much of a trace cut short reads back; nil if whole.
	Cut *traceCut
}

// side is BASE or NEW: one trace file, or every trace file of a directory.
type side struct {
	Path string
	Runs []runTrace
}

// loadSide reads a side: path is a trace file (one run) or a directory
// whose every file is a trace (one run each). Hidden files (".name") are
// left out, as editors and file systems leave them; anything else that is
// not a trace, a subdirectory included, is an error, so that no run is
// dropped unseen.
func loadSide(path string) (side, error) {
	s := side{Path: path}
	st, err := os.Stat(path)
	if err != nil {
		return s, err
	}
	files := []string{path}
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return s, err
		}
		files = files[:0]
		for _, e := range ents {
			if e.Name()[0] == '.' {
				continue
			}
			p := filepath.Join(path, e.Name())
			if e.IsDir() {
				return s, fmt.Errorf("%s is a directory: a directory of runs holds trace files only", p)
			}
			files = append(files, p)
		}
		if len(files) == 0 {
			return s, fmt.Errorf("%s: no trace files", path)
		}
		if len(files) > maxRuns {
			return s, fmt.Errorf("%s: %d files, over the limit of %d runs a side", path, len(files), maxRuns)
		}
	}
	for _, f := range files {
		t, cut, err := loadTraceCut(f)
		if err != nil {
			return s, err
		}
		r := summarizeRun(f, t)
		r.Cut = cut
		if len(r.Zones) == 0 {
			return s, fmt.Errorf("%s: no GPU or CPU zones: an empty run cannot be compared", f)
		}
		if err := cpuWorkError(f, r.CPUWork); err != nil {
			return s, err
		}
		s.Runs = append(s.Runs, r)
	}
	return s, nil
}

// cuts lists the runs of the sides that were cut short.
func cuts(sides ...side) []*traceCut {
	var out []*traceCut
	for _, s := range sides {
		for _, r := range s.Runs {
			if r.Cut != nil {
				out = append(out, r.Cut)
			}
		}
	}
	return out
}

// warnCuts says on w, for command cmd, which runs were cut short and how
// much of each reads back.
func warnCuts(w io.Writer, cmd string, sides ...side) {
	for _, c := range cuts(sides...) {
		fmt.Fprintf(w, "framescope %s: %s\n", cmd, termText(c.String()))
	}
}

// cpuWorkError is the one rule of every command on CPU spans that carry
// pipeline statistics (n of them in the trace at path): only GPU zones
// count work, so such a trace is malformed. The readers take it (another
// tool's Chrome trace may put counts on a thread), the commands that
// read counts refuse it: diff, benchfmt and stats alike.
func cpuWorkError(path string, n int) error {
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%s: malformed: CPU spans with pipeline statistics (%d), which only GPU zones count", path, n)
}

// summarizeRun reduces a trace to its zones' statistics.
func summarizeRun(path string, t *timeline.Trace) runTrace {
	durs, works, cpuWork := runDurations(t)
	r := runTrace{Path: path, Zones: make(map[zoneKey]runZone, len(durs)), CPUWork: cpuWork}
	for k, d := range durs {
		s := stats.Summarize(d) // sorts d
		r.Zones[k] = runZone{
			N: s.Count, P50: s.P50, P95: s.P95,
			SE50: stats.QuantileSE(d, 0.50), SE95: stats.QuantileSE(d, 0.95),
			Box: [5]float64{stats.Quantile(d, 0.05), stats.Quantile(d, 0.25), s.P50, stats.Quantile(d, 0.75), s.P95},
			Min: s.Min, Max: s.Max, Work: works[k].result(),
		}
	}
	seen := map[string]bool{}
	for _, tr := range t.Tracks {
		if (tr.Kind == timeline.TrackGPUQueue || tr.Kind == timeline.TrackGPULane) && tr.Queue.Device != "" && !seen[tr.Queue.Device] {
			seen[tr.Queue.Device] = true
			r.Devices = append(r.Devices, tr.Queue.Device)
		}
	}
	slices.Sort(r.Devices)
	return r
}

// runDurations collects the durations of every GPU and CPU zone by key,
// and the pipeline statistics of the GPU zones that carry them; cpuWork
// counts the CPU spans that carry them too. Zones on a GPU queue's
// overflow lanes belong to the queue.
func runDurations(t *timeline.Trace) (durs map[zoneKey][]int64, works map[zoneKey]*runWorkSum, cpuWork int) {
	type where struct{ kind, track string }
	byID := make(map[timeline.TrackID]timeline.Track, len(t.Tracks))
	for _, tr := range t.Tracks {
		byID[tr.ID] = tr
	}
	tracks := map[timeline.TrackID]where{}
	for _, tr := range t.Tracks {
		switch tr.Kind {
		case timeline.TrackCPU:
			tracks[tr.ID] = where{"cpu", tr.Name}
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			q := tr
			if tr.Kind == timeline.TrackGPULane {
				if p, ok := byID[tr.Parent]; ok && p.Kind == timeline.TrackGPUQueue {
					q = p
				}
			}
			tracks[tr.ID] = where{"gpu", queueKey(q)}
		}
	}
	durs, works = map[zoneKey][]int64{}, map[zoneKey]*runWorkSum{}
	for _, s := range t.Spans {
		w, ok := tracks[s.Track]
		if !ok {
			continue
		}
		k := zoneKey{w.kind, w.track, t.Name(s.Name)}
		durs[k] = append(durs[k], max(s.Dur(), 0))
		switch {
		case s.Work == nil:
		case w.kind != "gpu":
			cpuWork++
		default:
			ws := works[k]
			if ws == nil {
				ws = &runWorkSum{}
				works[k] = ws
			}
			ws.add(s.Work)
		}
	}
	addFrameSeries(durs, t)
	return durs, works, cpuWork
}

// addFrameSeries adds the frames' own series to a run's durations, as
// zones of kind "frame" on the track "frames": each frame's interval, and
// its GPU busy and CPU busy time (package timeline/limits), so that diff
// and history compare what limits the frames as they compare zones.
func addFrameSeries(durs map[zoneKey][]int64, t *timeline.Trace) {
	for _, f := range limits.Of(t).Frames {
		durs[frameInterval] = append(durs[frameInterval], f.Dur())
		if f.GPUBusy > 0 {
			durs[frameGPUBusy] = append(durs[frameGPUBusy], f.GPUBusy)
		}
		if f.Thread != 0 {
			durs[frameCPUBusy] = append(durs[frameCPUBusy], f.CPUBusy)
		}
	}
}

// The frames' series, as zones.
var (
	frameInterval = zoneKey{frameKind, "frames", "interval"}
	frameGPUBusy  = zoneKey{frameKind, "frames", "gpu busy"}
	frameCPUBusy  = zoneKey{frameKind, "frames", "cpu busy"}
)

// frameKind is the kind of the frames' own series.
const frameKind = "frame"

// queueKey names a GPU queue track without its device.
func queueKey(tr timeline.Track) string {
	q := tr.Queue
	if q == (timeline.Queue{}) {
		return tr.Name
	}
	kind := q.Flags
	if kind == "" {
		kind = "gpu"
	}
	return kind + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
}

// devices lists the GPU devices the runs of a side ran on.
func (s side) devices() []string {
	var out []string
	for _, r := range s.Runs {
		for _, d := range r.Devices {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}
