package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
)

func init() {
	register(command{
		name:    "stats",
		summary: "per-zone and per-frame statistics of a trace",
		run:     runStats,
	})
}

// zone is a zone name on one side of the machine.
type zone struct {
	Kind string // "gpu" or "cpu"
	Name string
}

func (z zone) String() string { return z.Kind + ":" + z.Name }

// zoneDurations collects the durations of every GPU and CPU zone by name.
func zoneDurations(t *timeline.Trace) map[zone][]int64 {
	kinds := trackKinds(t)
	out := map[zone][]int64{}
	for _, s := range t.Spans {
		k := kinds[s.Track]
		if k == "" {
			continue
		}
		z := zone{k, t.Name(s.Name)}
		out[z] = append(out[z], s.Dur())
	}
	return out
}

func trackKinds(t *timeline.Trace) map[timeline.TrackID]string {
	m := map[timeline.TrackID]string{}
	for _, tr := range t.Tracks {
		switch tr.Kind {
		case timeline.TrackCPU:
			m[tr.ID] = "cpu"
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			m[tr.ID] = "gpu"
		}
	}
	return m
}

func sortedZones[V any](m map[zone]V) []zone {
	zs := make([]zone, 0, len(m))
	for z := range m {
		zs = append(zs, z)
	}
	slices.SortFunc(zs, func(a, b zone) int {
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return -c // gpu first
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return zs
}

// summaryJSON is a stats.Summary in nanoseconds for --json.
type summaryJSON struct {
	Count  int     `json:"count"`
	MeanNs float64 `json:"mean_ns"`
	P50Ns  float64 `json:"p50_ns"`
	P95Ns  float64 `json:"p95_ns"`
	P99Ns  float64 `json:"p99_ns"`
	MaxNs  int64   `json:"max_ns"`
}

func toJSON(s stats.Summary) summaryJSON {
	return summaryJSON{s.Count, s.Mean, s.P50, s.P95, s.P99, s.Max}
}

type zoneStats struct {
	Zone string `json:"zone"`
	Kind string `json:"kind"`
	summaryJSON
	// Work is a GPU zone's work; absent where no instance carries any.
	Work *zoneWorkJSON `json:"work,omitempty"`
}

type frameTotal struct {
	Frame uint64 `json:"frame"`
	GPUNs int64  `json:"gpu_ns"`
	CPUNs int64  `json:"cpu_ns"`
}

type statsReport struct {
	Zones  []zoneStats `json:"zones"`
	Frames struct {
		Count int          `json:"count"`
		GPU   summaryJSON  `json:"gpu"`
		CPU   summaryJSON  `json:"cpu"`
		Each  []frameTotal `json:"each"`
		limitsJSON
	} `json:"frames"`
	Drops  dropsJSON  `json:"drops"`
	Ledger ledgerJSON `json:"ledger,omitempty"`
	// Work is absent from a trace whose zones carry none.
	Work *workJSON `json:"work,omitempty"`
	// Cut is absent from a whole trace; it says how much of a trace cut
	// short reads back, which is all the rest counts.
	Cut *traceCut `json:"cut,omitempty"`
}

// dropsJSON is timeline.Drops for --json: "total", then every cause by
// its key, in order.
type dropsJSON struct {
	Total uint64
	timeline.Drops
}

func (d dropsJSON) MarshalJSON() ([]byte, error) {
	b := []byte(`{"total":`)
	b = strconv.AppendUint(b, d.Total, 10)
	for c := range books.NumCauses {
		b = append(b, `,"`+c.String()+`":`...)
		b = strconv.AppendUint(b, *books.Count(&d.Drops, c), 10)
	}
	return append(b, '}'), nil
}

func dropsOf(d timeline.Drops) dropsJSON { return dropsJSON{d.Total(), d} }

// frameTotals sums, for each frame, the durations of the outermost GPU and
// CPU spans that carry its id: the GPU and CPU time the frame took.
func frameTotals(t *timeline.Trace) []frameTotal {
	kinds := trackKinds(t)
	byID := map[uint64]*frameTotal{}
	var order []uint64
	get := func(id uint64) *frameTotal {
		f := byID[id]
		if f == nil {
			f = &frameTotal{Frame: id}
			byID[id] = f
			order = append(order, id)
		}
		return f
	}
	for _, f := range t.Frames {
		get(f.ID)
	}
	for _, s := range t.Spans {
		if s.Frame == 0 || s.Depth != 0 {
			continue
		}
		switch kinds[s.Track] {
		case "gpu":
			f := get(s.Frame)
			f.GPUNs = stats.AddSat(f.GPUNs, s.Dur())
		case "cpu":
			f := get(s.Frame)
			f.CPUNs = stats.AddSat(f.CPUNs, s.Dur())
		}
	}
	slices.Sort(order)
	out := make([]frameTotal, len(order))
	for i, id := range order {
		out[i] = *byID[id]
	}
	return out
}

func computeStats(t *timeline.Trace) statsReport {
	var r statsReport
	durs := zoneDurations(t)
	for _, z := range sortedZones(durs) {
		r.Zones = append(r.Zones, zoneStats{Zone: z.Name, Kind: z.Kind, summaryJSON: toJSON(stats.Summarize(durs[z]))})
	}
	addWork(&r, t)
	r.Frames.Each = frameTotals(t)
	r.Frames.Count = len(r.Frames.Each)
	gpu := make([]int64, len(r.Frames.Each))
	cpu := make([]int64, len(r.Frames.Each))
	for i, f := range r.Frames.Each {
		gpu[i], cpu[i] = f.GPUNs, f.CPUNs
	}
	r.Frames.GPU, r.Frames.CPU = toJSON(stats.Summarize(gpu)), toJSON(stats.Summarize(cpu))
	r.Frames.limitsJSON = limitsOf(t)
	r.Drops = dropsOf(t.Drops)
	r.Ledger = ledgerOf(t)
	return r
}

// fmtNs formats nanoseconds for people: 1.234ms, 56.7µs.
func fmtNs(ns float64) string {
	if math.IsNaN(ns) {
		return "-"
	}
	// In floating point: a time.Duration of 9.3e18 ns would wrap negative.
	a := math.Abs(math.Round(ns))
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.3fs", ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3fms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3fµs", ns/1e3)
	}
	return fmt.Sprintf("%.0fns", math.Round(ns))
}

// dropsLine is "dropped: N (query_limit 1, no_frame 2, ...)" with every cause
// that is not zero, misuse last and not in N.
func dropsLine(d dropsJSON) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dropped: %d", d.Total)
	if d.Overflows() {
		b.WriteString(" or more (the causes add up past 2^64-1)")
	}
	sep := " ("
	for c := range books.NumCauses {
		if n := *books.Count(&d.Drops, c); n > 0 {
			fmt.Fprintf(&b, "%s%s %d", sep, c, n)
			sep = ", "
		}
	}
	if sep == ", " {
		b.WriteByte(')')
	}
	return b.String()
}

func runStats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write JSON")
	markdown := fs.Bool("markdown", false, "write Markdown tables")
	each := fs.Bool("frames", false, "also list every frame's GPU and CPU totals (JSON always has them)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framescope stats [--json | --markdown] [--frames] TRACE")
		fmt.Fprintln(stderr, "Per zone: count, mean, p50, p95, p99 and max duration; per frame: GPU and CPU totals;")
		fmt.Fprintln(stderr, "what was dropped, by cause; and the books of the recorder that made the trace, each of")
		fmt.Fprintln(stderr, "which must balance: issued = delivered + open + lost. Where GPU zones count pipeline")
		fmt.Fprintln(stderr, "statistics, per zone: how many were counted, how many have no counts (and why), and each")
		fmt.Fprintln(stderr, "statistic's mean over those counted.")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || (*asJSON && *markdown) {
		fs.Usage()
		return 2
	}
	t, cut, err := loadTraceCut(pos[0])
	if err == nil {
		_, _, cpuWork := runDurations(t)
		err = cpuWorkError(pos[0], cpuWork)
	}
	if err != nil {
		fmt.Fprintf(stderr, "framescope stats: %s\n", termText(err.Error()))
		return 2
	}
	r := computeStats(t)
	r.Cut = cut
	switch {
	case *asJSON:
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		if err := e.Encode(r); err != nil {
			fmt.Fprintf(stderr, "framescope stats: %v\n", err)
			return 2
		}
	case *markdown:
		writeStatsMarkdown(stdout, r, *each)
	default:
		writeStatsText(stdout, r, *each)
	}
	return 0
}

func writeStatsText(w io.Writer, r statsReport, each bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tzone\tcount\tmean\tp50\tp95\tp99\tmax\t")
	for _, z := range r.Zones {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", z.Kind, termText(z.Zone), z.Count,
			fmtNs(z.MeanNs), fmtNs(z.P50Ns), fmtNs(z.P95Ns), fmtNs(z.P99Ns), fmtNs(float64(z.MaxNs)))
	}
	tw.Flush()
	writeWorkText(w, r)
	fmt.Fprintf(w, "\nframes: %d\nwhat limits them: %s\n", r.Frames.Count, limitsLine(r.Frames.limitsJSON))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "per frame\tmean\tp50\tp95\tp99\tmax\t")
	for _, row := range []struct {
		name string
		s    summaryJSON
	}{{"gpu", r.Frames.GPU}, {"cpu", r.Frames.CPU}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, fmtNs(row.s.MeanNs), fmtNs(row.s.P50Ns), fmtNs(row.s.P95Ns), fmtNs(row.s.P99Ns), fmtNs(float64(row.s.MaxNs)))
	}
	tw.Flush()
	if each {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "frame\tgpu\tcpu\t")
		for _, f := range r.Frames.Each {
			fmt.Fprintf(tw, "%d\t%s\t%s\t\n", f.Frame, fmtNs(float64(f.GPUNs)), fmtNs(float64(f.CPUNs)))
		}
		tw.Flush()
	}
	fmt.Fprintln(w, dropsLine(r.Drops))
	for _, l := range ledgerLines(r.Ledger) {
		fmt.Fprintln(w, l)
	}
	if r.Cut != nil {
		fmt.Fprintf(w, "cut: %s\n", r.Cut.phrase().text())
	}
}

func writeStatsMarkdown(w io.Writer, r statsReport, each bool) {
	fmt.Fprintln(w, "| kind | zone | count | mean | p50 | p95 | p99 | max |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|")
	for _, z := range r.Zones {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", z.Kind, mdCode(z.Zone), z.Count,
			fmtNs(z.MeanNs), fmtNs(z.P50Ns), fmtNs(z.P95Ns), fmtNs(z.P99Ns), fmtNs(float64(z.MaxNs)))
	}
	writeWorkMarkdown(w, r)
	fmt.Fprintf(w, "\n**%d frames**; what limits them: %s\n\n", r.Frames.Count, limitsLine(r.Frames.limitsJSON))
	fmt.Fprintln(w, "| per frame | mean | p50 | p95 | p99 | max |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	fmt.Fprintf(w, "| gpu | %s | %s | %s | %s | %s |\n", fmtNs(r.Frames.GPU.MeanNs), fmtNs(r.Frames.GPU.P50Ns), fmtNs(r.Frames.GPU.P95Ns), fmtNs(r.Frames.GPU.P99Ns), fmtNs(float64(r.Frames.GPU.MaxNs)))
	fmt.Fprintf(w, "| cpu | %s | %s | %s | %s | %s |\n", fmtNs(r.Frames.CPU.MeanNs), fmtNs(r.Frames.CPU.P50Ns), fmtNs(r.Frames.CPU.P95Ns), fmtNs(r.Frames.CPU.P99Ns), fmtNs(float64(r.Frames.CPU.MaxNs)))
	if each {
		fmt.Fprintln(w, "\n| frame | gpu | cpu |")
		fmt.Fprintln(w, "|--:|--:|--:|")
		for _, f := range r.Frames.Each {
			fmt.Fprintf(w, "| %d | %s | %s |\n", f.Frame, fmtNs(float64(f.GPUNs)), fmtNs(float64(f.CPUNs)))
		}
	}
	fmt.Fprintf(w, "\n%s\n", dropsLine(r.Drops))
	for _, l := range ledgerLines(r.Ledger) {
		fmt.Fprintf(w, "\n%s\n", l)
	}
	if r.Cut != nil {
		fmt.Fprintf(w, "\n**cut**: %s\n", r.Cut.phrase().markdown())
	}
}
