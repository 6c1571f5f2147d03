package demo

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/framescope/framescope/internal/stats"
	"github.com/framescope/framescope/timeline"
)

// workSum adds up the frame zones' pipeline statistics, with each one's
// least and most in a frame.
type workSum struct {
	sum, lo, hi [timeline.NumPipelineStats]uint64
	stats       timeline.PipelineStats
	frames      int
}

// add adds one frame zone's work, if it has counts.
func (s *workSum) add(w *timeline.Work) {
	if w == nil || w.Missing != timeline.WorkCounted {
		return
	}
	s.stats |= w.Stats
	for i, v := range w.Count {
		s.sum[i] += v
		if s.frames == 0 || v < s.lo[i] {
			s.lo[i] = v
		}
		s.hi[i] = max(s.hi[i], v)
	}
	s.frames++
}

// perFrame returns the mean per frame, by statistic key, and the least
// and most in a frame; nil without any.
func (s *workSum) perFrame() (mean, lo, hi map[string]float64) {
	if s.frames == 0 {
		return nil, nil, nil
	}
	mean, lo, hi = map[string]float64{}, map[string]float64{}, map[string]float64{}
	s.stats.Each(func(i int) {
		k := timeline.StatKey(i)
		mean[k], lo[k], hi[k] = float64(s.sum[i])/float64(s.frames), float64(s.lo[i]), float64(s.hi[i])
	})
	return mean, lo, hi
}

// msStats summarises durations in milliseconds.
type msStats struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// summarizeMs sorts ns in place and summarises it in ms.
func summarizeMs(ns []int64) msStats {
	s := stats.Summarize(ns)
	if s.Count == 0 {
		return msStats{}
	}
	return msStats{
		N: s.Count, P50: s.P50 / 1e6, P95: s.P95 / 1e6, Mean: s.Mean / 1e6,
		Min: float64(s.Min) / 1e6, Max: float64(s.Max) / 1e6,
	}
}

// summary is what a run prints: as text, or as JSON with -json for the
// scripts that compare runs.
type summary struct {
	Device         string `json:"device"`
	Driver         string `json:"driver"`
	Calibrated     string `json:"calibrated_timestamps"` // the extension, or ""
	Frames         int    `json:"frames"`
	Warmup         int    `json:"warmup"` // first frames left out of the statistics
	FramesInFlight int    `json:"frames_in_flight"`
	Load           int    `json:"load"`
	Iterations     int    `json:"iterations"`
	ExtraZones     int    `json:"extra_zones"`
	RawZones       int    `json:"raw_zones"`
	Stages         string `json:"stages"`
	// Work is the "frame" zone's pipeline statistics (-pipeline-stats),
	// the mean per frame read back after the warm-up, by statistic.
	Work map[string]float64 `json:"work_per_frame,omitempty"`
	// WorkMin and WorkMax are the least and most of each in one frame.
	WorkMin map[string]float64 `json:"work_min,omitempty"`
	WorkMax map[string]float64 `json:"work_max,omitempty"`

	// FrameGPU is the duration of the "frame" GPU zone (device ticks times
	// timestampPeriod), one sample per frame read back after the warm-up.
	FrameGPU msStats `json:"frame_gpu_ms"`
	// CmdGPU, with -cmdgpu, is each command buffer's GPU time from its
	// first command to its last (raw timestamps, the profiler's readback
	// copy included), one sample per frame after the warm-up.
	CmdGPU msStats `json:"cmd_gpu_ms"`
	// FrameCPU is the host time from one frame's start to the next's.
	FrameCPU msStats `json:"frame_cpu_ms"`
	// Record is the CPU time spent recording a frame's command buffer.
	Record msStats `json:"record_cpu_ms"`
	// RawPairNs is the mean duration of the -rawzones timestamp pairs.
	RawPairNs float64 `json:"raw_pair_ns_mean"`
	RawPairs  uint64  `json:"raw_pairs"`

	Zones        uint64 `json:"zones"`         // GPU zones read back
	ZonesDropped uint64 `json:"zones_dropped"` // refused, never ended, uncalibrated, dropped by the recorder
	SpansDropped uint64 `json:"spans_dropped"` // CPU spans and evictions
	// GPULanes counts the extra lanes GPU zones went to because they
	// overlapped without nesting on their queue (0: every zone nested).
	GPULanes int `json:"gpu_extra_lanes"`
	// CalibrationErrNs and DriftPPM are the clock model's at the end.
	CalibrationErrNs float64 `json:"calibration_err_ns"`
	DriftPPM         float64 `json:"drift_ppm"`
	ZoneErrNsMax     int64   `json:"zone_err_ns_max"`

	ValidationWarnings uint64 `json:"validation_warnings"`
	ValidationErrors   uint64 `json:"validation_errors"`

	Files    []string `json:"files"`
	PNG      string   `json:"png,omitempty"`
	ElapsedS float64  `json:"elapsed_s"`
	// HeapMaxMB and HeapMeanMB are the bytes of the Go heap's objects,
	// live and not yet swept, sampled every 250 ms over the run, in MiB;
	// HeapLiveMaxMB and HeapLiveMeanMB the bytes the last collection had
	// found live at each sample. The first swing with the collector's
	// pace (up to twice the live heap with GOGC=100), the second only with
	// what the program holds.
	HeapMaxMB      float64 `json:"heap_max_mb"`
	HeapMeanMB     float64 `json:"heap_mean_mb"`
	HeapLiveMaxMB  float64 `json:"heap_live_max_mb"`
	HeapLiveMeanMB float64 `json:"heap_live_mean_mb"`
	// AllocMBPerS is what the run allocated, in MiB a second, and
	// GCCycles the collections that ran.
	AllocMBPerS float64 `json:"alloc_mb_per_s"`
	GCCycles    uint64  `json:"gc_cycles"`
}

func (s *summary) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

func (s *summary) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, `device      %s (%s), calibrated timestamps: %s
frames      %d (%d in flight), load %d draws x %d iterations, %d extra zones, %d raw pairs, stages %s
zones       %d read back, %d dropped, %d extra GPU lanes; CPU spans dropped %d
GPU frame   p50 %.3f ms, p95 %.3f ms, mean %.3f ms (%d frames)
CPU frame   p50 %.3f ms, p95 %.3f ms; recording p50 %.3f ms
clock       error bound %.0f ns at the end (largest on a zone %d ns), drift %.2f ppm
`, s.Device, s.Driver, orNone(s.Calibrated),
		s.Frames, s.FramesInFlight, s.Load, s.Iterations, s.ExtraZones, s.RawZones, s.Stages,
		s.Zones, s.ZonesDropped, s.GPULanes, s.SpansDropped,
		s.FrameGPU.P50, s.FrameGPU.P95, s.FrameGPU.Mean, s.FrameGPU.N,
		s.FrameCPU.P50, s.FrameCPU.P95, s.Record.P50,
		s.CalibrationErrNs, s.ZoneErrNsMax, s.DriftPPM)
	if err != nil {
		return err
	}
	if len(s.Work) > 0 {
		fmt.Fprintf(w, "work        per frame:")
		for i := range timeline.NumPipelineStats {
			if v, ok := s.Work[timeline.StatKey(i)]; ok {
				fmt.Fprintf(w, " %s %.0f", timeline.StatKey(i), v)
			}
		}
		fmt.Fprintln(w)
	}
	if s.CmdGPU.N > 0 {
		fmt.Fprintf(w, "GPU cmdbuf  p50 %.3f ms, p95 %.3f ms (%d frames, raw timestamps around each command buffer)\n", s.CmdGPU.P50, s.CmdGPU.P95, s.CmdGPU.N)
	}
	if s.RawPairs > 0 {
		fmt.Fprintf(w, "raw pairs   %d read back, mean %.0f ns\n", s.RawPairs, s.RawPairNs)
	}
	if s.ValidationWarnings+s.ValidationErrors > 0 {
		fmt.Fprintf(w, "validation  %d warnings, %d errors\n", s.ValidationWarnings, s.ValidationErrors)
	}
	for _, f := range s.Files {
		fmt.Fprintf(w, "wrote       %s\n", f)
	}
	if s.PNG != "" {
		fmt.Fprintf(w, "wrote       %s (the last frame)\n", s.PNG)
	}
	trace, prof := perfettoFile, pprofFile
	if len(s.Files) == 3 {
		trace, prof = s.Files[0], s.Files[2]
	}
	_, err = fmt.Fprintf(w, "open %s at https://ui.perfetto.dev (Open trace file);\n"+
		"GPU and CPU time by zone: go tool pprof -http=: %s\n", trace, prof)
	return err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
