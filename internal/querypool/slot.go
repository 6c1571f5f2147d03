package querypool

import (
	"cmp"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Pair states: the low stateBits bits of a pair's state word, whose upper
// bits are the generation of the slot that last wrote it, so that an End
// meant for an earlier use of the slot can never touch a later one.
//
// Generations are lazy: recycling a slot bumps its generation and writes
// no pair. A word from an earlier generation than the slot's reads as
// pairOpen in the slot's generation (stateIn), since only pairs below the
// slot's next index are handed out and each of those, when its slot was
// last recycled, was ended, void or unused in the generation it was
// handed out in. So an End meant for a pair handed out now finds a word of
// an earlier generation (or its own, open) and takes it; a stale End
// finds its own generation's word, or a later generation's, and is
// refused. The age of a word is bounded (renew writes every pair once
// every genStamp generations), so the comparison never wraps.
const (
	pairOpen   uint32 = iota // handed out (or not yet), end not written
	pairEnded                // End recorded its end timestamp
	pairVoid                 // abandoned: its end will never be written
	pairEnding               // End is recording its end timestamp now
	pairUnused               // taken by a cursor, never handed out (sealCursors)
)

const (
	genMask   = 1<<genBits - 1     // genBits: guard.h's FS_GEN_BITS
	genStamp  = 1 << (genBits - 2) // renew writes every pair once every genStamp generations
	stateMask = 1<<stateBits - 1
)

func pairWord(gen, st uint32) uint32 { return gen<<stateBits | st }

// older reports whether a word of generation w was written before
// generation g began.
func older(w, g uint32) bool {
	d := (g - w) & genMask
	return d != 0 && d < 1<<(genBits-1)
}

// stateIn returns the state that word w means in generation g: a word of
// an earlier generation is open in g.
func stateIn(w, g uint32) uint32 {
	if older(w>>stateBits, g&genMask) {
		return pairOpen
	}
	return w & stateMask
}

// Slot states.
const (
	slotFree      uint32 = iota // reset (or awaiting a command reset), not in use
	slotRecording               // the current frame's slot: pairs are handed out
	slotClosed                  // its frame ended: waiting for results
	slotReading                 // the reader is reading its results
	slotRecycling               // the reader is harvesting it
	slotSpent                   // harvested; waiting until its frame is FramesInFlight old
	slotResetting               // a readback pass is resetting it on the host
	slotDead                    // the pool is closed
)

// pairMeta is what a pair's user recorded with it.
type pairMeta struct {
	state atomic.Uint32
	name  uint32 // caller's name handle
	cmd   uint64 // the command buffer the pair began in
}

// slotHot is what the zone path's C half reads and writes of a slot
// (guard.h's fsSlotHot): no Go pointers, so that it passes to C as is.
// It lies between the slot's cursors and its first block's pair records,
// in one allocation (slotMem).
type slotHot struct {
	state atomic.Uint32
	gen   atomic.Uint32 // bumped on every recycle; stale Pairs are refused
	qcap  uint32        // the first block's queries (block.cap)
	// frozen: Begin takes Go's path, which hands out the pairs the
	// cursors held (Pool.spare).
	frozen  atomic.Uint32
	qpool   uint64  // the first block's query pool (block.pool)
	writeTS uintptr // the device's vkCmdWriteTimestamp (Pool.writeTS)
	// elsewhere: a pair of the frame was ended in another command
	// buffer than the one it began in (EndIn).
	elsewhere atomic.Bool
	// next is written once a block by every recording thread: a cache
	// line away from the fields every Begin reads, so that taking a
	// block does not take those from the other threads' caches.
	_    [28]byte
	next atomic.Uint32 // next free query index (even)
	_    [60]byte
}

// slotMem makes, in one allocation with no Go pointers, what the zone
// path's C half reaches from a slot's hot fields: its cursors, just
// before them, and the pair records of its first block of the given
// pairs, just after. C may use the whole allocation a pointer passed to
// it points into, so a Begin or End passes the hot fields' address alone.
func slotMem(pairs uint32) (cursors []cursor, hot *slotHot, meta []pairMeta) {
	const unit = unsafe.Sizeof(cursor{})
	const hotUnits = unsafe.Sizeof(slotHot{}) / unit
	metaUnits := (uintptr(max(pairs, 1))*unsafe.Sizeof(pairMeta{}) + unit - 1) / unit
	mem := make([]cursor, cursorSlots+hotUnits+metaUnits)
	hot = (*slotHot)(unsafe.Pointer(&mem[cursorSlots]))
	meta = unsafe.Slice((*pairMeta)(unsafe.Pointer(&mem[cursorSlots+hotUnits])), pairs)
	return mem[:cursorSlots:cursorSlots], hot, meta
}

// cursor is one command buffer's block of a slot's frame (guard.h's
// fsCursor): it hands out pairs [next, end) and takes its next block of
// grow queries. Only the thread recording its command buffer writes it
// during the frame; sealCursors reads it after the frame's end.
type cursor struct {
	cmd             atomic.Uint64
	next, end, grow uint32
	_               [44]byte
}

// sealCursors marks the pairs the frame's cursors took and never handed
// out as unused, once no Begin is in flight (waitBegins), and counts them
// in s.unused.
func (s *Slot) sealCursors() {
	g := s.gen.Load()
	unused := func(q uint32) {
		s.block.meta[q/2].state.Store(pairWord(g, pairUnused))
		s.unused++
	}
	s.takeTails(unused)
	for _, q := range s.spares {
		unused(q)
	}
	s.spares = s.spares[:0]
}

// takeTails empties the cursors, calling fn with the first query of each
// pair they took and did not hand out. No Begin may be using them
// (waitBegins, or frozen and guardSync).
func (s *Slot) takeTails(fn func(q uint32)) {
	for i := range s.cursors {
		c := &s.cursors[i]
		for q := c.next; q < c.end; q += 2 {
			fn(q)
		}
		c.next = c.end
	}
}

// handedOut returns the pairs the slot's frame handed out so far.
func (s *Slot) handedOut() uint32 { return s.usedNow()/2 - s.unused }

// Slot is one frame's query pool. Its exported identity is the pointer;
// callers hold it only inside a Pair.
type Slot struct {
	block      // the first: pool, cap (queries; pairs = cap/2), meta, results, buf
	blocks     // the extra ones of a frame that outgrew the first
	index  int // position in the ring

	*slotHot
	work    *workSlot    // with Config.Stats: its statistics queries
	writers atomic.Int32 // Begin calls in progress on Go's path
	// cursors hand out the pairs of the first block, by command buffer
	// (guard.c); unused is how many pairs they took and never handed out
	// in the frame, once it ended (sealCursors).
	cursors []cursor
	unused  uint32
	spares  []uint32      // pairs the cursors held once frozen, by query (Pool.spare); under Pool.growMu
	refused atomic.Uint64 // Begin calls refused in its frame for want of queries
	frame   uint64        // frame id the slot records
	begun   uint64        // Pool.frames when its frame began
	closed  uint64        // frame counter value when it closed
	dirty   bool          // needs a reset before use (command path)
	// pin: command buffers of its frame (pins of them, under Pool.mu)
	// were submitted again: it is never reset or reused once read back
	// (resubmit.go).
	pin  atomic.Bool
	pins int
	// prev holds the command buffers of its frame before the one it
	// records now, and prevFrame that frame (resubmit.go).
	prev      [cursorSlots]uint64
	prevFrame uint64
	// seen and prevSeen: the first timestamp of each command buffer's
	// zones, as the readback of its frame (and of the frame before it)
	// found it (watch.go).
	seen, prevSeen []seenVal

	// dirtyReset: its frame's reset was recorded in a command buffer, so
	// until the application has waited for the frame its queries may
	// hold the last frame's values.
	dirtyReset bool

	host int64 // Config.Now when its frame began: a hint for conversion

	// subs are the command buffers Submitted named in its frame, with
	// their submission keys, at most MaxSubmitted; submitted says
	// Submitted was called in its frame at all. Guarded by Pool.mu.
	subs      []submission
	submitted bool
	bySub     bool // subs are sorted by command buffer (for the harvest)

	copyAt uint64 // Pool.frames when its last copy was recorded; 0: none
	// settledAt is Pool.frames when every pair of the slot was first seen
	// ended (by EndFrame's copy or a readback pass); 0: not yet. Every
	// end timestamp was recorded by then.
	settledAt uint64
	needCopy  bool // a copy found pairs unwritten: copy again
	// ownCopy: the last copy was recorded by the EndFrame that closed the
	// slot, in the command buffer that began and ended every pair of its
	// frame. Only such a copy tells that what it lacks was never
	// submitted: on lavapipe a copy in a later command buffer, of the
	// same batch or a later one, can run before the earlier one's
	// bottom-of-pipe timestamps land.
	ownCopy  bool
	fromCopy bool // reader: this pass reads the copy, not the driver
	early    bool // reader: Drain reads the copy of a frame not known waited for

	used  uint32     // reader: queries read this pass
	rc    vkg.Result // reader: what the driver said
	stale bool       // reader: given up on this pass
}

// renew starts a new generation: every pair open again, and an End meant
// for an earlier generation refused. It writes no pair (see pairOpen),
// except once every genStamp generations, when it writes every pair of
// every block so that no word is ever genStamp generations old. It waits
// for an End recording now among the first used queries of the frame,
// unless the slot was seen settled (settledAt): then none is.
func (s *Slot) renew(used uint32) {
	old := s.gen.Load()
	if s.settledAt == 0 {
		s.waitEnding(used, old)
	}
	g := s.gen.Add(1)
	if g&(genStamp-1) != 0 {
		return
	}
	s.each(func(b *block) {
		for k := range b.meta {
			st := &b.meta[k].state
			for {
				w := st.Load()
				if w&stateMask == pairEnding {
					runtime.Gosched()
					continue
				}
				if st.CompareAndSwap(w, pairWord(g, pairOpen)) {
					break
				}
			}
		}
	})
}

// waitEnding waits until no pair among the first used queries of the
// frame is ending in generation g: every End that took a pair has
// recorded its timestamp.
func (s *Slot) waitEnding(used, g uint32) {
	s.each(func(b *block) {
		for j, n := uint32(0), b.used(used)/2; j < n; j++ {
			for b.meta[j].state.Load() == pairWord(g&genMask, pairEnding) {
				runtime.Gosched()
			}
		}
	})
}

// quiesce refuses every later Begin and End on s, for the pool's
// release, and waits for those in flight: the Begins first, then an End
// recording its timestamp. It returns the queries the slot's frame handed
// out; its open pairs are void, so that a later End finds none open. The
// generation stays: the pairs' states are still those of the frame, for
// harvestFinal to count (a new generation would read them all as open).
func (s *Slot) quiesce() uint32 {
	s.state.Store(slotDead)
	s.waitBegins()
	s.sealCursors()
	used := s.usedNow()
	s.abandon(used)
	s.waitEnding(used, s.gen.Load())
	return used
}

// waitBegins waits for the Begin calls that may have read s's state
// before the caller changed it: those of the C half (guardSync) and those
// on Go's path.
func (s *Slot) waitBegins() {
	guardSync()
	for s.writers.Load() != 0 {
		runtime.Gosched()
	}
}

// destroy destroys the slot's query pools and host buffers. The blocks
// stay, so that a late End finds its pair's record, and is refused.
func (s *Slot) destroy(dev *vk.Device) {
	s.each(func(b *block) { b.destroy(dev) })
	s.work.destroy(dev)
}

// pairState is the state of a block's pair j in generation g.
func (b *block) pairState(j, g uint32) uint32 { return stateIn(b.meta[j].state.Load(), g) }

// landedState is pairState once no End is recording the pair's timestamp
// (pairEnding): it waits for one under way. A pair no longer open cannot
// become ending again.
func (b *block) landedState(j, g uint32) uint32 {
	for {
		if st := b.pairState(j, g); st != pairEnding {
			return st
		}
		runtime.Gosched()
	}
}

// settled reports whether no pair of the slot's frame is open or ending:
// each has ended or was given up.
func (s *Slot) settled() bool {
	used, ok, g := s.usedNow(), true, s.gen.Load()
	s.each(func(b *block) {
		for j, n := uint32(0), b.used(used)/2; j < n && ok; j++ {
			if st := b.pairState(j, g); st == pairOpen || st == pairEnding {
				ok = false
			}
		}
	})
	return ok
}

// allIn reports whether every pair handed out in the slot's frame began
// in command buffer cmd.
func (s *Slot) allIn(cmd uint64) bool {
	used, ok, g := s.usedNow(), true, s.gen.Load()
	s.each(func(b *block) {
		for j, n := uint32(0), b.used(used)/2; j < n && ok; j++ {
			ok = b.meta[j].cmd == cmd || b.pairState(j, g) == pairUnused
		}
	})
	return ok
}

// abandon voids the open pairs among the first used queries of a slot
// given up, so that a late End records nothing. An End in the pair's own
// command buffer takes it without a locked instruction (see the package
// doc): one that read it open before it was voided may still mark it
// ended, so where it voided any, abandon waits for the Ends in flight
// (guardSync), and each pair's state is final when it returns.
func (s *Slot) abandon(used uint32) {
	g := s.gen.Load()
	voided := false
	s.each(func(b *block) {
		for j, n := uint32(0), b.used(used)/2; j < n; j++ {
			st := &b.meta[j].state
			for w := st.Load(); stateIn(w, g) == pairOpen; w = st.Load() {
				if st.CompareAndSwap(w, pairWord(g, pairVoid)) {
					voided = true
					break
				}
			}
		}
	})
	if voided {
		guardSync()
	}
}

// submission is a command buffer submitted in a slot's frame, and the key
// of its submission.
type submission struct{ cmd, key uint64 }

// keyOf returns the key of the submission that carried command buffer
// cmd in the slot's frame, or 0. The caller holds Pool.mu.
func (s *Slot) keyOf(cmd uint64) uint64 {
	subs := s.subs
	if len(subs) <= 8 {
		for _, x := range subs {
			if x.cmd == cmd {
				return x.key
			}
		}
		return 0
	}
	if !s.bySub {
		// Stable: the first submission of a command buffer named twice wins.
		slices.SortStableFunc(subs, func(a, b submission) int { return cmp.Compare(a.cmd, b.cmd) })
		s.bySub = true
	}
	i, ok := slices.BinarySearchFunc(subs, cmd, func(x submission, c uint64) int { return cmp.Compare(x.cmd, c) })
	if !ok {
		return 0
	}
	return subs[i].key
}
