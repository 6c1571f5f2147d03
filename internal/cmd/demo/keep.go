package demo

// maxKept bounds the per-frame samples a run keeps for its summary: past
// it the older half goes, so that a run until interrupted (-frames 0)
// summarises its last frames in bounded memory.
const maxKept = 1 << 16

// keep appends v to s, letting the older half of s go when it is full.
func keep(s []int64, v int64) []int64 {
	if len(s) >= maxKept {
		n := copy(s, s[len(s)/2:])
		s = s[:n]
	}
	return append(s, v)
}
