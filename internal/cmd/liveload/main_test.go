package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPoolReadsRuns: -pool reads back the runs liveload printed, every
// figure the report uses.
func TestPoolReadsRuns(t *testing.T) {
	var want []result
	text := "a line that is no run\n"
	for i, loaded := range []bool{false, true} {
		r := result{loaded: loaded, codes: map[int]int{}, errs: i, traces: 3 * i, spans: 1000 * i, lost: uint64(7 * i),
			profiles: 2 * i, lostProfiles: i, bad: i}
		r.sum.Frames = 20000 + i
		r.sum.FrameCPU.P50, r.sum.FrameCPU.P95, r.sum.FrameGPU.P95 = 0.0306, 0.1155+float64(i), 0.0215
		r.sum.HeapMaxMB, r.sum.HeapMeanMB, r.sum.HeapLiveMaxMB, r.sum.HeapLiveMeanMB = 11.4, 8.2, 6, 5.6
		r.sum.AllocMBPerS, r.sum.GCCycles = 27.5, 64
		if loaded {
			r.codes[200], r.codes[429] = 966, 382
		}
		want = append(want, r)
		text += runText(i+1, r) + "\n"
	}
	name := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readRuns([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if _, err := readRuns([]string{filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("a missing file read")
	}
}
