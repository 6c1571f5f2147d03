package history

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Points packed come back as they were, in order of series; a packed row
// cut short at any byte, or with bytes after it, is errPacked; any byte
// changed never panics.
func TestPackedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var in []packedPoint
	id := int64(0)
	for range 200 {
		id += 1 + rng.Int64N(1000)
		p := packedPoint{series: id, value: rng.NormFloat64() * 1e6, n: rng.Int64N(1 << 40)}
		if rng.IntN(3) == 0 {
			p.isWhole, p.whole = true, rng.Uint64()
		}
		in = append(in, p)
	}
	in = append(in, packedPoint{series: math.MaxInt64, value: math.Inf(1), n: math.MaxInt64, isWhole: true, whole: math.MaxUint64})
	shuffled := append([]packedPoint(nil), in...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b, err := pack(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	var out []packedPoint
	if err := unpack(b, func(p packedPoint) { out = append(out, p) }); err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("unpacked %d points (%v), not the %d packed", len(out), err, len(in))
	}
	for cut := range len(b) {
		if err := unpack(b[:cut], func(packedPoint) {}); !errors.Is(err, errPacked) {
			t.Fatalf("a row cut to %d of %d bytes: %v", cut, len(b), err)
		}
	}
	if err := unpack(append(b, 0), func(packedPoint) {}); !errors.Is(err, errPacked) {
		t.Fatalf("a row with a byte after it: %v", err)
	}
	for range 10000 {
		c := append([]byte(nil), b...)
		c[rng.IntN(len(c))] = byte(rng.Uint32())
		unpack(c, func(packedPoint) {})
	}
	if _, err := pack([]packedPoint{{series: 5}, {series: 5}}); err == nil {
		t.Error("two points of one series packed")
	}
}
