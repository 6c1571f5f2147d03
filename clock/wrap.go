package clock

// Tick extension. A counter with v < 64 valid bits wraps every 2^v ticks
// (4.3 s for 32 bits at 1 ns, about 1 h for 36 bits at 52.08 ns). The
// model counts ticks from its first sample, x = tick - base, and extends a
// raw value to the x nearest a predicted one: for a sample, the tick the
// current fit predicts at the sample's host time (the previous sample
// carried forward by the elapsed host time at the fitted rate); for a
// timestamp, the tick predicted at the caller's host-time hint. The
// extension is right whenever the prediction is within half a wrap,
// 2^(v-1) ticks, of the truth: the hint must be within about
// 2^(v-1)*PeriodNs ns of the tick's true host time (2.1 s for 32 bits at
// 1 ns). Beyond that the result is off by whole wraps; nothing can tell.

// extendTick returns the x = tick - base whose low bits (mask) equal raw,
// nearest to pred. With mask = all ones it is raw - base.
func extendTick(raw uint64, pred int64, base, mask uint64) int64 {
	if mask == ^uint64(0) {
		return int64(raw - base)
	}
	d := (raw - (base + uint64(pred))) & mask
	x := uint64(pred) + d
	if d > mask>>1 {
		x -= mask + 1
	}
	return int64(x)
}
