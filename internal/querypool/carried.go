package querypool

import (
	"slices"
	"sync/atomic"

	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Zones carried across command buffers: Vulkan lets a debug label begun
// in one primary command buffer end in a later one submitted to the same
// queue, as engines label a frame. A recording ended with
// EndRecordingCarry leaves the zones still open in it carried: each
// execution of it puts them on the pool's carried stack, outermost first.
// EndCarried records, in a later recording, a mark: a timestamp with no
// zone of its own, whose execution takes the innermost carried zone off
// the stack and ends it. What ends what is decided at Submit, in
// submission order, which is the queue's order: the same two command
// buffers pair differently when submitted differently. A carried zone is
// delivered once its begin (from one execution) and its end (from
// another) have both been read; it is lost, with the cause of the first
// of the two executions to be lost, if either is; it is Unended if no
// mark ever takes it, or once maxCarried newer ones are carried above it.
//
// Each queue that runs the pool's command buffers (SubmitOn's numbering)
// has a stack of its own: a label carried on one queue is ended on that
// queue.

// maxCarried bounds the zones carried at once: a program that leaves a
// zone open in a command buffer it runs every frame, and never ends it,
// keeps this many, the oldest counted Unended as the next comes.
const maxCarried = 64

// carried is one execution's carried zone.
type carried struct {
	name       uint32
	queue      uint32 // its begin's execution's
	frame, key uint64 // its begin's execution
	host       int64
	begin, end uint64 // device ticks, once read
	haveBegin  bool
	haveEnd    bool
	taken      bool // a mark's execution took it off the stack
	done       bool // delivered or counted lost
}

// EndRecordingCarry is EndRecording, but the zones still open in cmd are
// carried, not Unended: a later recording's EndCarried ends them, in the
// order the two are submitted to the queue.
func (p *Pool) EndRecordingCarry(cmd vkg.CommandBuffer) {
	p.endRecording(cmd, true)
}

// EndCarried records into cmd, a recording being recorded, at stage, the
// end of the innermost zone carried on the queue when cmd runs. It
// reports false where cmd is not a recording being recorded, or its
// zones are refused: nothing is recorded, and the zone stays carried.
func (p *Pool) EndCarried(cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits) bool {
	k := cmdKey(cmd)
	if s, ok := p.openOf(k); !ok || s == nil {
		return false
	}
	pr, ok := p.Begin(cmd, stage, markName)
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.recs[k]; r != nil && r.open && r.s == pr.s {
		r.marks = append(r.marks, pr.q/2)
		return true
	}
	return false
}

// markName names a mark's pair: never a zone's, for the pair never ends.
const markName = ^uint32(0)

// isMark reports whether pair j of r is a mark. Marks are few, and
// taken in order.
func (r *recording) isMark(j uint32) bool {
	if len(r.marks) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(r.marks, j)
	return ok
}

// carryRunLocked pairs an execution of r, just named, with the carried
// stack: its marks take the innermost carried zones, then its carried
// zones go on. The caller holds p.mu.
func (p *Pool) carryRunLocked(r *recording, x *execution) {
	r.runCloses, r.runOpens = r.runCloses[:0], r.runOpens[:0]
	if p.carryStacks == nil {
		p.carryStacks = map[uint32][]*carried{}
	}
	st := p.carryStacks[x.queue]
	for range r.marks {
		n := len(st)
		if n == 0 {
			r.runCloses = append(r.runCloses, nil) // nothing carried: the mark ends nothing
			continue
		}
		c := st[n-1]
		st[n-1] = nil
		st = st[:n-1]
		c.taken = true
		r.runCloses = append(r.runCloses, c)
	}
	for _, pr := range r.carries {
		c := &carried{name: pr.name, queue: x.queue, frame: x.frame, key: x.key, host: x.host}
		if len(st) == maxCarried {
			p.loseCarried(st[0], &p.unended)
			st = slices.Delete(st, 0, 1)
		}
		st = append(st, c)
		p.carryLive = append(p.carryLive, c)
		p.carryOpen++
		r.runOpens = append(r.runOpens, c)
	}
	p.carryStacks[x.queue] = st
}

// carryReadLocked takes an execution's carried begins and marks' ends
// from vals, delivering each carried zone whose begin and end are both
// in. The caller holds p.mu.
func (p *Pool) carryReadLocked(r *recording, vals []uint64) {
	for i, c := range r.runOpens {
		if c != nil && !c.done {
			c.begin, c.haveBegin = vals[4*r.carries[i].j]&p.mask, true
			p.deliverCarried(c)
		}
	}
	for i, c := range r.runCloses {
		if c != nil && !c.done {
			c.end, c.haveEnd = vals[4*r.marks[i]]&p.mask, true
			p.deliverCarried(c)
		}
	}
	r.runOpens, r.runCloses = r.runOpens[:0], r.runCloses[:0]
}

// carryLostLocked counts under cause the carried zones an execution of r
// begins or ends, for it is lost. The caller holds p.mu.
func (p *Pool) carryLostLocked(r *recording, cause *atomic.Uint64) {
	for _, c := range r.runOpens {
		p.loseCarried(c, cause)
	}
	for _, c := range r.runCloses {
		p.loseCarried(c, cause)
	}
	r.runOpens, r.runCloses = r.runOpens[:0], r.runCloses[:0]
}

// deliverCarried hands c to the next Collect once both its ends are in.
func (p *Pool) deliverCarried(c *carried) {
	if c.done || !c.haveBegin || !c.haveEnd {
		return
	}
	c.done = true
	p.carryOpen--
	var wk *timeline.Work
	if p.cfg.Stats != 0 { // one chain a command buffer: no count spans two
		wk = &timeline.Work{Stats: p.cfg.Stats, Missing: timeline.WorkElsewhere}
		p.workMissing[timeline.WorkElsewhere].Add(1)
	}
	p.ready = append(p.ready, Result{Frame: c.frame, Host: c.host, Name: c.name, Cmd: 0,
		Begin: c.begin, End: c.end, Key: c.key, Submitted: true, Carried: true, Queue: c.queue, Work: wk})
	p.collected.Add(1)
	p.pruneCarried()
}

// loseCarried counts c, if not yet delivered or counted, under cause.
func (p *Pool) loseCarried(c *carried, cause *atomic.Uint64) {
	if c == nil || c.done {
		return
	}
	c.done = true
	p.carryOpen--
	cause.Add(1)
	p.pruneCarried()
}

// pruneCarried forgets the settled carried zones once they are most of
// those it keeps.
func (p *Pool) pruneCarried() {
	if len(p.carryLive) > 2*p.carryOpen+16 {
		p.carryLive = slices.DeleteFunc(p.carryLive, func(c *carried) bool { return c.done })
	}
}

// carriedFrom returns the oldest frame of a carried zone that a mark's
// execution took and that is not yet delivered (^0: none): it is on its
// way. One no mark took yet does not hold its frame back: its end may
// never come. The caller holds p.mu.
func (p *Pool) carriedFrom() uint64 {
	oldest := ^uint64(0)
	for _, c := range p.carryLive {
		if c.taken && !c.done {
			oldest = min(oldest, c.frame)
		}
	}
	return oldest
}

// finishCarriedLocked counts the carried zones still unsettled at the
// pool's end, once every execution was read: those no mark took as
// Unended, those taken as Pending (an execution of theirs was never
// read). The caller holds p.mu.
func (p *Pool) finishCarriedLocked() {
	live := p.carryLive
	p.carryLive = nil // loseCarried prunes it
	for _, c := range live {
		if c.taken {
			p.loseCarried(c, &p.pending)
		} else {
			p.loseCarried(c, &p.unended)
		}
	}
	p.carryStacks = nil
}
