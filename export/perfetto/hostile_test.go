package perfetto

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/framescope/framescope/internal/testkit/hostile"
	"github.com/framescope/framescope/timeline"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestReadMemoryLinear: Read allocates a bounded multiple of its input
// however the input is made: tiny packets (a slice in 18 bytes), slices
// nested 65535 deep, or all names distinct. (It once held the whole input
// and a map entry per slice: 38 times the input on tiny packets.) The
// bound is what Read's comment promises: 200 bytes a slice, and 200 more
// for a name of its own.
func TestReadMemoryLinear(t *testing.T) {
	n := 2 * 65535
	if testing.Short() {
		n = 70_000
	}
	for _, tc := range []struct {
		name  string
		depth int
		named bool
	}{{"flat", 1, false}, {"deep", 65535, false}, {"named", 1, true}} {
		var buf bytes.Buffer
		if err := hostile.PerfettoSlices(&buf, n, tc.depth, tc.named); err != nil {
			t.Fatal(err)
		}
		var tr any
		var err error
		got := allocated(func() { tr, err = Read(bytes.NewReader(buf.Bytes())) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_ = tr
		per := float64(got) / float64(n)
		t.Logf("%s: %d bytes in, %d slices: %d bytes allocated, %.0f a slice, %.1f times the input", tc.name, buf.Len(), n, got, per, float64(got)/float64(buf.Len()))
		limit := 200.0
		if tc.named {
			limit = 400
		}
		if per > limit {
			t.Errorf("%s: %.0f bytes allocated a slice, want at most %v", tc.name, per, limit)
		}
	}
}

// TestReadLimits: each limit is enforced, with an error naming it.
func TestReadLimits(t *testing.T) {
	var buf bytes.Buffer
	hostile.PerfettoSlices(&buf, 1000, 100, false)
	for _, tc := range []struct {
		lim  Limits
		want string
	}{
		{Limits{MaxBytes: 100}, "Limits.MaxBytes"},
		{Limits{MaxSpans: 999}, "Limits.MaxSpans"},
		{Limits{MaxDepth: 99}, "Limits.MaxDepth"},
	} {
		_, err := ReadLimited(bytes.NewReader(buf.Bytes()), tc.lim)
		if !errors.Is(err, ErrTooLarge) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%+v: %v, want ErrTooLarge naming %s", tc.lim, err, tc.want)
		}
	}
	buf.Reset()
	hostile.PerfettoHugePacket(&buf, MaxPacket+1)
	if _, err := Read(&buf); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "MaxPacket") {
		t.Errorf("a packet over MaxPacket: %v", err)
	}
	buf.Reset()
	hostile.PerfettoSlices(&buf, 1000, 100, false)
	if _, err := ReadLimited(bytes.NewReader(buf.Bytes()), Limits{MaxSpans: 1000, MaxDepth: 100, MaxBytes: int64(buf.Len())}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}

// BenchmarkReadDepth reads 200,000 slices side by side and nested 65535
// deep: linear, the two cost about the same a slice (the ratio is
// reported by the deep one; it was once quadratic in the depth).
func BenchmarkReadDepth(b *testing.B) {
	const n = 200_000
	var perSlice [2]float64
	for k, depth := range []int{1, 65535} {
		var buf bytes.Buffer
		hostile.PerfettoSlices(&buf, n, depth, false)
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, err := Read(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
			perSlice[k] = float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
			b.ReportMetric(perSlice[k], "ns/slice")
			if k == 1 && perSlice[0] > 0 {
				b.ReportMetric(perSlice[1]/perSlice[0], "deep/flat")
			}
		})
	}
}

// TestWriteMemoryOneBatch: a whole trace written as one batch, as convert
// writes it, allocates at most 80 bytes a span, work counters and render
// stages included: its two events of 24 bytes, the per-span lists the
// writer keeps beside them, and no list grown by appending, which held
// the old list and the new one at once (issue 38: 1,361 MiB for 4 Mi
// zones with work and render stages; this test's took 400 bytes a span
// then, 65 now).
func TestWriteMemoryOneBatch(t *testing.T) {
	const n = maxRadix/2 + 1 // past the radix sort, which would take a scratch list
	queue := timeline.Track{ID: 1, Kind: timeline.TrackGPUQueue, Name: "q", Queue: timeline.Queue{Device: "d", Flags: "graphics"}}
	tr := &timeline.Trace{Names: []string{"", "z"}, Tracks: []timeline.Track{queue}, Spans: make([]timeline.Span, n)}
	works := make([]timeline.Work, n)
	for i := range tr.Spans {
		works[i] = timeline.Work{Stats: timeline.AllPipelineStats}
		works[i].Count[7] = uint64(i)
		tr.Spans[i] = timeline.Span{Track: 1, Name: 1, Start: int64(10 * i), End: int64(10*i + 9), Frame: uint64(i/1000 + 1), Work: &works[i]}
	}
	var err error
	got := allocated(func() {
		w := NewWriter(io.Discard, Options{RenderStages: true})
		if err = w.Write(tr); err == nil {
			err = w.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	per := float64(got) / n
	t.Logf("%d spans: %d bytes allocated, %.0f a span", n, got, per)
	if per > 80 {
		t.Errorf("%.0f bytes allocated a span, want at most 80", per)
	}
}
