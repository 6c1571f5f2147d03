package perfetto

import "slices"

// maxRadix is the most events sortEvents radix-sorts.
const maxRadix = 1 << 20

// sortEvents sorts events by time with an LSD radix sort on the time less
// the batch's earliest (8 bits a pass, as many passes as the batch's time
// range needs), then orders each run of equal times by cmpEvent. A batch
// of one frame takes three passes; it is several times faster than a
// comparison sort, which mattered: sorting was half the writer's time.
// Past maxRadix events (a whole large trace written as one batch, as
// convert does) it sorts in place instead: the radix sort's scratch would
// double the writer's memory.
func sortEvents(ev, scratch []event) []event {
	if len(ev) < 64 || len(ev) > maxRadix {
		slices.SortFunc(ev, cmpEvent)
		return scratch
	}
	lo, hi := ev[0].ts, ev[0].ts
	for i := range ev {
		lo = min(lo, ev[i].ts)
		hi = max(hi, ev[i].ts)
	}
	scratch = grow(scratch, len(ev))
	src, dst := ev, scratch
	var count [256]int
	for shift := uint(0); shift < 64 && uint64(hi-lo)>>shift != 0; shift += 8 {
		count = [256]int{}
		for i := range src {
			count[byte(uint64(src[i].ts-lo)>>shift)]++
		}
		pos := 0
		for d := range count {
			pos, count[d] = pos+count[d], pos
		}
		for i := range src {
			d := byte(uint64(src[i].ts-lo) >> shift)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ev[0] {
		copy(ev, src)
	}
	for i := 0; i < len(ev); {
		j := i + 1
		for j < len(ev) && ev[j].ts == ev[i].ts {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ev[i:j], cmpEvent)
		}
		i = j
	}
	return scratch
}
