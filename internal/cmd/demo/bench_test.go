package demo

import (
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// BenchmarkRecordZones measures the CPU cost of recording profiler zones
// against its floor, bare vkCmdWriteTimestamp pairs, in the same run: each
// iteration records one frame with no extra zones, one with benchZones
// zones and one with benchZones raw pairs, on three loops sharing the
// device. It reports the cost per zone and per pair above the plain frame,
// and their ratio (zone/raw-pair). The device is opened without the
// validation layer, which would dominate what is measured.
func BenchmarkRecordZones(b *testing.B) {
	const benchZones = 64
	_ = vk.PinDrivers() // benchmarks open a device per run (vk.PinDrivers)
	d, err := vk.Open(vk.Config{InstanceConfig: vk.InstanceConfig{AppName: "triangle-bench"}})
	if err != nil {
		if vktest.Required() {
			b.Fatalf("no Vulkan device (FRAMESCOPE_REQUIRE_VULKAN=1): %v", err)
		}
		b.Skipf("no Vulkan device: %v", err)
	}
	b.Cleanup(d.Close) // after the loops' cleanups
	discard := timeline.SinkFunc(func(*timeline.Trace) error { return nil })
	mk := func(zones, raw int) *loop {
		cfg := defaultConfig()
		cfg.size, cfg.zones, cfg.rawZones = 64, zones, raw
		l, err := newLoop(cfg, d, discard)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.close() })
		return l
	}
	plain, zoned, raw := mk(0, 0), mk(benchZones, 0), mk(0, benchZones)
	var tPlain, tZones, tRaw int64
	b.ResetTimer()
	for f := 0; f < b.N; f++ {
		for _, x := range []struct {
			l *loop
			t *int64
		}{{plain, &tPlain}, {zoned, &tZones}, {raw, &tRaw}} {
			rec, err := x.l.frame(f)
			if err != nil {
				b.Fatal(err)
			}
			*x.t += rec
		}
	}
	b.StopTimer()
	n := float64(b.N)
	perZone := float64(tZones-tPlain) / n / benchZones
	perPair := float64(tRaw-tPlain) / n / benchZones
	b.ReportMetric(float64(tPlain)/n, "plain-record-ns/frame")
	b.ReportMetric(perZone, "ns/zone")
	b.ReportMetric(perPair, "ns/raw-pair")
	if perPair > 0 {
		b.ReportMetric(perZone/perPair, "zone/raw-pair")
	}
}
