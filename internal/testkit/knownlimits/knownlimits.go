// Package knownlimits checks what package timeline/limits says of frames
// whose limit a program drew, as the layer's and the library's tests of
// programs of known limit do: each frame's verdict against the program's
// schedule ('c' CPU-bound, 'g' GPU-bound), and its GPU busy against the
// program's own timestamps.
package knownlimits

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// Check judges tr's frames: index maps a frame to the program's frame
// (-1: not judged), schedule is each program frame's letter and own its
// GPU time by its own timestamps (ns). It fails t where fewer than 95% of
// the frames judged have the schedule's verdict, fewer than 90% a GPU
// busy within 5% of the frame of own, where more than one frame in 20 is
// over 20% apart, or where fewer than want frames were judged. It returns
// the frames judged. (One frame in 28 of a layer run on lavapipe, under
// make test's load on 2 cores, read 26% apart, and in another run 3 of
// 58 were over 5%, 9 ms more than the program's own in one: lavapipe's
// GPU is threads the machine preempts, between the layer's timestamps
// and the program's own. Many frames that far apart would be a frame's
// work given to another.)
func Check(t *testing.T, tr *timeline.Trace, schedule string, own []float64, want int, index func(limits.Frame) int) int {
	t.Helper()
	matched, judged, near := 0, 0, 0
	var wrong, far, farther []string
	for _, f := range limits.Of(tr).Frames {
		k := index(f)
		if k < 0 || k >= len(schedule) || k >= len(own) {
			continue
		}
		d := math.Abs(float64(f.GPUBusy)-own[k]) / float64(f.Dur())
		if d <= 0.05 {
			near++
		} else {
			far = append(far, fmt.Sprintf("frame %d: GPU busy %v, %v by the program's timestamps, of a frame of %v", f.ID,
				time.Duration(f.GPUBusy), time.Duration(own[k]), time.Duration(f.Dur())))
			if d > 0.20 {
				farther = append(farther, far[len(far)-1])
			}
		}
		judged++
		if want := verdict(schedule[k]); f.Limit == want {
			matched++
		} else {
			wrong = append(wrong, fmt.Sprintf("frame %d: %v, want %v (GPU busy %.2f, CPU busy %.2f of %v)", f.ID, f.Limit, want,
				float64(f.GPUBusy)/float64(f.Dur()), float64(f.CPUBusy)/float64(f.Dur()), time.Duration(f.Dur())))
		}
	}
	t.Logf("%s: %d of %d frames as the program drew them; GPU busy within 5%% of the program's own in %d", schedule, matched, judged, near)
	if 20*len(farther) > max(judged, 20) {
		t.Errorf("%d of %d frames over 20%% of the frame apart, more than one in 20:\n%v", len(farther), judged, farther)
	}
	if 100*near < 90*judged {
		t.Errorf("GPU busy within 5%% of the frame of the program's own in %d of %d frames, want 90%%:\n%v", near, judged, far)
	}
	if judged < want || 100*matched < 95*judged {
		t.Errorf("%d of %d frames judged as the program drew them (want %d judged), want 95%%:\n%v", matched, judged, want, wrong)
	}
	return judged
}

func verdict(letter byte) limits.Limit {
	if letter == 'g' {
		return limits.GPU
	}
	return limits.CPU
}
