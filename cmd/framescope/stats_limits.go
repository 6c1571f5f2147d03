package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// limitsJSON is what limits the frames, under "frames" in stats' JSON:
// each verdict's share of the frames (summing to 1 where there are any),
// and the GPU's and the submitting thread's busy time as shares of the
// frame's interval.
type limitsJSON struct {
	LimitedBy map[string]float64 `json:"limited_by"`
	GPUBusy   *busyJSON          `json:"gpu_busy,omitempty"`
	CPUBusy   *busyJSON          `json:"cpu_busy,omitempty"`
}

type busyJSON struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

var allLimits = []limits.Limit{limits.CPU, limits.GPU, limits.Present, limits.Unknown}

func limitsOf(t *timeline.Trace) limitsJSON {
	r := limits.Of(t)
	out := limitsJSON{LimitedBy: map[string]float64{}}
	for _, l := range allLimits {
		if s := r.Share(l); s > 0 {
			out.LimitedBy[l.String()] = s
		}
	}
	gpu, cpu := r.BusyShares()
	out.GPUBusy, out.CPUBusy = busyOf(gpu), busyOf(cpu)
	return out
}

// busyOf is the p50 and p95 of shares; nil where there are none.
func busyOf(shares []float64) *busyJSON {
	if len(shares) == 0 {
		return nil
	}
	ppm := make([]int64, len(shares))
	for i, s := range shares {
		ppm[i] = int64(math.Round(s * 1e6))
	}
	slices.Sort(ppm)
	return &busyJSON{P50: stats.Quantile(ppm, 0.5) / 1e6, P95: stats.Quantile(ppm, 0.95) / 1e6}
}

// limitsLine is what limits the frames in a line, the largest share
// first: "GPU-bound 97%, CPU-bound 3% (GPU busy p50 91%, p95 98%; CPU busy
// p50 12%, p95 20%)".
func limitsLine(l limitsJSON) string {
	type share struct {
		l limits.Limit
		s float64
	}
	var shares []share
	for _, x := range allLimits {
		if s := l.LimitedBy[x.String()]; s > 0 {
			shares = append(shares, share{x, s})
		}
	}
	if len(shares) == 0 {
		return "no frames"
	}
	slices.SortStableFunc(shares, func(a, b share) int { return -cmp.Compare(a.s, b.s) })
	var parts []string
	for _, s := range shares {
		pct := fmt.Sprintf("%.0f%%", 100*s.s)
		if 100*s.s < 0.5 {
			pct = "<1%" // some, not none
		}
		parts = append(parts, limitName(s.l)+" "+pct)
	}
	var busy []string
	if l.GPUBusy != nil {
		busy = append(busy, fmt.Sprintf("GPU busy p50 %.0f%%, p95 %.0f%%", 100*l.GPUBusy.P50, 100*l.GPUBusy.P95))
	}
	if l.CPUBusy != nil {
		busy = append(busy, fmt.Sprintf("CPU busy p50 %.0f%%, p95 %.0f%%", 100*l.CPUBusy.P50, 100*l.CPUBusy.P95))
	}
	line := strings.Join(parts, ", ")
	if len(busy) > 0 {
		line += " (" + strings.Join(busy, "; ") + ")"
	}
	return line
}

func limitName(l limits.Limit) string {
	if l == limits.Unknown {
		return "unknown (no GPU work)"
	}
	return l.Label()
}
