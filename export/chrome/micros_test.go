package chrome

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestMicros(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0.000"}, {1, "0.001"}, {999, "0.999"}, {1000, "1.000"}, {1234567, "1234.567"},
		{-5, "-0.005"}, {-1234567, "-1234.567"},
		{math.MaxInt64, "9223372036854775.807"}, {math.MinInt64, "-9223372036854775.808"},
	}
	for _, tc := range tests {
		got := string(appendMicros(nil, tc.ns))
		if got != tc.want {
			t.Errorf("appendMicros(%d) = %s, want %s", tc.ns, got, tc.want)
		}
		if tc.ns == math.MinInt64 || tc.ns == math.MaxInt64 {
			continue
		}
		back, err := parseMicros(got)
		if err != nil || back != tc.ns {
			t.Errorf("parseMicros(%s) = %d, %v; want %d", got, back, err, tc.ns)
		}
	}
}

func TestParseMicros(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"12", 12000, true}, {"12.5", 12500, true}, {"0.0004", 0, true}, {"0.0005", 1, true},
		{"1.23456789", 1235, true}, {"1e3", 1000000, true}, {"-2.5", -2500, true},
		{"", 0, false}, {"abc", 0, false}, {"1.2.3", 0, false}, {"-", 0, false},
		{"99999999999999999999", 0, false}, {"1e400", 0, false}, {".5", 0, false},
	}
	for _, tc := range tests {
		got, err := parseMicros(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseMicros(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

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
