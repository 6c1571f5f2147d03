package chrome

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzParseMicros checks parseMicros against exact rational arithmetic:
// a plain decimal it accepts is that many microseconds rounded to the
// nearest nanosecond (halves away from zero), and what it formats back
// parses to the same value.
func FuzzParseMicros(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-2.0005", "123456.789", "0.0004999", "9223372036854.775", "1e3", "-0", "00.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseMicros(s)
		if err != nil {
			return
		}
		if back, err := parseMicros(string(appendMicros(nil, ns))); err != nil || back != ns {
			t.Fatalf("%q -> %d -> %s -> %d, %v", s, ns, appendMicros(nil, ns), back, err)
		}
		if strings.ContainsAny(s, "eE") {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("parseMicros accepted %q, which is not a decimal", s)
		}
		r.Mul(r, big.NewRat(1000, 1))
		// Round half away from zero.
		neg := r.Sign() < 0
		r.Abs(r)
		r.Add(r, big.NewRat(1, 2))
		q := new(big.Int).Quo(r.Num(), r.Denom())
		if neg {
			q.Neg(q)
		}
		if !q.IsInt64() || q.Int64() != ns {
			t.Fatalf("parseMicros(%q) = %d, want %v", s, ns, q)
		}
	})
}
