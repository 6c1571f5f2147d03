package profiler

import (
	"testing"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// TestCollectSetsEveryField: Collect writes each result whole into the
// spare room of dst, which it does not clear first. Into a buffer whose
// spare room holds junk in every field, the results are those of the frame:
// converted where a calibration exists, and with zero host times, bound and
// depth where none does.
func TestCollectSetsEveryField(t *testing.T) {
	for _, calibrated := range []bool{true, false} {
		name := map[bool]string{true: "calibrated", false: "uncalibrated"}[calibrated]
		t.Run(name, func(t *testing.T) { collectIntoJunk(t, calibrated) })
	}
}

func collectIntoJunk(t *testing.T, calibrated bool) {
	const pairs = 20
	// Without calibrated timestamps and before any calibration, zones are
	// read back unconverted.
	r := newRig(t, vk.Config{NoCalibrated: !calibrated}, GPUOptions{FramesInFlight: 1, CalibrateEvery: -1})
	if calibrated {
		if err := r.g.Calibrate(); err != nil {
			t.Fatal(err)
		}
	}
	outer, inner := r.p.Name("outer"), r.p.Name("inner")
	junk := ZoneResult{Name: 12345, Frame: 1 << 40, Family: 99, Index: 99, Begin: 7, End: 3,
		Start: -7, Stop: -9, ErrNs: -1, Converted: !calibrated, Key: 0xbad, Depth: 77}
	dst := make([]ZoneResult, 2*pairs+8)
	for i := range dst {
		dst[i] = junk
	}
	frame := r.p.BeginFrame()
	cmd := r.q.Cmd()
	r.g.BeginFrame(cmd)
	for range pairs {
		z := r.g.Zone(cmd, outer)
		r.g.Zone(cmd, inner).End()
		z.End()
	}
	r.g.submitted([]vkg.CommandBuffer{cmd})
	r.g.EndFrame(cmd)
	r.p.EndFrame()
	r.q.SubmitWait(cmd)
	r.q.Free(cmd)
	got, _ := r.g.Drain(dst[:0])
	if len(got) != 2*pairs {
		t.Fatalf("%d results, want %d; stats %+v", len(got), 2*pairs, r.g.Stats())
	}
	for i, z := range got {
		depth, name := uint16(0), outer
		if i%2 == 1 {
			depth, name = 1, inner
		}
		ok := z.Name == name && z.Frame == frame && z.Family == r.q.Q.Family && z.Index == r.q.Q.Index &&
			z.Begin <= z.End && z.Begin != junk.Begin && z.Key != junk.Key && z.Key == got[0].Key && z.Converted == calibrated
		if calibrated {
			ok = ok && z.Start <= z.Stop && z.Start > 0 && z.ErrNs > 0 && z.Depth == depth
		} else {
			ok = ok && z.Start == 0 && z.Stop == 0 && z.ErrNs == 0 && z.Depth == 0
		}
		if !ok {
			t.Fatalf("result %d: %+v (frame %d, queue %d.%d)", i, z, frame, r.q.Q.Family, r.q.Q.Index)
		}
	}
}
