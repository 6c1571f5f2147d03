package querypool_test

import (
	"errors"
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Past MaxRecordings, a recording begun is refused, unless a recording's
// command buffer was reset since it ended (Reset): it then takes that
// one's slot, the reset one's last execution read first. Every
// execution of both comes back, and the books balance. (A program that
// resets its pool each frame and allocates command buffers afresh,
// never freeing the old ones, was refused past 256: the layer's checker,
// seed 2116.)
func TestResetRecordingGivesItsSlot(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{FramesInFlight: 2, Queries: 8})
	f := q.Fence()
	cmds := q.Cmds(querypool.MaxRecordings + 1)
	q.End(cmds...) // recordRun records each again, from execution 2
	for i, c := range cmds[:querypool.MaxRecordings] {
		recordRun(t, q, p, c, f, uint64(i+2), false)
	}
	extra := cmds[querypool.MaxRecordings]
	q.BeginWith(extra, 0)
	if err := p.BeginRecording(extra); !errors.Is(err, querypool.ErrRecordingCount) {
		t.Fatalf("a recording past %d with none reset: %v, want ErrRecordingCount", querypool.MaxRecordings, err)
	}
	p.EndRecording(extra)
	q.End(extra)

	// The first is reset; the extra one, recorded again, takes its slot.
	if r := vkg.ResetCommandBuffer(cmds[0], 0); r != vkg.Success {
		t.Fatalf("vkResetCommandBuffer: %v", vkg.Error(r))
	}
	p.Reset(cmds[0])
	recordRun(t, q, p, extra, f, querypool.MaxRecordings+2, false)
	if n := p.TakenIdle(); n != 1 {
		t.Errorf("%d recordings began on a reset one's slot, want 1", n)
	}
	p.Stop()
	rs, err := p.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	const runs = querypool.MaxRecordings + 1 // executions 2 to 258
	frames := map[uint64]int{}
	for _, r := range rs {
		frames[r.Frame]++
		if r.End < r.Begin {
			t.Errorf("zone %+v ends before it begins", r)
		}
	}
	for frame := uint64(2); frame <= runs+1; frame++ {
		if frames[frame] != 2 {
			t.Errorf("execution %d: %d zones back, want 2", frame, frames[frame])
		}
	}
	s := p.Stats()
	if s.Pairs != 2*runs || s.Collected != 2*runs || s.Pending+s.Unsubmitted+s.Unended+s.Overlapped+s.Misuse+s.NoFrame != 0 {
		t.Errorf("%d executions of 2 zones: stats %+v", runs, s)
	}
}

// A command buffer recorded untimed (BeginUntimed: a secondary that
// continues a render pass) has its zones refused, counted NoFrame at each
// of its executions, not once; its recording before is read first, and
// recorded as a recording again it is timed again.
func TestUntimedCountedEachExecution(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{FramesInFlight: 2, Queries: 8})
	f := q.Fence()
	cmd := q.Cmds(1)[0]
	recordRun(t, q, p, cmd, f, 1, false)

	q.BeginWith(cmd, 0)
	if err := p.BeginUntimed(cmd); err != nil {
		t.Fatal(err)
	}
	for name := uint32(1); name <= 2; name++ {
		if _, ok := p.Begin(cmd, top, name); ok {
			t.Fatal("a zone of a command buffer recorded untimed was handed a pair")
		}
	}
	q.End(cmd)
	const runs = 3
	for run := uint64(2); run < 2+runs; run++ {
		p.Advance(run)
		p.Submit(run, run, run, []vkg.CommandBuffer{cmd})
		q.Resubmit(f, cmd)
		q.Wait(f)
	}
	recordRun(t, q, p, cmd, f, 2+runs, false)
	p.Stop()
	rs, err := p.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Errorf("%d zones back, want 4 (the two recordings' executions)", len(rs))
	}
	s := p.Stats()
	if s.NoFrame != 2*runs || s.Collected != 4 || s.Pending+s.Unsubmitted+s.Unended+s.Overlapped+s.Misuse != 0 {
		t.Errorf("2 zones refused at each of %d executions: stats %+v, want NoFrame %d", runs, s, 2*runs)
	}
}

// An execution named in a frame the pool has not been told of yet
// (Advance lags the submissions: a layer's frame boundaries reach the
// pool from a goroutine), named again before its values are in, ran
// beside the next: it is counted overlapped, not never submitted (the
// frames since it began wrapped below zero).
func TestExecutionAheadOfAdvance(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{FramesInFlight: 2, Queries: 8})
	f := q.Fence()
	cmd := q.Cmds(1)[0]
	q.End(cmd)
	q.BeginWith(cmd, 0)
	if err := p.BeginRecording(cmd); err != nil {
		t.Fatal(err)
	}
	nested(t, p, cmd)
	p.EndRecording(cmd)
	q.End(cmd)
	p.Advance(1)
	p.Submit(2, 2, 2, []vkg.CommandBuffer{cmd}) // frame 2, ahead of the pool's 1
	p.Submit(2, 2, 3, []vkg.CommandBuffer{cmd}) // again, the first not in
	q.Resubmit(f, cmd)
	q.Wait(f)
	p.Stop()
	if _, err := p.Finish(nil); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if s.Unsubmitted != 0 || s.Overlapped != 4 || s.Pairs != 4 {
		t.Errorf("two executions of 2 zones named beside each other: stats %+v, want 4 overlapped, none unsubmitted", s)
	}
}
