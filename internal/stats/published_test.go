package stats

import (
	"math"
	"slices"
	"testing"
)

// TestMannWhitneyCriticalValues checks the exact null distribution
// against the published table of critical values of U (for example
// Siegel and Castellan, "Nonparametric Statistics for the Behavioral
// Sciences", 2nd ed., 1988, Table J; the same values are in Zar,
// "Biostatistical Analysis", Table B.11): the largest U whose lower tail
// is at most alpha, for equal sample sizes n, one-sided alpha 0.05 and
// 0.025 (two-sided 0.05):
//
//	n    0.05   0.025
//	5      4      2
//	8     15     13
//	10    27     23
//	20   138    127
func TestMannWhitneyCriticalValues(t *testing.T) {
	table := []struct {
		n          int
		alpha      float64
		critical   int
		sourceNote string
	}{
		{5, 0.05, 4, "Table J"}, {5, 0.025, 2, "Table J"},
		{8, 0.05, 15, "Table J"}, {8, 0.025, 13, "Table J"},
		{10, 0.05, 27, "Table J"}, {10, 0.025, 23, "Table J"},
		{20, 0.05, 138, "Table J"}, {20, 0.025, 127, "Table J"},
	}
	for _, tc := range table {
		// P(U <= c) for the first sample's U equals P(U >= n*n-c) by
		// symmetry; exactUpper gives the latter.
		lower := func(c int) float64 { return exactUpper(tc.n, tc.n, tc.n*tc.n-c) }
		if p := lower(tc.critical); p > tc.alpha {
			t.Errorf("n=%d: P(U <= %d) = %.5f > %v", tc.n, tc.critical, p, tc.alpha)
		}
		if p := lower(tc.critical + 1); p <= tc.alpha {
			t.Errorf("n=%d: P(U <= %d) = %.5f <= %v: the critical value would be larger than the table's %d", tc.n, tc.critical+1, p, tc.alpha, tc.critical)
		}
	}
	// Through the public function: x = 1..5 and y = 6..10, the one
	// arrangement of 252 with U = 25 (Mann and Whitney 1947: P = 1/C(10,5)).
	r, err := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if err != nil || !r.Exact || r.U != 25 || math.Abs(r.P-1.0/252) > 1e-12 {
		t.Fatalf("separated 5 vs 5: %+v %v", r, err)
	}
}

// TestMaxTMatchesMannWhitney: with one test whose statistic is the rank
// sum, the permutation p-value over all splits is the exact Mann-Whitney
// p-value, which the published table above pins down.
func TestMaxTMatchesMannWhitney(t *testing.T) {
	x := []float64{1.1, 2.3, 3.2, 4.8, 6.5}
	y := []float64{4.1, 5.6, 7.7, 8.2, 9.9}
	values := [][]float64{append(append([]float64{}, x...), y...)}
	isY := []bool{false, false, false, false, false, true, true, true, true, true}
	rankSum := func(_ int, a, b []float64) float64 {
		u := 0.0
		for _, vb := range b {
			for _, va := range a {
				if vb > va {
					u++
				}
			}
		}
		return u
	}
	res, err := MaxT(values, isY, rankSum, 0)
	if err != nil {
		t.Fatal(err)
	}
	mw, _ := MannWhitney(x, y)
	if !res.Exact || res.Splits != 252 || math.Abs(res.Upper[0]-mw.P) > 1e-12 {
		t.Fatalf("MaxT p %v over %d splits, Mann-Whitney exact p %v (U=%v)", res.Upper[0], res.Splits, mw.P, mw.U)
	}
	// The lower tail: P(U <= u) = 1 - P(U >= u+1).
	if want := 1 - exactUpper(5, 5, int(mw.U)+1); math.Abs(res.Lower[0]-want) > 1e-12 {
		t.Fatalf("lower p %v, want %v", res.Lower[0], want)
	}
}

// TestMaxTHoldsFamilyLevel: 8 independent null tests, 4 runs a side (70
// splits): over 400 seeded data sets, the share with any adjusted p-value
// at or below 0.1 stays under the binomial 0.1% bound of 0.1, while
// testing each at 0.1 unadjusted would reject in about 1-(0.9)^8 = 57%.
func TestMaxTHoldsFamilyLevel(t *testing.T) {
	const sets, tests, level = 400, 8, 0.1
	isY := []bool{false, false, false, false, true, true, true, true}
	seed := uint64(1)
	next := func() float64 { // xorshift, uniform in (0, 1)
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return (float64(seed>>11) + 0.5) / (1 << 53)
	}
	shift := func(_ int, a, b []float64) float64 { return HodgesLehmann(a, b) }
	anyAdj, anyRaw := 0, 0
	for range sets {
		values := make([][]float64, tests)
		for j := range values {
			values[j] = make([]float64, len(isY))
			for i := range values[j] {
				values[j][i] = next()
			}
		}
		res, err := MaxT(values, isY, shift, 0)
		if err != nil {
			t.Fatal(err)
		}
		adj, raw := false, false
		for j := range values {
			adj = adj || res.Upper[j] <= level
			raw = raw || 1-res.Lower[j]+1.0/float64(res.Splits) <= level+1e-12
		}
		if adj {
			anyAdj++
		}
		if raw {
			anyRaw++
		}
	}
	limit := BinomialUpper(sets, level, 0.001)
	t.Logf("any adjusted p <= %v in %d of %d null sets (limit %d); unadjusted in %d", level, anyAdj, sets, limit, anyRaw)
	if anyAdj > limit {
		t.Errorf("family-wise rejections %d of %d, limit %d", anyAdj, sets, limit)
	}
	if anyRaw < sets/3 {
		t.Errorf("unadjusted rejections only %d of %d: the check has no teeth", anyRaw, sets)
	}
}

// TestHodgesLehmann: the estimate is the median of the pairwise
// differences. x = {1, 3}, y = {4, 10}: differences 3, 1, 9, 7, median
// (3+7)/2 = 5; and it moves with a shift of y.
func TestHodgesLehmann(t *testing.T) {
	if got := HodgesLehmann([]float64{1, 3}, []float64{4, 10}); got != 5 {
		t.Fatalf("HL = %v, want 5", got)
	}
	x := []float64{2, 9, 4, 7, 5}
	y := []float64{3, 8, 6, 1, 100}
	a := HodgesLehmann(x, y)
	for i := range y {
		y[i] += 2.5
	}
	if b := HodgesLehmann(x, y); math.Abs(b-a-2.5) > 1e-12 {
		t.Fatalf("shifted by 2.5: %v -> %v", a, b)
	}
	if !math.IsNaN(HodgesLehmann(nil, y)) {
		t.Fatal("empty sample gave a number")
	}
}

func TestSpreads(t *testing.T) {
	// MAD of {1,2,3,4,100}: median 3, deviations 2,1,0,1,97, median 1.
	if got := MAD([]float64{1, 2, 3, 4, 100}); math.Abs(got-1.4826) > 1e-12 {
		t.Errorf("MAD = %v", got)
	}
	// MeanAD: deviations from 3 sum to 101, mean 20.2.
	if got := MeanAD([]float64{1, 2, 3, 4, 100}); math.Abs(got-20.2*math.Sqrt(math.Pi/2)) > 1e-9 {
		t.Errorf("MeanAD = %v", got)
	}
	if MAD([]float64{5}) != 0 || MeanAD(nil) != 0 {
		t.Error("spread of fewer than two values is not 0")
	}
}

func TestBinomial(t *testing.T) {
	for _, tc := range []struct{ n, k, want int }{{10, 5, 252}, {20, 10, 184756}, {6, 3, 20}, {5, 0, 1}, {5, 6, 0}, {1000, 500, math.MaxInt64 / 2}} {
		if got := Binomial(tc.n, tc.k); got != tc.want {
			t.Errorf("C(%d,%d) = %d, want %d", tc.n, tc.k, got, tc.want)
		}
	}
}

// TestQuantileSE: 1000 equal values pin the median exactly; a spread
// sample gives the width of the order-statistic interval.
func TestQuantileSE(t *testing.T) {
	flat := make([]int64, 1000)
	for i := range flat {
		flat[i] = 500
	}
	if se := QuantileSE(flat, 0.5); se != 0 {
		t.Errorf("flat sample: %v", se)
	}
	ramp := make([]int64, 101)
	for i := range ramp {
		ramp[i] = int64(1000 + i)
	}
	// ranks 50 -/+ 1.96*sqrt(101/4) = 50 -/+ 9.85: 40 and 60.
	want := (math.Log(1060) - math.Log(1040)) / (2 * 1.96)
	if se := QuantileSE(ramp, 0.5); math.Abs(se-want) > 1e-12 {
		t.Errorf("ramp: %v, want %v", se, want)
	}
}

// TestTrimmedShift: x = {0, 1}, y = {10, 11, 100}: the differences sorted
// are 9, 10, 10, 11, 99, 100; a quarter (1) trimmed from each end leaves
// 10, 10, 11, 99, mean 32.5; with trim 0.34 (2 each end) 10, 11, mean
// 10.5; untrimmed, the difference of the means, 239/6.
func TestTrimmedShift(t *testing.T) {
	x, y := []float64{0, 1}, []float64{10, 11, 100}
	if got := TrimmedShift(x, y, 0.25); got != 32.5 {
		t.Errorf("trim 0.25: %v", got)
	}
	if got := TrimmedShift(x, y, 0.34); got != 10.5 {
		t.Errorf("trim 0.34: %v", got)
	}
	if got := TrimmedShift(x, y, 0); math.Abs(got-239.0/6) > 1e-12 {
		t.Errorf("no trim: %v, want the mean difference", got)
	}
	if !math.IsNaN(TrimmedShift(nil, y, 0.25)) {
		t.Error("empty sample gave a number")
	}
}

// TestTrimmedShiftMatchesSort checks the selection against the trimmed
// mean of the sorted differences, on random samples with ties.
func TestTrimmedShiftMatchesSort(t *testing.T) {
	seed := uint64(7)
	next := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>58) / 4 // 64 levels: many ties
	}
	for n := 1; n <= 12; n++ {
		for m := 1; m <= 12; m++ {
			x, y := make([]float64, n), make([]float64, m)
			for i := range x {
				x[i] = next()
			}
			for i := range y {
				y[i] = next()
			}
			var d []float64
			for _, b := range y {
				for _, a := range x {
					d = append(d, b-a)
				}
			}
			slices.Sort(d)
			cut := int(0.25 * float64(len(d)))
			var sum float64
			for _, v := range d[cut : len(d)-cut] {
				sum += v
			}
			want := sum / float64(len(d)-2*cut)
			if got := TrimmedShift(x, y, 0.25); math.Abs(got-want) > 1e-9 {
				t.Fatalf("n=%d m=%d: %v, want %v", n, m, got, want)
			}
		}
	}
}
