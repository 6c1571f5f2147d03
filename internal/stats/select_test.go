package stats

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Select puts at k what a sort puts there, with nothing larger before it
// and nothing smaller after, on inputs with many ties and on sorted and
// reversed ones, where a poor pivot goes quadratic.
func TestSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 64; n++ {
		for trial := 0; trial < 20; trial++ {
			d := make([]float64, n)
			for i := range d {
				switch trial % 4 {
				case 0:
					d[i] = r.Float64()
				case 1:
					d[i] = float64(r.IntN(3)) // ties
				case 2:
					d[i] = float64(i) // sorted
				default:
					d[i] = float64(n - i) // reversed
				}
			}
			want := slices.Clone(d)
			slices.Sort(want)
			k := r.IntN(n)
			got := Select(d, k)
			if got != want[k] || d[k] != got {
				t.Fatalf("n %d k %d: got %v, want %v", n, k, got, want[k])
			}
			for i := range d {
				if (i < k && d[i] > got) || (i > k && d[i] < got) {
					t.Fatalf("n %d k %d: d[%d] = %v on the wrong side of %v", n, k, i, d[i], got)
				}
			}
		}
	}
}
