package record

import "cmp"

// cmpGPUSpan orders GPU spans for placement on their queue, where depths
// are not known yet: a zone's Depth counts only the zones of its own
// command buffer. So it orders by time alone, start first and then end,
// later first, so that a span comes after every span that can enclose it;
// Depth breaks only exact ties. The depths placement then gives agree
// with Encloses, and sort by CompareSpans the same way.
func cmpGPUSpan(a, b GPUSpan) int { return cmpGPUSpanAt(&a, &b) }

// cmpGPUSpanAt is cmpGPUSpan through pointers, for loops over a batch.
func cmpGPUSpanAt(a, b *GPUSpan) int {
	if a.Start != b.Start {
		return cmp.Compare(a.Start, b.Start)
	}
	if a.End != b.End {
		return cmp.Compare(b.End, a.End)
	}
	return cmp.Compare(a.Depth, b.Depth)
}

// gpuSorted reports whether spans are in cmpGPUSpan's order.
func gpuSorted(spans []GPUSpan) bool {
	for i := 1; i < len(spans); i++ {
		if cmpGPUSpanAt(&spans[i-1], &spans[i]) > 0 {
			return false
		}
	}
	return true
}
