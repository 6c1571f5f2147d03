package clock

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Convert and ConvertBits run on every timestamp read back: they must not
// allocate, for the newest segment or for old ones (a binary search over
// the chain), with 64 or fewer valid bits.
func TestClockConvertAllocatesNothing(t *testing.T) {
	for _, bits := range []uint{64, 32} {
		rng := rand.New(rand.NewPCG(5, uint64(bits)))
		clk := lineClock{period: 1, rate: 1 - 20e-6, tick0: 1<<33 + 12345}
		now := 0.0
		m, err := New(Options{PeriodNs: 1, ValidBits: bits, Now: func() int64 { return int64(now) }})
		if err != nil {
			t.Fatal(err)
		}
		mask := uint64(math.MaxUint64)
		if bits < 64 {
			mask = 1<<bits - 1
		}
		for i := 1; i <= 40; i++ {
			h := float64(i) * 1e9
			now = h + 50e3
			if err := m.Add(clk.sample(rng, h, 3000, mask)); err != nil {
				t.Fatal(err)
			}
		}
		s := m.snap.Load()
		type probe struct {
			name string
			h    float64 // true host time of the tick
			bits uint    // for ConvertBits; 0: Convert
		}
		probes := []probe{
			{"old segment", 3.5e9, 0},
			{"newest segment", 40.2e9, 0},
			{"ConvertBits 24 old segment", 3.5e9, 24},
			{"ConvertBits 24 newest segment", 40.2e9, 24},
		}
		if bits == 64 {
			probes = append(probes, probe{"ConvertBits 32 old segment", 3.5e9, 32}, probe{"ConvertBits 32 newest segment", 40.2e9, 32})
		}
		for _, p := range probes {
			tk := clk.tick(p.h)
			raw := uint64(tk) & mask
			if p.bits > 0 {
				raw &= 1<<p.bits - 1
			}
			hint := int64(p.h)
			conv := func() (int64, int64, bool) {
				if p.bits > 0 {
					return m.ConvertBits(raw, p.bits, hint)
				}
				return m.Convert(raw, hint)
			}
			// Not vacuous: the conversion works, and old probes do hit an
			// older segment than the newest.
			got, e, ok := conv()
			if !ok || math.Abs(float64(got)-clk.hostOf(tk)) > float64(e) {
				t.Fatalf("%d bits, %s: got %d ± %d ok %v, want %.0f", bits, p.name, got, e, ok, clk.hostOf(tk))
			}
			if old := p.h < 10e9; old != (tk-clk.tick(1e9) < s.last.x0) || len(s.segs) < 3 {
				t.Fatalf("%d bits, %s: tick x %d, newest segment from %d, %d segments", bits, p.name, tk-clk.tick(1e9), s.last.x0, len(s.segs))
			}
			if n := testing.AllocsPerRun(1000, func() { got, e, ok = conv() }); n != 0 {
				t.Errorf("%d bits, %s: %v allocations per conversion", bits, p.name, n)
			}
			if p.bits == 0 {
				if n := testing.AllocsPerRun(1000, func() { got, _, e, ok = m.ConvertSpan(raw, raw, hint) }); n != 0 || !ok {
					t.Errorf("%d bits, %s: %v allocations per ConvertSpan (ok %v)", bits, p.name, n, ok)
				}
			}
		}
	}
}
