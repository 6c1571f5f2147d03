package chrome

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// appendMicros appends ns as microseconds with exactly three decimals,
// using integer arithmetic only: 1234567 -> 1234.567, -5 -> -0.005.
func appendMicros(dst []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		dst = append(dst, '-')
		u = -u
	}
	// Digits from the right into a small array, then one copy.
	var b [24]byte
	i := len(b)
	f := u % 1000
	u /= 1000
	b[i-1], b[i-2], b[i-3], b[i-4] = byte('0'+f%10), byte('0'+f/10%10), byte('0'+f/100), '.'
	i -= 4
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

var errTime = errors.New("bad time value")

// parseMicros converts a JSON number of microseconds to nanoseconds. Plain
// decimals are converted exactly (digits past the third decimal round half
// away from zero); exponent forms go through float64.
func parseMicros(s string) (int64, error) {
	if s == "" {
		return 0, errTime
	}
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, errTime
		}
		ns := math.Round(f * 1000)
		if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
			return 0, errTime
		}
		return int64(ns), nil
	}
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" {
		return 0, errTime
	}
	var v uint64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return 0, errTime
		}
		if v > (math.MaxInt64/1000-9)/10 {
			return 0, errTime
		}
		v = v*10 + uint64(c-'0')
	}
	v *= 1000
	var f uint64
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, errTime
		}
		switch {
		case i < 3:
			f = f*10 + uint64(c-'0')
		case i == 3 && c >= '5':
			f++
		}
	}
	for i := len(frac); i < 3; i++ {
		f *= 10
	}
	v += f
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}
