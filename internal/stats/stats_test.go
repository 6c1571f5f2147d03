package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []int64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []int64{7}, Summary{Count: 1, Total: 7, Mean: 7, Min: 7, P50: 7, P95: 7, P99: 7, Max: 7}},
		{"four", []int64{40, 10, 30, 20}, Summary{Count: 4, Total: 100, Mean: 25, Min: 10, P50: 25, P95: 38.5, P99: 39.7, Max: 40}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.in)
			if math.Abs(got.P95-tc.want.P95) > 1e-9 || math.Abs(got.P99-tc.want.P99) > 1e-9 {
				t.Fatalf("percentiles: got %+v want %+v", got, tc.want)
			}
			got.P95, got.P99 = tc.want.P95, tc.want.P99
			if got != tc.want {
				t.Fatalf("got %+v want %+v", got, tc.want)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	s := []int64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tests := []struct{ p, want float64 }{{0, 0}, {0.5, 50}, {0.95, 95}, {0.99, 99}, {1, 100}, {-1, 0}, {2, 100}}
	for _, tc := range tests {
		if got := Quantile(s, tc.p); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of empty sample is not NaN")
	}
}

func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		// All of y above all of x: exact P = 1/C(6,3).
		{"separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 9, 1.0 / 20, true},
		{"reversed", []float64{4, 5, 6}, []float64{1, 2, 3}, 0, 1, true},
		// U = 4 of 9 for sizes 3,3: P(U >= 4) = 13/20 (counts 1,1,2,3,3,3,3,2,1,1).
		{"mixed", []float64{1, 4, 6}, []float64{2, 3, 5}, 4, 13.0 / 20, true},
		// Ties: mid-ranks, tie-corrected variance 11.142857, z = 5/sqrt(var).
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 4}, 13.5, 0.5 * math.Erfc(5/math.Sqrt(11.142857142857142)/math.Sqrt2), false},
		{"all equal", []float64{3, 3}, []float64{3, 3, 3}, 3, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := MannWhitney(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if r.U != tc.u || math.Abs(r.P-tc.p) > 1e-9 || r.Exact != tc.exact {
				t.Fatalf("got %+v, want U=%v P=%v exact=%v", r, tc.u, tc.p, tc.exact)
			}
		})
	}
	if _, err := MannWhitney(nil, []float64{1}); err == nil {
		t.Fatal("empty sample accepted")
	}
}

// TestMannWhitneyNormalMatchesExact checks the normal approximation
// against the exact distribution where both apply.
func TestMannWhitneyNormalMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{15, 20} {
		for range 20 {
			x := make([]float64, n)
			y := make([]float64, n)
			for i := range x {
				x[i] = rng.Float64()
				y[i] = rng.Float64() + 0.2
			}
			ex, _ := MannWhitney(x, y)
			if !ex.Exact {
				t.Fatalf("n=%d not exact", n)
			}
			ap, _ := mannWhitney(x, y, false)
			if ap.Exact {
				t.Fatal("tied sample took the exact path")
			}
			if d := math.Abs(ap.P - ex.P); d > 0.02 {
				t.Errorf("n=%d: normal P %.4f vs exact %.4f", n, ap.P, ex.P)
			}
		}
	}
}

// TestMannWhitneyFalsePositiveRate checks that under the null the one-sided
// test rejects at about alpha: over 2000 seeded pairs of samples from one
// distribution, rejections stay under the binomial 99.9% upper limit.
func TestMannWhitneyFalsePositiveRate(t *testing.T) {
	const runs, alpha = 2000, 0.05
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{10, 50} {
		rejected := 0
		for range runs {
			x := make([]float64, n)
			y := make([]float64, n)
			for i := range x {
				x[i] = math.Round(rng.ExpFloat64() * 20) // ties on purpose
				y[i] = math.Round(rng.ExpFloat64() * 20)
			}
			r, _ := MannWhitney(x, y)
			if r.P < alpha {
				rejected++
			}
		}
		if limit := BinomialUpper(runs, alpha, 0.001); rejected > limit {
			t.Errorf("n=%d: %d of %d null runs rejected at alpha %v, limit %d", n, rejected, runs, alpha, limit)
		}
	}
}

func TestBinomialUpper(t *testing.T) {
	tests := []struct {
		n       int
		p, tail float64
		want    int
	}{
		{10, 0.5, 0.5, 5},     // P(X > 5) = 0.377 <= 0.5, P(X > 4) = 0.623
		{10, 0.5, 0.001, 9},   // P(X > 9) = 1/1024 <= 0.001 < P(X > 8) = 11/1024
		{200, 0.01, 0.001, 8}, // mean 2: P(X > 7) ~ 0.0011, P(X > 8) ~ 0.0002
		{100, 0, 0.001, 0},
	}
	for _, tc := range tests {
		if got := BinomialUpper(tc.n, tc.p, tc.tail); got != tc.want {
			t.Errorf("BinomialUpper(%d, %v, %v) = %d, want %d", tc.n, tc.p, tc.tail, got, tc.want)
		}
	}
}

func ExampleMannWhitney() {
	base := []float64{100, 102, 98, 101, 99, 104, 103, 97}
	slower := []float64{110, 112, 108, 111, 109, 113, 107, 114}
	r, _ := MannWhitney(base, slower)
	fmt.Printf("U=%v p=%.5f exact=%v\n", r.U, r.P, r.Exact)
	// Output: U=64 p=0.00008 exact=true
}

func ExampleSummarize() {
	s := Summarize([]int64{5, 1, 4, 2, 3})
	fmt.Println(s.Count, s.Mean, s.P50, s.Max)
	// Output: 5 3 3 5
}

// TestSummarizeHuge: sums past an int64 give the right mean (two spans of
// 5e15 µs once printed a negative mean) and a saturated total.
func TestSummarizeHuge(t *testing.T) {
	const d = 5e18 // ns: 5e15 µs
	s := Summarize([]int64{d, d})
	if s.Mean != d {
		t.Errorf("mean of two %v = %v", float64(d), s.Mean)
	}
	if s.Total != math.MaxInt64 {
		t.Errorf("total %d, want it saturated at MaxInt64", s.Total)
	}
	s = Summarize([]int64{math.MinInt64, math.MinInt64, math.MaxInt64})
	if want := float64(math.MinInt64) / 3; math.Abs(s.Mean-want) > 1e3 {
		t.Errorf("mean %v, want %v", s.Mean, want)
	}
	if s.Total != math.MinInt64 {
		t.Errorf("total %d, want MinInt64", s.Total)
	}
	s = Summarize([]int64{math.MinInt64, math.MaxInt64})
	if s.P50 != -0.5 && math.Abs(s.P50) > 1 {
		t.Errorf("median of MinInt64 and MaxInt64 = %v, want about 0", s.P50)
	}
	if s.Total != -1 {
		t.Errorf("total %d, want -1", s.Total)
	}
}

func TestAddSat(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{1, 2, 3}, {math.MaxInt64, 1, math.MaxInt64}, {math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1}, {-5, 3, -2}, {math.MaxInt64 - 1, 1, math.MaxInt64},
		{0, math.MinInt64, math.MinInt64},
	} {
		if got := AddSat(tc.a, tc.b); got != tc.want {
			t.Errorf("AddSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
