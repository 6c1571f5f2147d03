package querypool

import (
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// noSeg is no segment: the first segment's predecessor, and a chain's
// segment once its frame's statistics queries are spent.
const noSeg = ^uint32(0)

// maxChains bounds the command buffers counting work at once.
const maxChains = 64

// workSlot is a slot's pipeline statistics queries, one a segment.
type workSlot struct {
	pool    vkg.QueryPool
	cap     uint32        // segments
	n       uint32        // statistics a query counts
	next    atomic.Uint32 // segments taken in the frame
	written uint32        // segments taken since the last host reset
	// prev is, per segment, the segment of its chain before it, or
	// noSeg: written by the thread recording the chain, before the
	// segment's query is begun.
	prev    []uint32
	buf     *vk.HostBuffer // vkCmdCopyQueryPoolResults lands here
	results []uint64       // n values and availability a segment, as the driver read them
	gone    bool
}

// newWorkSlot makes a slot's statistics queries: segs of them, counting
// stats, reset on the host when reset is set.
func newWorkSlot(dev *vk.Device, stats timeline.PipelineStats, segs uint32, reset bool) (*workSlot, error) {
	h, err := dev.CreateQueryPool(vkg.QueryTypePipelineStatistics, segs, uint32(stats))
	if err != nil {
		return nil, fmt.Errorf("querypool: vkCreateQueryPool(%d pipeline statistics queries): %w", segs, err)
	}
	n := uint32(stats.Len())
	w := &workSlot{pool: h, cap: segs, n: n, prev: make([]uint32, segs), results: make([]uint64, segs*(n+1))}
	buf, err := dev.HostBuffer(uint64(segs)*uint64(n+1)*8, vkg.BufferUsageTransferDstBit)
	if err != nil {
		dev.DestroyQueryPool(h)
		return nil, err
	}
	w.buf = buf
	clear(buf.Uint64s())
	if reset {
		if err := dev.ResetQueryPool(h, 0, segs); err != nil {
			w.destroy(dev)
			return nil, err
		}
	}
	return w, nil
}

func (w *workSlot) destroy(dev *vk.Device) {
	if w == nil || w.gone {
		return
	}
	w.gone = true
	dev.DestroyQueryPool(w.pool)
	w.buf.Destroy()
	w.buf = nil
}

// take hands out the frame's next segment, following prev in its chain.
func (w *workSlot) take(prev uint32) (uint32, bool) {
	if w.next.Load() >= w.cap {
		return noSeg, false
	}
	seg := w.next.Add(1) - 1
	if seg >= w.cap {
		return noSeg, false
	}
	w.prev[seg] = prev
	return seg, true
}

// used returns the segments the frame took.
func (w *workSlot) used() uint32 { return min(w.next.Load(), w.cap) }

// values returns the segments' results as the reader has them.
func (w *workSlot) values(fromCopy bool) []uint64 {
	if fromCopy {
		return w.buf.Uint64s()
	}
	return w.results
}

// zoneWork is a pair's part in a chain: written by the thread recording
// its command buffer, at its Begin and End, and read by the harvest once
// the pair has ended.
type zoneWork struct {
	gen      uint32 // the pair's generation: a stale End finds another
	state    uint8
	missing  timeline.WorkMissing
	chain    uint8  // index in Pool.chains
	chainGen uint32 // the chain's generation when the zone began
	// first and last are the first and last segments of its count.
	first, last uint32
}

const (
	workOpen = iota + 1
	workEnded
)

// chain is a command buffer's sequence of segments: one statistics query
// active at a time, ended and the next begun at every Begin and End of a
// zone inside the chain's first zone (its owner), so that every zone's
// work is the sum of the segments between its Begin and End. Only the
// thread recording cmd uses a chain it holds; cmd is taken with a
// compare-and-swap and given back when the owner ends.
type chain struct {
	cmd atomic.Uint64
	// s is the slot whose queries the chain takes, in generation sgen;
	// stale once the slot is read back: a command buffer recorded again
	// after a zone was left open in it finds it so.
	s    atomic.Pointer[Slot]
	sgen atomic.Uint32

	gen   uint32 // bumped each time the chain begins
	owner uint32 // the query of the pair that began it
	// seg is the active segment; noSeg once the slot had none left or
	// the frame's end was recorded in cmd (cut says which). EndFrame
	// reads it, to leave it out of the copy it records.
	seg    atomic.Uint32
	cut    timeline.WorkMissing
	inside bool // it began inside a render pass instance
}

// live reports whether the chain's slot still records or waits for its
// results in the generation the chain began in.
func (c *chain) live() bool {
	s := c.s.Load()
	if s == nil || s.gen.Load() != c.sgen.Load() {
		return false
	}
	st := s.state.Load()
	return st == slotRecording || st == slotClosed
}

// chainOf returns the chain cmd holds, or nil. One that is no longer
// live is given back first.
func (p *Pool) chainOf(cmd uint64) (*chain, uint8) {
	for i := range p.chains {
		c := &p.chains[i]
		if c.cmd.Load() != cmd {
			continue
		}
		if c.live() {
			return c, uint8(i)
		}
		c.cmd.CompareAndSwap(cmd, 0)
		return nil, 0
	}
	return nil, 0
}

// claim takes a free chain for cmd: a free one, else one no longer live.
func (p *Pool) claim(cmd uint64) (*chain, uint8) {
	for pass := 0; pass < 2; pass++ {
		for i := range p.chains {
			c := &p.chains[i]
			old := c.cmd.Load()
			if old != 0 && (pass == 0 || c.live()) {
				continue
			}
			if c.cmd.CompareAndSwap(old, cmd) {
				return c, uint8(i)
			}
		}
	}
	return nil, 0
}

// zoneWork returns the record of the pair whose first query is q.
func (s *Slot) zoneWork(q uint32) *zoneWork {
	b := s.blockOf(q)
	return &b.work[(q-b.base)/2]
}

// BeginWork starts counting the work of pr, which Begin just handed out
// in cmd; inside says the zone begins inside a render pass instance. The
// zone joins the chain cmd holds, or begins one. Call it right after
// Begin, from the same goroutine.
func (p *Pool) BeginWork(pr Pair, cmd vkg.CommandBuffer, inside bool) {
	s := pr.s
	if s == nil || s.work == nil {
		return
	}
	zw := s.zoneWork(pr.q)
	*zw = zoneWork{gen: pr.gen, state: workOpen, first: noSeg, last: noSeg}
	key := uint64(uintptr(unsafe.Pointer(cmd)))
	c, i := p.chainOf(key)
	if c == nil {
		if p.queryIn(key) {
			zw.missing = timeline.WorkQuery
			return
		}
		p.beginChain(pr, cmd, key, inside, zw)
		return
	}
	switch {
	case c.s.Load() != s:
		zw.missing = timeline.WorkFrames
	case inside && !c.inside:
		zw.missing = timeline.WorkRenderPass
	case c.seg.Load() == noSeg:
		zw.missing = c.cut
	default:
		seg, ok := p.split(c, s.work, cmd)
		if !ok {
			zw.missing = timeline.WorkSpent
			return
		}
		zw.chain, zw.chainGen, zw.first = i, c.gen, seg
	}
}

// beginChain begins a chain in cmd with pr as its owner.
func (p *Pool) beginChain(pr Pair, cmd vkg.CommandBuffer, key uint64, inside bool, zw *zoneWork) {
	s := pr.s
	c, i := p.claim(key)
	if c == nil {
		zw.missing = timeline.WorkSpent
		return
	}
	seg, ok := s.work.take(noSeg)
	if !ok {
		c.cmd.Store(0)
		zw.missing = timeline.WorkSpent
		return
	}
	c.s.Store(s)
	c.sgen.Store(pr.gen)
	c.gen++
	c.owner, c.inside, c.cut = pr.q, inside, timeline.WorkCounted
	c.seg.Store(seg)
	p.dev.CmdBeginQuery(cmd, s.work.pool, seg)
	zw.chain, zw.chainGen, zw.first = i, c.gen, seg
}

// split ends the chain's active segment and begins the next, which it
// returns; false, with none active, when the slot has no segment left.
func (p *Pool) split(c *chain, w *workSlot, cmd vkg.CommandBuffer) (uint32, bool) {
	p.dev.CmdEndQuery(cmd, w.pool, c.seg.Load())
	seg, ok := w.take(c.seg.Load())
	c.seg.Store(seg)
	if !ok {
		c.cut = timeline.WorkSpent
		return noSeg, false
	}
	p.dev.CmdBeginQuery(cmd, w.pool, seg)
	return seg, true
}

// EndWork ends the count of pr's work in cmd, before End records its
// timestamp, and ends the chain when pr began it. An End of a pair not
// open (twice, stale) records nothing here: End refuses and counts it.
func (p *Pool) EndWork(pr Pair, cmd vkg.CommandBuffer) { p.endWork(pr, cmd, false) }

// EndWorkInRenderPass is EndWork for a zone that ends inside a render
// pass instance: where its count's query began outside the instance, no
// query may end there, and the zone has no counts (WorkRenderPass); the
// count goes on, to be ended outside (by a later zone, or the command
// buffer's end).
func (p *Pool) EndWorkInRenderPass(pr Pair, cmd vkg.CommandBuffer) { p.endWork(pr, cmd, true) }

func (p *Pool) endWork(pr Pair, cmd vkg.CommandBuffer, inside bool) {
	s := pr.s
	if s == nil || s.work == nil {
		return
	}
	zw := s.zoneWork(pr.q)
	if zw.gen != pr.gen || zw.state != workOpen || s.gen.Load() != pr.gen {
		return // ended already, or its slot was read back since: End refuses it
	}
	if st := s.state.Load(); st != slotRecording && st != slotClosed {
		return
	}
	zw.state = workEnded
	key := uint64(uintptr(unsafe.Pointer(cmd)))
	if zw.missing != timeline.WorkCounted {
		return
	}
	_, m := pr.record()
	c := &p.chains[zw.chain]
	switch {
	case m.cmd != key:
		zw.missing = timeline.WorkElsewhere
		return
	case c.cmd.Load() != key || c.gen != zw.chainGen || c.s.Load() != s:
		zw.missing = timeline.WorkMisnested
		return
	case c.seg.Load() == noSeg:
		zw.missing = c.cut
	case inside && !c.inside:
		zw.missing = timeline.WorkRenderPass
		return // the chain goes on, its owner's end or not
	case c.owner == pr.q:
		p.dev.CmdEndQuery(cmd, s.work.pool, c.seg.Load())
		zw.last = c.seg.Load()
	default:
		zw.last = c.seg.Load()
		p.split(c, s.work, cmd)
		return
	}
	if c.owner == pr.q {
		c.s.Store(nil)
		c.cmd.Store(0)
	}
}

// workScratch is the harvest's scratch for sums along chains.
type workScratch struct {
	sums []uint64 // per segment: n running totals along its chain
	unav []uint32 // per segment: segments unavailable along its chain
}

// harvestWork gives each result of rs, harvested from s, its work: the
// sum of its segments, from running totals along each chain. The caller
// holds p.mu.
func (p *Pool) harvestWork(s *Slot, rs []Result) { p.harvestWorkOf(s, rs, nil) }

// harvestWorkOf is harvestWork for results whose pairs are given (a
// recording's execution, pairs[i] result i's), or, with none, are their
// Seq in the slot's frame.
func (p *Pool) harvestWorkOf(s *Slot, rs []Result, pairs []recPair) {
	w := s.work
	if w == nil || len(rs) == 0 {
		return
	}
	n, used := int(w.n), w.used()
	vals := w.values(s.fromCopy)
	x := &p.scratch
	x.sums = slices.Grow(x.sums[:0], int(used)*n)[:int(used)*n]
	x.unav = slices.Grow(x.unav[:0], int(used))[:used]
	for seg := range used {
		r := vals[int(seg)*(n+1) : int(seg+1)*(n+1)]
		sum := x.sums[int(seg)*n : int(seg+1)*n]
		copy(sum, r[:n])
		x.unav[seg] = 0
		if r[n] == 0 {
			x.unav[seg] = 1
		}
		if pv := w.prev[seg]; pv != noSeg && pv < seg {
			for k, v := range x.sums[int(pv)*n : int(pv+1)*n] {
				sum[k] += v
			}
			x.unav[seg] += x.unav[pv]
		}
	}
	// One allocation a harvest: the timeline keeps what the results
	// point to.
	works := make([]timeline.Work, len(rs))
	var idx [timeline.NumPipelineStats]uint8 // result k is statistic idx[k]
	k := 0
	p.cfg.Stats.Each(func(i int) { idx[k] = uint8(i); k++ })
	g := s.gen.Load()
	for i := range rs {
		wk := &works[i]
		wk.Stats = p.cfg.Stats
		q := rs[i].Seq * 2
		if pairs != nil {
			q = 2 * pairs[i].j
		}
		if wk.Missing = p.workOf(s, q, g, used, idx[:n], &wk.Count); wk.Missing != timeline.WorkCounted {
			p.workMissing[wk.Missing].Add(1)
		}
		rs[i].Work = wk
	}
}

// workOf sets count to the work of the pair whose first query is q, of
// generation g, from the running totals (result k is statistic idx[k]),
// or returns why it has none.
func (p *Pool) workOf(s *Slot, q, g, used uint32, idx []uint8, count *[timeline.NumPipelineStats]uint64) timeline.WorkMissing {
	zw := s.zoneWork(q)
	switch {
	case zw.gen != g || zw.state != workEnded:
		return timeline.WorkUnavailable
	case zw.missing != timeline.WorkCounted:
		return zw.missing
	case zw.first >= used || zw.last >= used || zw.last < zw.first:
		return timeline.WorkUnavailable
	}
	x, n := &p.scratch, len(idx)
	last := x.sums[int(zw.last)*n : int(zw.last+1)*n]
	before := s.work.prev[zw.first]
	if before == noSeg {
		if x.unav[zw.last] != 0 {
			return timeline.WorkUnavailable
		}
		for k, i := range idx {
			count[i] = last[k]
		}
		return timeline.WorkCounted
	}
	if x.unav[zw.last] != x.unav[before] {
		return timeline.WorkUnavailable
	}
	prev := x.sums[int(before)*n : int(before+1)*n]
	for k, i := range idx {
		count[i] = last[k] - prev[k]
	}
	return timeline.WorkCounted
}

// activeSeg returns the segment of s a chain has active in command
// buffer cmd, or noSeg: a copy recorded there must leave it out (Vulkan
// copies no query active in the command buffer).
func (p *Pool) activeSeg(s *Slot, cmd uint64) uint32 {
	for i := range p.chains {
		c := &p.chains[i]
		if c.cmd.Load() == cmd && c.s.Load() == s {
			return c.seg.Load()
		}
	}
	return noSeg
}

// endCounts ends the counts still open in cmd, where EndFrame records the
// frame's end: a query may not be active at vkEndCommandBuffer, and an
// application that left a zone open there would have it so. The zones
// open in them have no counts (timeline.WorkFrameEnd). EndFrame records
// into cmd, so its caller is the goroutine recording it, the one that
// may use cmd's chain. The caller holds p.mu.
func (p *Pool) endCounts(cmd vkg.CommandBuffer) { p.cutCounts(cmd, timeline.WorkFrameEnd) }

// BeforeQuery ends the counts open in cmd before the application begins a
// pipeline statistics query of its own in it (one may be active at a time
// in a command buffer): the zones open in cmd, and those begun in it until
// AfterQuery, have no counts (timeline.WorkQuery). Call it, and
// AfterQuery, from the goroutine recording cmd. Without Config.Stats it
// does nothing.
func (p *Pool) BeforeQuery(cmd vkg.CommandBuffer) {
	if p.cfg.Stats == 0 {
		return
	}
	p.mu.Lock()
	p.cutCounts(cmd, timeline.WorkQuery)
	p.mu.Unlock()
	p.queriesOn.Add(1)
	key := uint64(uintptr(unsafe.Pointer(cmd)))
	for i := range p.queries {
		if p.queries[i].CompareAndSwap(0, key) {
			return
		}
	}
	p.queriesOver.Add(1) // past the slots: no count begins anywhere until it ends
}

// AfterQuery notes that the application ended the pipeline statistics
// query BeforeQuery was told of in cmd.
func (p *Pool) AfterQuery(cmd vkg.CommandBuffer) {
	if p.cfg.Stats == 0 {
		return
	}
	key := uint64(uintptr(unsafe.Pointer(cmd)))
	for i := range p.queries {
		if p.queries[i].CompareAndSwap(key, 0) {
			p.queriesOn.Add(-1)
			return
		}
	}
	if p.queriesOver.Load() > 0 {
		p.queriesOver.Add(-1)
		p.queriesOn.Add(-1)
	}
}

// queryIn reports whether the application's statistics query may be
// active in command buffer key (BeforeQuery).
func (p *Pool) queryIn(key uint64) bool {
	switch {
	case p.queriesOn.Load() == 0: // the usual program: none, and no look
		return false
	case p.queriesOver.Load() > 0:
		return true
	}
	for i := range p.queries {
		if p.queries[i].Load() == key {
			return true
		}
	}
	return false
}

// CutCounts ends the counts open in cmd before it executes secondary
// command buffers (vkCmdExecuteCommands, or a render pass whose contents
// they are, before it begins): Vulkan lets no secondary run under an
// active statistics query it does not inherit. The zones open in cmd,
// and those begun in it until the zone that began its count ends, have
// no counts (timeline.WorkSecondaries). Call it from the goroutine
// recording cmd. Without Config.Stats it does nothing.
func (p *Pool) CutCounts(cmd vkg.CommandBuffer) {
	if p.cfg.Stats == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutCounts(cmd, timeline.WorkSecondaries)
}

// cutCounts ends the counts open in cmd, the zones open in them and
// begun in them later missing why. The caller holds p.mu.
func (p *Pool) cutCounts(cmd vkg.CommandBuffer, why timeline.WorkMissing) {
	key := uint64(uintptr(unsafe.Pointer(cmd)))
	for i := range p.chains {
		c := &p.chains[i]
		if c.cmd.Load() != key || !c.live() {
			continue
		}
		if seg := c.seg.Load(); seg != noSeg {
			p.dev.CmdEndQuery(cmd, c.s.Load().work.pool, seg)
			c.seg.Store(noSeg)
			c.cut = why
		}
	}
}

// workRanges returns the ranges of s's segments a copy recorded in
// command buffer cmd copies, k of them: every segment taken, but for the
// one a chain has active there, which it clears in the host buffer.
func (p *Pool) workRanges(s *Slot, cmd vkg.CommandBuffer) (r [2][2]uint32, k int) {
	w := s.work
	if w == nil {
		return r, 0
	}
	n := w.used()
	skip := min(p.activeSeg(s, uint64(uintptr(unsafe.Pointer(cmd)))), n)
	if skip < n {
		clear(w.buf.Uint64s()[skip*(w.n+1) : (skip+1)*(w.n+1)])
	}
	for _, x := range [2][2]uint32{{0, skip}, {min(skip+1, n), n}} {
		if x[1] > x[0] {
			r[k] = x
			k++
		}
	}
	return r, k
}

// readWorkDriver reads the slot's segments through vkGetQueryPoolResults.
func (p *Pool) readWorkDriver(s *Slot) vkg.Result {
	w := s.work
	if w == nil || w.used() == 0 {
		return vkg.Success
	}
	n := w.used()
	stride := uint64(w.n+1) * 8
	return p.dev.QueryResults(w.pool, 0, n, uint64(n)*stride,
		unsafe.Pointer(&w.results[0]), stride, resultFlags)
}

// WorkMissing returns how many zones read back had no work, by reason.
func (p *Pool) WorkMissing() (m [timeline.NumWorkMissing]uint64) {
	for i := range m {
		m[i] = p.workMissing[i].Load()
	}
	return m
}
