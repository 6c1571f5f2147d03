package stats

// Select reorders d so that d[k] is the value a sort would put there, with
// no larger value before it and no smaller one after, and returns it:
// Hoare's selection with median-of-three pivots, linear on average, no
// allocation. d must hold no NaN and 0 <= k < len(d).
func Select(d []float64, k int) float64 {
	lo, hi := 0, len(d)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if d[mid] < d[lo] {
			d[mid], d[lo] = d[lo], d[mid]
		}
		if d[hi] < d[lo] {
			d[hi], d[lo] = d[lo], d[hi]
		}
		if d[hi] < d[mid] {
			d[hi], d[mid] = d[mid], d[hi]
		}
		p := d[mid]
		i, j := lo, hi
		for i <= j {
			for d[i] < p {
				i++
			}
			for d[j] > p {
				j--
			}
			if i <= j {
				d[i], d[j] = d[j], d[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return d[k]
		}
	}
	return d[k]
}
