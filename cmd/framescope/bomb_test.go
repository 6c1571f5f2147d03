package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/hostile"
)

// TestGzipBombs: compressed input that grows past the limits fails with
// an error naming the limit, and costs a bounded amount of memory on the
// way, as the limits are checked while the input streams, never after
// buffering it. (A 175 KB .pftrace.gz once took 4.5 GB, and a .gz of a
// packet and zeros was read whole before its error.)
func TestGzipBombs(t *testing.T) {
	defer func(s int) { maxSpans = s }(maxSpans)
	maxSpans = 100_000
	n := 1_000_000
	if testing.Short() {
		n = 300_000
	}
	gz := func(gen func(io.Writer) error) []byte {
		var b bytes.Buffer
		if err := hostile.GzipLevel(&b, gzip.BestSpeed, gen); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"perfetto slices", gz(func(w io.Writer) error { return hostile.PerfettoSlices(w, n, 1, false) }), "MaxSpans"},
		{"chrome slices", gz(func(w io.Writer) error { return hostile.ChromeSlices(w, n, 1) }), "MaxEvents"},
		{"a trace then zeros", gz(func(w io.Writer) error {
			hostile.PerfettoSlices(w, 1000, 1, false)
			return hostile.Zeros(w, 256<<20)
		}), "corrupt"},
	} {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, _, err := readTrace(bytes.NewReader(tc.in))
		runtime.ReadMemStats(&b)
		alloc := b.TotalAlloc - a.TotalAlloc
		t.Logf("%s: %d bytes compressed: %d bytes allocated: %v", tc.name, len(tc.in), alloc, err)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
		if alloc > 64<<20 {
			t.Errorf("%s: %d MB allocated before the error, want at most 64", tc.name, alloc>>20)
		}
	}
}
