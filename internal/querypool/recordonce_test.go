package querypool_test

import (
	"errors"
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// A recording on a queue that may not record the copy of its results
// (Config.NoCopy, as for a transfer-only queue; here lavapipe's graphics
// queue, told so), its command buffer run once each time it is recorded:
// its queries are reset on the host and read through the driver, and
// every execution's zones come back, in order, with their own times.
// Without the promise of one run, or without host query reset, it is
// refused, and its zones counted.
func TestRecordingOnceWithoutCopy(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HostQueryReset {
		t.Skipf("no hostQueryReset on %s", q.Dev.Caps.Name)
	}
	p := newPool(t, q, querypool.Config{NoCopy: true, FramesInFlight: 2, Queries: 64})
	cmd, f := q.Cmd(), q.Fence()
	q.End(cmd)
	if err := p.BeginRecording(cmd); !errors.Is(err, querypool.ErrRecordingNoCopy) {
		t.Fatalf("BeginRecording on a pool without copies: %v, want ErrRecordingNoCopy", err)
	}
	p.EndRecording(cmd)
	const runs = 20
	var last [2]uint64 // the last execution's outer zone
	for run := uint64(1); run <= runs; run++ {
		recordRun(t, q, p, cmd, f, run, true)
		if run%5 == 0 { // some read by a collection, the others when recorded again
			p.Advance(run + 2)
		}
		rs, err := p.Collect(nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(rs); i += 2 {
			o, in := rs[i], rs[i+1]
			if o.Name != 1 || in.Name != 2 || in.Begin < o.Begin || in.End > o.End || o.Begin < last[1] {
				t.Fatalf("run %d: outer %+v, inner %+v, the last execution's outer [%d, %d]", run, o, in, last[0], last[1])
			}
			last = [2]uint64{o.Begin, o.End}
		}
	}
	// Begun once more without the promise: refused, its zones counted, and
	// no longer a recording (its last execution read), so that its runs
	// give no results.
	q.BeginWith(cmd, 0)
	if err := p.BeginRecording(cmd); !errors.Is(err, querypool.ErrRecordingNoCopy) {
		t.Fatalf("BeginRecording again without the promise: %v, want ErrRecordingNoCopy", err)
	}
	p.EndRecording(cmd)
	q.End(cmd)
	for run := uint64(runs); run < runs+2; run++ {
		p.Advance(run + 1)
		p.Submit(run+1, run+1, run+1, []vkg.CommandBuffer{cmd})
		q.Resubmit(f, cmd)
		q.Wait(f)
	}
	if _, err := p.Finish(nil); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if s.Pairs != 2*runs || s.Collected != 2*runs || s.NoFrame+s.Unended+s.Unsubmitted+s.Pending+s.Overlapped+s.Misuse != 0 {
		t.Errorf("%d runs of 2 zones, then 2 runs of none: stats %+v", runs, s)
	}
}

// Without host query reset, a recording on a pool without copies is
// refused even with the promise of one run.
func TestRecordingOnceWithoutCopyNeedsHostReset(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{NoHostQueryReset: true})
	p := newPool(t, q, querypool.Config{NoCopy: true, FramesInFlight: 2})
	cmd := q.Cmd()
	if err := p.BeginRecordingOnce(cmd); !errors.Is(err, querypool.ErrRecordingNoCopy) {
		t.Fatalf("BeginRecordingOnce without host query reset: %v, want ErrRecordingNoCopy", err)
	}
	p.EndRecording(cmd)
}
