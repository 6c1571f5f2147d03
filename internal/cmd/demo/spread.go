package demo

// event is one step of spread.
type event uint8

const (
	draw      event = iota // one load draw
	zoneBegin              // begin profiler zone k
	zoneEnd                // end the zone begun last
	rawBegin               // begin raw timestamp pair k
	rawEnd                 // end raw timestamp pair k
)

// spread lays z zones and r raw timestamp pairs evenly over l draws, and
// calls emit for each step in recording order. Zone k covers draws
// [k*l/z, (k+1)*l/z): consecutive and disjoint, so at most one zone is
// open at a time and they never cross; with more zones than draws some
// are empty. Raw pairs are laid out the same way, independently.
func spread(l, z, r int, emit func(ev event, k int)) {
	zEnd, rEnd := -1, -1 // where the open zone and pair end; -1: none open
	kz, kr, rOpen := 0, 0, 0
	for p := 0; p <= l; p++ {
		if zEnd == p {
			emit(zoneEnd, kz-1)
			zEnd = -1
		}
		if rEnd == p {
			emit(rawEnd, rOpen)
			rEnd = -1
		}
		for kz < z && kz*l/z == p {
			emit(zoneBegin, kz)
			if e := (kz + 1) * l / z; e == p {
				emit(zoneEnd, kz)
			} else {
				zEnd = e
			}
			kz++
		}
		for kr < r && kr*l/r == p {
			emit(rawBegin, kr)
			if e := (kr + 1) * l / r; e == p {
				emit(rawEnd, kr)
			} else {
				rOpen, rEnd = kr, e
			}
			kr++
		}
		if p < l {
			emit(draw, p)
		}
	}
}
