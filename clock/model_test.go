package clock

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewClockModelConfig(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		cfg  Options
		ok   bool
	}{
		{"nvidia", Options{PeriodNs: 1, ValidBits: 64}, true},
		{"intel", Options{PeriodNs: 52.08, ValidBits: 36}, true},
		{"one bit", Options{PeriodNs: 1, ValidBits: 1}, true},
		{"full", Options{PeriodNs: 1, ValidBits: 32, Window: 2, WindowDur: time.Second, WanderPPMPerMin: 2, MaxDriftPPM: 50}, true},
		{"period 0", Options{PeriodNs: 0, ValidBits: 64}, false},
		{"period negative", Options{PeriodNs: -1, ValidBits: 64}, false},
		{"period NaN", Options{PeriodNs: nan, ValidBits: 64}, false},
		{"period Inf", Options{PeriodNs: math.Inf(1), ValidBits: 64}, false},
		{"bits 0", Options{PeriodNs: 1, ValidBits: 0}, false},
		{"bits 65", Options{PeriodNs: 1, ValidBits: 65}, false},
		{"window 1", Options{PeriodNs: 1, ValidBits: 64, Window: 1}, false},
		{"window negative", Options{PeriodNs: 1, ValidBits: 64, Window: -3}, false},
		{"window huge", Options{PeriodNs: 1, ValidBits: 64, Window: 1 << 20}, false},
		{"duration negative", Options{PeriodNs: 1, ValidBits: 64, WindowDur: -time.Second}, false},
		{"wander NaN", Options{PeriodNs: 1, ValidBits: 64, WanderPPMPerMin: nan}, false},
		{"wander negative", Options{PeriodNs: 1, ValidBits: 64, WanderPPMPerMin: -1}, false},
		{"drift NaN", Options{PeriodNs: 1, ValidBits: 64, MaxDriftPPM: nan}, false},
		{"drift 100%", Options{PeriodNs: 1, ValidBits: 64, MaxDriftPPM: 1e6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok = %v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidOptions) || m != nil {
					t.Fatalf("got %v, %v; want nil, ErrInvalidOptions", m, err)
				}
				return
			}
			c := m.Options()
			if c.Window < 2 || c.WindowDur <= 0 || c.WanderPPMPerMin <= 0 || c.MaxDriftPPM <= 0 || c.Now == nil {
				t.Fatalf("defaults not filled: %+v", c)
			}
		})
	}
}

func TestClockModelAddErrors(t *testing.T) {
	m, err := New(Options{PeriodNs: 1, ValidBits: 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m.Convert(1000, 0); ok {
		t.Fatal("Convert ok before any sample")
	}
	if q := m.Quality(); q != (Quality{}) {
		t.Fatalf("Quality before any sample = %+v", q)
	}
	if err := m.Add(Sample{Device: 1e9, Host: 5e9, Deviation: 3000}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    Sample
	}{
		{"deviation 0", Sample{Device: 2e9, Host: 6e9, Deviation: 0}},
		{"deviation negative", Sample{Device: 2e9, Host: 6e9, Deviation: -3}},
		{"duplicate", Sample{Device: 1e9, Host: 5e9, Deviation: 3000}},
		{"same host time", Sample{Device: 1e9 + 5, Host: 5e9, Deviation: 3000}},
		{"host backwards", Sample{Device: 2e9, Host: 4e9, Deviation: 3000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := m.Quality()
			h0, e0, _ := m.Convert(1.5e9, 0)
			err := m.Add(tt.s)
			if !errors.Is(err, ErrInvalidSample) {
				t.Fatalf("err = %v, want ErrInvalidSample", err)
			}
			h1, e1, ok := m.Convert(1.5e9, 0)
			if after := m.Quality(); after != before || !ok || h1 != h0 || e1 != e0 {
				t.Fatalf("a refused sample changed the model: %+v -> %+v", before, after)
			}
		})
	}
}

func TestExtendTick(t *testing.T) {
	const m32 = 1<<32 - 1
	tests := []struct {
		name       string
		raw        uint64
		pred       int64
		base, mask uint64
		want       int64
	}{
		{"64 bits is raw - base", 500, 1 << 40, 100, math.MaxUint64, 400},
		{"64 bits before base", 100, 0, 500, math.MaxUint64, -400},
		{"same wrap", 1000, 900, 0, m32, 1000},
		{"next wrap", 10, 1<<32 - 10, 0, m32, 1<<32 + 10},
		{"previous wrap", 1<<32 - 10, 1<<32 + 10, 0, m32, 1<<32 - 10},
		{"third wrap with base", 7, 3<<32 + 5, 1 << 31, m32, 3<<32 - 1<<31 + 7},
		{"before base", m32, 0, 0, m32, -1},
		{"half a wrap back is the limit", 0, 1 << 31, 0, m32, 0},
		{"just past half a wrap goes forward", 0, 1<<31 + 1, 0, m32, 1 << 32},
		{"two bits", 3, 6, 0, 3, 7},
		{"63 bits", 5, -10, 0, 1<<63 - 1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extendTick(tt.raw, tt.pred, tt.base, tt.mask); got != tt.want {
				t.Fatalf("extendTick(%d, %d, %d, %#x) = %d, want %d", tt.raw, tt.pred, tt.base, tt.mask, got, tt.want)
			}
		})
	}
}

// lineClock is a device clock at a constant rate, for unit tests.
type lineClock struct {
	period, rate float64 // ns per tick; device ns per host ns
	tick0        int64
}

func (c lineClock) tick(h float64) int64   { return c.tick0 + int64(math.Floor(h*c.rate/c.period)) }
func (c lineClock) hostOf(t int64) float64 { return float64(t-c.tick0) * c.period / c.rate }

// sample returns an honest sample at host time h: within dev of the truth.
func (c lineClock) sample(rng *rand.Rand, h float64, dev int64, mask uint64) Sample {
	e := (2*rng.Float64() - 1) * float64(dev)
	return Sample{Device: uint64(c.tick(h)) & mask, Host: int64(h + e), Deviation: dev}
}

// TestClockModelFreeze checks the guarantee behind monotonicity across
// refits: every tick written before a refit is published lies at or before
// the freeze point, and the refit leaves conversions up to it unchanged.
// It also checks each snapshot is monotonic over its whole chain.
func TestClockModelFreeze(t *testing.T) {
	for _, bits := range []uint{64, 32} {
		rng := rand.New(rand.NewPCG(7, uint64(bits)))
		clk := newSimClock(rng, 1, 9.8, 0.1)
		now := 0.0
		m, err := New(Options{PeriodNs: 1, ValidBits: bits, Now: func() int64 { return int64(now) }})
		if err != nil {
			t.Fatal(err)
		}
		mask := uint64(math.MaxUint64)
		if bits < 64 {
			mask = 1<<bits - 1
		}
		var xs []int64
		var hs []int64
		first := clk.tick(1e9) // the true tick of x = 0
		for i := 0; i < 300; i++ {
			ts := 1e9 + float64(i)*1e9
			dev := int64(2000 + rng.IntN(10000))
			e := (2*rng.Float64() - 1) * float64(dev)
			if i%37 == 5 {
				e = 40e3 // an outlier now and then
			}
			old := m.snap.Load()
			xs, hs = xs[:0], hs[:0]
			if old != nil {
				// A grid from well before the chain to a second ahead.
				lo := old.segs[0].x0 - 1e9
				hi := m.fit.tickAt(int64(ts)) + 1e9
				for x := lo; x < hi; x += (hi-lo)/4000 + 1 {
					h, _, ok := old.at(x)
					if !ok {
						t.Fatalf("tick %d not converted", x)
					}
					if len(hs) > 0 && h < hs[len(hs)-1] {
						t.Fatalf("snapshot not monotonic at tick %d: %d < %d", x, h, hs[len(hs)-1])
					}
					xs, hs = append(xs, x), append(hs, h)
				}
			}
			now = ts + 20e3 + 2e6*rng.Float64()
			resets := m.Quality().Resets
			if err := m.Add(Sample{Device: uint64(clk.tick(ts)) & mask, Host: int64(ts + e), Deviation: dev}); err != nil {
				t.Fatal(err)
			}
			if m.Quality().Resets != resets {
				t.Fatalf("sample %d: unexpected reset", i)
			}
			if old == nil {
				continue
			}
			m.mu.Lock()
			freeze := m.freeze
			m.mu.Unlock()
			if written := clk.tick(now) - first; written > freeze && old != m.snap.Load() {
				t.Fatalf("sample %d: tick %d written before publication is past the freeze point %d", i, written, freeze)
			}
			s := m.snap.Load()
			for j, x := range xs {
				if x > freeze {
					break
				}
				if h, _, _ := s.at(x); h != hs[j] {
					t.Fatalf("sample %d: refit moved tick %d (freeze %d) from %d to %d", i, x, freeze, hs[j], h)
				}
			}
		}
	}
}

// honestRun feeds n honest 1 Hz samples of clk and checks conversions of
// ticks written in each second against their bound.
func honestRun(t *testing.T, m *Model, clk lineClock, rng *rand.Rand, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		h := float64(i) * 1e9
		if err := m.Add(clk.sample(rng, h, 3000, math.MaxUint64)); err != nil {
			t.Fatal(err)
		}
		checkConv(t, m, clk, h+0.5e9)
	}
}

func checkConv(t *testing.T, m *Model, clk lineClock, h float64) {
	t.Helper()
	tk := clk.tick(h)
	got, e, ok := m.Convert(uint64(tk), int64(h))
	if !ok {
		t.Fatalf("tick at %.1f s not converted", h/1e9)
	}
	if d := math.Abs(float64(got) - clk.hostOf(tk)); d > float64(e) {
		t.Fatalf("tick at %.1f s: error %.0f ns beyond the bound %d ns", h/1e9, d, e)
	}
}

func TestClockModelOutlierBursts(t *testing.T) {
	tests := []struct {
		name       string
		burst      int
		offset     func(rng *rand.Rand) float64
		outliers   uint64
		wantResets uint64
	}{
		{"7 agreeing outliers", 7, func(*rand.Rand) float64 { return 500e3 }, 7, 0},
		{"40 scattered outliers", 40, func(rng *rand.Rand) float64 { return (2*rng.Float64() - 1) * 5e6 }, 40, 0},
		{"one outlier", 1, func(*rand.Rand) float64 { return -60e3 }, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			clk := lineClock{period: 1, rate: 1 + 10e-6, tick0: 1 << 40}
			now := 0.0
			m, _ := New(Options{PeriodNs: 1, ValidBits: 64, Now: func() int64 { return int64(now) }})
			honestRun(t, m, clk, rng, 1, 60)
			for i := 61; i < 61+tt.burst; i++ {
				h := float64(i) * 1e9
				now = h
				s := clk.sample(rng, h, 2500, math.MaxUint64)
				s.Host += int64(tt.offset(rng))
				if err := m.Add(s); err != nil {
					t.Fatal(err)
				}
				checkConv(t, m, clk, h+0.5e9)
			}
			honestRun(t, m, clk, rng, 61+tt.burst, 30)
			q := m.Quality()
			if q.Outliers != tt.outliers || q.Resets != tt.wantResets {
				t.Fatalf("outliers %d, resets %d; want %d, %d", q.Outliers, q.Resets, tt.outliers, tt.wantResets)
			}
			if math.Abs(q.DriftPPM-10) > 0.5 {
				t.Fatalf("drift %.2f ppm, want 10", q.DriftPPM)
			}
		})
	}
}

// TestClockModelJump checks that a device clock that jumps (a counter
// reset) is followed after clockResetAfter samples, and counted.
func TestClockModelJump(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	clk := lineClock{period: 52.08, rate: 1 - 20e-6, tick0: 1 << 30}
	m, _ := New(Options{PeriodNs: 52.08, ValidBits: 64})
	honestRun(t, m, clk, rng, 1, 30)
	clk.tick0 -= 1 << 28 // the counter restarts from a lower value
	for i := 31; i < 31+clockResetAfter; i++ {
		if err := m.Add(clk.sample(rng, float64(i)*1e9, 3000, math.MaxUint64)); err != nil {
			t.Fatal(err)
		}
	}
	if q := m.Quality(); q.Resets != 1 {
		t.Fatalf("resets = %d, want 1", q.Resets)
	}
	honestRun(t, m, clk, rng, 31+clockResetAfter, 20)
}

// TestClockModelReplay feeds samples whose host times are far from the
// host clock Now reads (a replay): refits still take effect within the
// publication lag.
func TestClockModelReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	clk := lineClock{period: 1, rate: 1 + 30e-6, tick0: 12345}
	m, _ := New(Options{PeriodNs: 1, ValidBits: 64, Now: func() int64 { return math.MaxInt64 }})
	for i := 1; i <= 60; i++ {
		h := float64(i) * 1e9
		if err := m.Add(clk.sample(rng, h, 3000, math.MaxUint64)); err != nil {
			t.Fatal(err)
		}
		checkConv(t, m, clk, h+1.5e9)
	}
	if q := m.Quality(); math.Abs(q.DriftPPM-30) > 0.5 || q.Resets != 0 {
		t.Fatalf("quality %+v, want drift 30 ppm and no reset", q)
	}
}

func TestClockModelQuality(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	clk := lineClock{period: 1, rate: 1 + 9.8e-6, tick0: 1 << 50}
	m, _ := New(Options{PeriodNs: 1, ValidBits: 64, Window: 16, WindowDur: time.Hour})
	honestRun(t, m, clk, rng, 1, 40)
	q := m.Quality()
	if q.Samples != 16 || q.Added != 40 || q.Outliers != 0 || q.LastHost < 39e9 {
		t.Fatalf("quality %+v", q)
	}
	if math.Abs(q.DriftPPM-9.8) > 0.3 {
		t.Fatalf("drift %.2f ppm, want 9.8", q.DriftPPM)
	}
	if q.ErrNs < 3000 || q.ErrNs > 20000 {
		t.Fatalf("error bound %.0f ns, want a few deviations of 3 us", q.ErrNs)
	}
	c := m.Calibration(7)
	if c.Track != 7 || c.Time != q.LastHost || c.ErrNs != q.ErrNs || c.DriftPPM != q.DriftPPM || c.Samples != q.Samples {
		t.Fatalf("Calibration %+v does not match quality %+v", c, q)
	}
}

// TestClockModelConcurrent converts on two goroutines while a third adds
// samples (run it with -race). Time is simulated and shared: each
// converter takes a tick written up to 50 ms before "now" and converts
// it. Every conversion must be within its bound, and all of them together,
// from whatever snapshots, must be monotonic in the tick.
func TestClockModelConcurrent(t *testing.T) {
	clk := lineClock{period: 1, rate: 1 - 19.6e-6, tick0: 1 << 45}
	const mask = 1<<32 - 1
	var now atomic.Int64
	m, _ := New(Options{PeriodNs: 1, ValidBits: 32, Now: now.Load})
	type conv struct{ tick, host int64 }
	var wg sync.WaitGroup
	var done atomic.Bool
	var tries, exited atomic.Int64 // conversions tried so far; converters that returned
	results := make([][]conv, 2)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer exited.Add(1)
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for !done.Load() && len(results[g]) < 40000 {
				t0 := now.Load()
				tk := clk.tick(float64(t0) - 50e6*rng.Float64())
				h, e, ok := m.Convert(uint64(tk)&mask, t0)
				tries.Add(1)
				if !ok {
					runtime.Gosched()
					continue
				}
				if d := math.Abs(float64(h) - clk.hostOf(tk)); d > float64(e) {
					t.Errorf("error %.0f ns beyond the bound %d", d, e)
					return
				}
				results[g] = append(results[g], conv{tk, h})
				runtime.Gosched() // let time move between conversions
			}
		}()
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 1; i <= 200; i++ {
		for k := 0; k < 10; k++ {
			now.Add(100e6)
			// Each step of time sees at least two conversions tried
			// (before the first sample none can succeed), however the
			// scheduler treats this goroutine.
			for target := tries.Load() + 2; tries.Load() < target && exited.Load() == 0; {
				runtime.Gosched()
			}
		}
		h := float64(now.Load()) - 1e6*rng.Float64() // taken a little earlier
		if err := m.Add(clk.sample(rng, h, 3000, mask)); err != nil {
			t.Error(err)
		}
	}
	done.Store(true)
	wg.Wait()
	all := append(results[0], results[1]...)
	slices.SortFunc(all, func(a, b conv) int { return cmp.Compare(a.tick, b.tick) })
	if len(all) < 1000 || clk.hostOf(all[len(all)-1].tick) < 100e9 {
		t.Fatalf("%d conversions up to %.0f s: too few to test", len(all), clk.hostOf(all[len(all)-1].tick)/1e9)
	}
	t.Logf("%d conversions from %.1f s to %.1f s", len(all), clk.hostOf(all[0].tick)/1e9, clk.hostOf(all[len(all)-1].tick)/1e9)
	for i := 1; i < len(all); i++ {
		if all[i].host < all[i-1].host {
			t.Fatalf("not monotonic: tick %d -> %d, later tick %d -> %d", all[i-1].tick, all[i-1].host, all[i].tick, all[i].host)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{2, 1}, 1.5},
		{[]float64{5, 1, 4}, 4},
		{[]float64{1, 1, 1, 1}, 1},
		{[]float64{-2, 7, 7, 3, -9, 0}, 1.5},
	}
	for _, tt := range tests {
		if got := median(slices.Clone(tt.in)); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 1; n < 200; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(20)) // many duplicates
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := s[n/2]
		if n%2 == 0 {
			want = (s[n/2-1] + s[n/2]) / 2
		}
		if got := median(v); got != want {
			t.Fatalf("median of %d values = %v, want %v", n, got, want)
		}
	}
}

// TestClockModelHint checks the stated ambiguity limit: with 32 valid bits
// at 1 ns a wrap is 4.295 s, and a hint within half of it of the truth
// finds the right wrap; beyond, the result is whole wraps off.
func TestClockModelHint(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	clk := lineClock{period: 1, rate: 1 - 19.6e-6, tick0: 7 << 32}
	const mask = 1<<32 - 1
	m, _ := New(Options{PeriodNs: 1, ValidBits: 32})
	for i := 1; i <= 20; i++ {
		if err := m.Add(clk.sample(rng, float64(i)*1e9, 3000, mask)); err != nil {
			t.Fatal(err)
		}
	}
	const wrap = 1 << 32 // host ns per wrap, near enough at 20 ppm
	tests := []struct {
		name  string
		at    float64 // true host time of the tick
		hint  float64
		wraps float64 // expected error in wraps
	}{
		{"hint exact", 20.5e9, 20.5e9, 0},
		{"hint at submit, 2 s early", 20.5e9, 18.5e9, 0},
		{"hint at readback, 2 s late", 14.5e9, 16.5e9, 0},
		{"a tick 10 s back, hinted", 10e9, 10.2e9, 0},
		{"hint 2.3 s early: one wrap low", 20.5e9, 18.2e9, -1},
		{"hint 2.3 s late: one wrap high", 14.5e9, 16.8e9, 1},
		{"hint 6.5 s late: two wraps high", 10e9, 16.5e9, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := clk.tick(tt.at)
			h, e, ok := m.Convert(uint64(tk)&mask, int64(tt.hint))
			if !ok {
				t.Fatal("not converted")
			}
			d := float64(h) - clk.hostOf(tk)
			if w := math.Round(d / wrap); w != tt.wraps {
				t.Fatalf("off by %.0f ns = %v wraps, want %v", d, w, tt.wraps)
			}
			if tt.wraps == 0 && math.Abs(d) > float64(e) {
				t.Fatalf("error %.0f ns beyond the bound %d", d, e)
			}
		})
	}
}

// TestClockModelSlew checks that a refit that corrects the mapping by
// several us does so without a step: adjacent ticks stay within a ns or
// two, and the correction is spread at no more than clockSlewMax.
func TestClockModelSlew(t *testing.T) {
	clk := lineClock{period: 1, rate: 1 + 10e-6, tick0: 1 << 40}
	now := int64(0)
	m, _ := New(Options{PeriodNs: 1, ValidBits: 64, Now: func() int64 { return now }})
	// Samples alternately 2.5 us early and late make every refit move.
	slews := 0
	for i := int64(1); i <= 40; i++ {
		h := i * 1e9
		now = h + 1e5
		off := int64(2500)
		if i%2 == 0 {
			off = -2500
		}
		if i > 30 {
			off = 9000 // then a run of late samples, within their deviation
		}
		old := m.snap.Load()
		if err := m.Add(Sample{Device: uint64(clk.tick(float64(h))), Host: h + off, Deviation: 10000}); err != nil {
			t.Fatal(err)
		}
		if old == nil {
			continue
		}
		s := m.snap.Load()
		if len(s.segs) == len(old.segs)+2 {
			slews++
		}
		xf := m.freeze
		prev, _, _ := s.at(xf - 1)
		for x := xf; x < xf+20e6; x += 1 + (x-xf)/16 {
			h, _, ok := s.at(x)
			if !ok {
				t.Fatal("not converted")
			}
			if h < prev || h-prev > 2+int64(float64(1+(x-xf)/16)*(1+clockSlewMax)) {
				t.Fatalf("refit %d: step at tick %d past the freeze point: %d -> %d", i, x-xf, prev, h)
			}
			prev = h
		}
	}
	if slews < 20 {
		t.Fatalf("%d of 39 refits slewed, want most", slews)
	}
}
