package limits_test

import (
	"fmt"
	"testing"

	"github.com/framescope/framescope/timeline/limits"
)

// BenchmarkOf reads traces of 1,000 and 16,000 frames of 10 ms, each with
// a submission, a wait and GPU work, and one GPU zone and one wait that
// last the whole trace: ns/frame is the same at both sizes where the
// reading is linear (a long zone made it quadratic once).
func BenchmarkOf(b *testing.B) {
	for _, n := range []int64{1000, 16000} {
		bl := newBuilder()
		bl.span(3, "long", 0, n*10*ms, 0)
		bl.span(1, "vkDeviceWaitIdle", 0, n*10*ms, 0)
		for k := range n {
			at := k * 10 * ms
			bl.submit(at, ms/10, 2, [2]int64{at + ms/5, at + 5*ms})
			bl.span(1, "vkWaitForFences", at+ms/10, at+6*ms, 1)
			bl.frame(uint64(k+1), at, at+ms/10)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var r limits.Report
			for range b.N {
				r = limits.Of(&bl.t)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(r.Frames)), "ns/frame")
		})
	}
}
