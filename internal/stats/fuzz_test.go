package stats

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// int64s decodes data as little-endian int64s (a trailing part ignored).
func int64s(data []byte) []int64 {
	xs := make([]int64, len(data)/8)
	for i := range xs {
		xs[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return xs
}

// FuzzSummarize: any sample gives a summary whose figures are ordered
// (min <= p50 <= p95 <= p99 <= max, the mean between min and max), the
// exact count, and a total that is the sum when it fits an int64.
func FuzzSummarize(f *testing.F) {
	enc := func(xs ...int64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	f.Add(enc(1, 2, 3))
	f.Add(enc(5e18, 5e18))
	f.Add(enc(math.MinInt64, math.MaxInt64, 0))
	f.Add(enc(-1))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		xs := int64s(data)
		s := Summarize(slices.Clone(xs))
		if s.Count != len(xs) {
			t.Fatalf("count %d of %d", s.Count, len(xs))
		}
		if len(xs) == 0 {
			if s != (Summary{}) {
				t.Fatalf("empty sample: %+v", s)
			}
			return
		}
		lo, hi := float64(s.Min), float64(s.Max)
		for _, v := range []float64{s.Mean, s.P50, s.P95, s.P99} {
			if math.IsNaN(v) || v < lo || v > hi {
				t.Fatalf("%+v: a figure outside [min, max]", s)
			}
		}
		if !(s.P50 <= s.P95 && s.P95 <= s.P99) {
			t.Fatalf("%+v: percentiles out of order", s)
		}
		var sum int64
		fits := true
		for _, x := range xs {
			if AddSat(sum, x) != sum+x {
				fits = false
			}
			sum += x
		}
		if fits && s.Total != sum {
			t.Fatalf("total %d, want %d", s.Total, sum)
		}
	})
}

// FuzzMannWhitney: any two samples of numbers give a p-value in [0, 1]
// and U in [0, len(x)*len(y)], or ErrEmpty.
func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6})
	f.Add([]byte{}, []byte{1})
	f.Add([]byte{7, 7, 7, 7}, []byte{7, 7})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a)*len(b) > 1<<20 {
			return
		}
		x, y := make([]float64, len(a)), make([]float64, len(b))
		for i, v := range a {
			x[i] = float64(v)
		}
		for i, v := range b {
			y[i] = float64(v)
		}
		r, err := MannWhitney(x, y)
		if len(x) == 0 || len(y) == 0 {
			if err == nil {
				t.Fatal("no error on an empty sample")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(r.P) || r.P < 0 || r.P > 1 || r.U < 0 || r.U > float64(len(x)*len(y)) {
			t.Fatalf("%+v for %d and %d values", r, len(x), len(y))
		}
	})
}
