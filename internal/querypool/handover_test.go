package querypool_test

import (
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// recordRun records cmd again as a recording of two nested zones, named
// 1 (outer) and 2, and runs it as frame run, waiting for it; with once,
// as a command buffer run once each time it is recorded (begun for one
// time submit, BeginRecordingOnce).
func recordRun(t *testing.T, q *vktest.Queue, p *querypool.Pool, cmd vkg.CommandBuffer, f vkg.Fence, run uint64, once bool) {
	t.Helper()
	begin := p.BeginRecording
	switch {
	case once:
		q.Begin(cmd)
		begin = p.BeginRecordingOnce
	case run > 1:
		q.BeginWith(cmd, 0)
	}
	if err := begin(cmd); err != nil {
		t.Fatal(err)
	}
	nested(t, p, cmd)
	p.EndRecording(cmd)
	q.End(cmd)
	p.Advance(run)
	p.Submit(run, run, run, []vkg.CommandBuffer{cmd})
	q.Resubmit(f, cmd)
	q.Wait(f)
}

// nested records two nested zones into cmd, named 1 (outer) and 2.
func nested(t *testing.T, p *querypool.Pool, cmd vkg.CommandBuffer) {
	t.Helper()
	outer, ok := p.Begin(cmd, top, 1)
	inner, ok2 := p.Begin(cmd, top, 2)
	if !ok || !ok2 {
		t.Fatal("Begin refused")
	}
	p.End(inner, cmd, bottom)
	p.End(outer, cmd, bottom)
}

// recordEmpty records cmd again as a recording with no zone, which never
// runs, and waits for the device to go idle.
func recordEmpty(t *testing.T, q *vktest.Queue, p *querypool.Pool, cmd vkg.CommandBuffer) {
	t.Helper()
	q.BeginWith(cmd, 0)
	if err := p.BeginRecording(cmd); err != nil {
		t.Fatal(err)
	}
	p.EndRecording(cmd)
	q.End(cmd)
	vkg.DeviceWaitIdle(q.Dev.Handle)
}

// checkRuns checks that rs hold each of runs executions' two zones once,
// the inner inside the outer, each execution after the one before.
func checkRuns(t *testing.T, rs []querypool.Result, runs uint64) {
	t.Helper()
	slices.SortFunc(rs, func(a, b querypool.Result) int { return int(a.Frame-b.Frame)*4 + int(a.Seq) - int(b.Seq) })
	if uint64(len(rs)) != 2*runs {
		t.Fatalf("%d zones back, want %d", len(rs), 2*runs)
	}
	var last uint64
	for i := 0; i < len(rs); i += 2 {
		o, in := rs[i], rs[i+1]
		if o.Frame != uint64(i/2+1) || in.Frame != o.Frame || o.Name != 1 || in.Name != 2 ||
			in.Begin < o.Begin || in.End > o.End || o.Begin < last || o.End < o.Begin {
			t.Fatalf("execution %d: outer %+v, inner %+v, the last one's end %d", i/2+1, o, in, last)
		}
		last = o.End
	}
}

// A command buffer recorded again hands its last execution's zones to
// the next Collect, which makes their results, rather than making them
// on the recording thread: every execution's zones come back once, from
// the Collect that takes them or from Finish, and the books balance; a
// pool released with one handed over and never taken counts its zones
// pending.
func TestRecordingAgainHandsItsCopyToCollect(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	p := newPool(t, q, querypool.Config{FramesInFlight: 2, Queries: 64})
	cmd, f := q.Cmd(), q.Fence()
	const runs = 30
	var got []querypool.Result
	for run := uint64(1); run <= runs; run++ {
		recordRun(t, q, p, cmd, f, run, false)
		if run%3 == 0 { // the others' handovers wait for a later Collect
			continue
		}
		rs, err := p.Collect(nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rs...)
	}
	// Recorded once more, with no zone, and never run: its recording
	// again hands the last execution over, for Finish.
	recordEmpty(t, q, p, cmd)
	if _, _, ready := p.Account(); ready != 4 {
		t.Errorf("2 executions of 2 zones handed over and not taken: Account's ready %d", ready)
	}
	p.Stop()
	rs, err := p.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rs...)
	checkRuns(t, got, runs)
	if h := p.Handovers(); h != runs {
		t.Errorf("%d executions handed over of %d recorded again, want each", h, runs)
	}
	s := p.Stats()
	if s.Pairs != 2*runs || s.Collected != 2*runs || s.Pending+s.Unsubmitted+s.Unended+s.Overlapped+s.Misuse != 0 {
		t.Errorf("%d runs of 2 zones: stats %+v", runs, s)
	}

	// Released with a handover not taken: its zones are pending.
	p2 := newPool(t, q, querypool.Config{FramesInFlight: 2, Queries: 64})
	cmd2 := q.Cmd()
	for run := uint64(1); run <= 4; run++ {
		recordRun(t, q, p2, cmd2, f, run, false)
		if run < 3 { // run 1's zones taken; runs 2 to 4's handed over and never taken
			if _, err := p2.Collect(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	recordEmpty(t, q, p2, cmd2)
	if p2.Handovers() == 0 {
		t.Fatal("no execution handed over")
	}
	p2.Close()
	if s := p2.Stats(); s.Pairs != 8 || s.Collected != 2 || s.Pending != 6 {
		t.Errorf("4 runs of 2 zones, the last 3 handed over and never taken: stats %+v", s)
	}
}

// A command buffer recorded with zones in one frame, whose results are
// not copied (EndFrame without a command buffer), and submitted again in
// a later frame without being recorded again: the Submit that names it
// again reads its frame's slot first, once the application has waited
// for that frame, so that its first execution's zones are read before
// the new execution writes their queries again. (Read after, they took
// its times, or, on lavapipe while it ran, none, and were counted never
// submitted: the render-loop checker's seed 5149.)
func TestSubmitAgainReadsTheSlotFirst(t *testing.T) {
	// The validation layer reports the queries written again without a
	// reset: the pattern is the application's misuse.
	d := vktest.OpenUnchecked(t, vk.Config{})
	gq, ok := d.QueueFor("graphics")
	if !ok {
		gq = d.Queues[0]
	}
	q := vktest.NewQueue(t, d, gq)
	if !q.Dev.HostQueryReset {
		t.Skipf("no hostQueryReset on %s", q.Dev.Caps.Name)
	}
	p := newPool(t, q, querypool.Config{FramesInFlight: 1})
	f := q.Fence()
	st := q.Cmd()
	q.End(st)
	q.BeginWith(st, 0) // to run more than once
	if err := p.BeginFrame(1, nil); err != nil {
		t.Fatal(err)
	}
	nested(t, p, st)
	p.EndFrame(nil)
	q.End(st)
	p.Submit(1, 1, 1, []vkg.CommandBuffer{st})
	q.Resubmit(f, st)
	q.Wait(f)
	if err := p.BeginFrame(2, nil); err != nil {
		t.Fatal(err)
	}
	p.Submit(2, 2, 2, []vkg.CommandBuffer{st})
	if _, _, ready := p.Account(); ready != 2 {
		t.Fatalf("after the Submit that names it again, %d of its first execution's 2 zones read", ready)
	}
	q.Resubmit(f, st) // writes the queries again
	q.Wait(f)
	p.EndFrame(nil)
	rs, err := p.Collect(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Frame != 1 || rs[1].Frame != 1 || rs[1].Begin < rs[0].Begin || rs[1].End > rs[0].End {
		t.Fatalf("the first execution's zones: %+v", rs)
	}
	if s := p.Stats(); s.Collected != 2 || s.Unsubmitted != 0 {
		t.Errorf("stats %+v", s)
	}
}
