package querypool

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/framescope/framescope/internal/offload"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// Config sizes a Pool. Zero fields take the defaults shown.
type Config struct {
	// ValidBits is timestampValidBits of the queue's family (1..64).
	ValidBits uint32
	// FramesInFlight is how far the application lets the GPU run behind:
	// by the time it begins frame N it has waited for the work of frame
	// N-FramesInFlight (its fences), N counting the application's frames
	// (BeginFrame's and Advance's), not the pool's. A slot is reset for
	// reuse only then, so no reset ever races the GPU or the validation
	// layer's view of it. Default 3.
	FramesInFlight int
	// Slots is the initial ring size. Default FramesInFlight+1.
	Slots int
	// MaxSlots bounds the ring when the GPU falls behind. Default 2*Slots.
	MaxSlots int
	// Queries per slot at first (two per zone). Default 512.
	Queries uint32
	// MaxQueries bounds a slot's growth. Default 32768.
	MaxQueries uint32
	// NoCopy ignores EndFrame's command buffer: results are read through
	// vkGetQueryPoolResults on the reader goroutine: for transfer-only
	// queues, which may not record vkCmdCopyQueryPoolResults.
	NoCopy bool
	// Now, when set, is read when a frame begins: Result.Host carries it.
	Now func() int64
	// StaleFrames: a slot whose results are still incomplete this many
	// frames after it closed is given up; what it lacked is counted
	// (Unended, Unwritten). Default 64. A slot whose pairs have all ended
	// is given up sooner, as soon as its readback shows the GPU cannot
	// still write what is missing (a command buffer never submitted): read
	// from a copy recorded after the last End, or FramesInFlight frames
	// after the last End was seen.
	StaleFrames uint64
	// Stats are the pipeline statistics zones count (BeginWork, EndWork);
	// 0: none, and no statistics queries are made. The device must have
	// the pipelineStatisticsQuery feature enabled, and the queue's family
	// graphics operations for the graphics statistics and compute for
	// ComputeShaderInvocations.
	Stats timeline.PipelineStats
}

// Limits of Config.
const (
	MaxFramesInFlight = 64
	MaxQueries        = 1 << 16
	MaxStaleFrames    = 1 << 16
)

func (c *Config) fill() error {
	if c.ValidBits == 0 || c.ValidBits > 64 {
		return fmt.Errorf("querypool: timestampValidBits %d: the queue family has no usable timestamps", c.ValidBits)
	}
	switch {
	case c.FramesInFlight < 0 || c.FramesInFlight > MaxFramesInFlight:
		return fmt.Errorf("querypool: FramesInFlight %d: must be 1 to %d", c.FramesInFlight, MaxFramesInFlight)
	case c.Queries > MaxQueries || c.MaxQueries > MaxQueries:
		return fmt.Errorf("querypool: Queries %d, MaxQueries %d: at most %d", c.Queries, c.MaxQueries, MaxQueries)
	case c.StaleFrames > MaxStaleFrames:
		return fmt.Errorf("querypool: StaleFrames %d: at most %d", c.StaleFrames, MaxStaleFrames)
	case c.Slots < 0 || c.MaxSlots < 0 || c.Slots > 4*MaxFramesInFlight || c.MaxSlots > 4*MaxFramesInFlight:
		return fmt.Errorf("querypool: Slots %d, MaxSlots %d: at most %d", c.Slots, c.MaxSlots, 4*MaxFramesInFlight)
	}
	if c.Stats&^timeline.AllPipelineStats != 0 {
		return fmt.Errorf("querypool: Stats %#x: only the %d statistics of Vulkan 1.0 (%#x)", uint32(c.Stats), timeline.NumPipelineStats, uint32(timeline.AllPipelineStats))
	}
	if c.FramesInFlight == 0 {
		c.FramesInFlight = 3
	}
	if c.Slots == 0 {
		c.Slots = c.FramesInFlight + 1
	}
	if c.MaxSlots < c.Slots {
		c.MaxSlots = min(2*c.Slots+2, 4*MaxFramesInFlight)
	}
	if c.Queries == 0 {
		c.Queries = 512
	}
	if c.MaxQueries == 0 {
		c.MaxQueries = 32768
	}
	c.Queries += c.Queries & 1 // MaxQueries is even: no overflow
	c.MaxQueries += c.MaxQueries & 1
	if c.Queries > c.MaxQueries {
		c.Queries = c.MaxQueries
	}
	if c.StaleFrames == 0 {
		c.StaleFrames = 64
	}
	return nil
}

// Stats counts what a Pool did, and everything it could not do.
type Stats struct {
	Pairs       uint64 // pairs handed out
	Collected   uint64 // pairs read back complete
	QueryLimit  uint64 // refused: the frame's slot was full
	NoFrame     uint64 // refused: no frame begun, or no free slot (GPU too far behind)
	Closed      uint64 // refused: the pool was closed
	Unended     uint64 // begun but never ended before the slot was given up
	Unsubmitted uint64 // ended, but the GPU never wrote them (command buffer not submitted)
	LateEnds    uint64 // ended after their slot was given up or the pool closed
	Misuse      uint64 // End twice, End of a zero Pair
	// Pending counts pairs ended whose results were not available when
	// the pool finished (Finish): never submitted, or not yet run.
	Pending uint64
	// Overlapped counts the pairs of recordings' executions that ran
	// beside another execution of the same recording (simultaneous use):
	// their values cannot be told apart.
	Overlapped uint64
	// Abandoned counts the pairs of recordings the application reset
	// before they ended: they never run.
	Abandoned uint64
	// Resubmitted counts command buffers named to Submitted with zones in
	// an earlier frame's slot and none in the frame's: submitted again
	// without being recorded again (their slot pinned, resubmit.go), or
	// recorded again without zones.
	Resubmitted uint64
	// ResubmittedPairs counts the pairs of those command buffers'
	// executions after the first: counted in Pairs, and lost, for their
	// timestamps are written into queries not reset and never read.
	ResubmittedPairs uint64
	Grown            uint64 // slots recreated larger
	// Extended counts query pools made in a frame for the zones its slot
	// had no room for (host query reset only).
	Extended uint64
	Behind   uint64 // frames that found no free slot
}

// Errors from BeginFrame and Collect.
var (
	ErrClosed       = errors.New("querypool: pool is closed")
	ErrNoFreeSlot   = errors.New("querypool: no free slot for this frame; its zones are dropped and counted")
	ErrNeedResetCmd = errors.New("querypool: hostQueryReset is off: BeginFrame needs a command buffer to record the reset into")
)

// Result is one complete pair read back.
type Result struct {
	Frame uint64
	Host  int64  // Config.Now when the frame began; 0 without Now
	Name  uint32 // the caller's name handle
	Seq   uint32 // the pair's index in its frame, in Begin order
	Cmd   uint64 // the command buffer the pair began in
	Begin uint64 // device ticks, masked to ValidBits
	End   uint64
	// Key is the key Submitted gave the pair's command buffer in its
	// frame; 0 when none did. Submitted says whether Submitted was
	// called in its frame at all.
	Key       uint64
	Submitted bool
	// Carried marks a zone carried from one recording to a later one
	// (EndRecordingCarry): Cmd is 0, Seq 0, Frame, Host, Key and Queue
	// its begin's execution's.
	Carried bool
	// Queue is the queue a recording's execution ran on (SubmitOn); 0,
	// the pool's own, for every other pair.
	Queue uint32
	// Work is the pair's work, with Config.Stats; nil without.
	Work *timeline.Work
}

// MaxSubmitted bounds the command buffers Submitted records for one
// frame; the zones of those past it have no key.
const MaxSubmitted = 4096

// Pool is a ring of per-frame query pools for one queue.
type Pool struct {
	dev  *vk.Device
	cfg  Config
	mask uint64

	cur atomic.Pointer[Slot] // the recording slot; nil between frames

	mu      sync.Mutex // ring management; never taken by Begin or End
	ring    []*Slot
	retired []*Slot // replaced by larger slots; destroyed by Release
	// Pins (resubmit.go): the slots pinned out of the ring, how many are
	// pinned in all, and the command buffers submitted again without
	// being recorded again, until they are, with the slot pinned for each
	// (nil: none, MaxPinned reached).
	pinned  []*Slot
	npinned int
	again   map[uint64]againCmd
	// frames is the application's frame clock: the newest frame it has
	// begun, as BeginFrame and Advance were told. FramesInFlight counts
	// in it, so a queue that records in few of the application's frames
	// has its results read as soon as the application has waited for
	// their frame, not FramesInFlight of its own frames later.
	frames  uint64
	wantCap uint32
	closed  atomic.Bool
	order   []*Slot  // reader's scratch
	copies  []*Slot  // EndFrame's scratch
	ready   []Result // harvested, not yet collected
	// Recordings' executions handed to Collect (deferred.go), their
	// zones' words, and the other list and slab, while a Collect makes
	// results of one; deferredN counts their zones.
	deferred, deferredSpare []deferredRun
	slab, slabSpare         []uint64
	deferredN               int
	handovers               uint64 // executions handed over, for tests
	// readFirst: a Submit names a command buffer submitted again whose
	// zones are in a slot not read yet, which it reads first.
	readFirst bool
	readErr   error
	uncopied  bool // closed slots without a copy: the reader has work
	// resetWanted says spent slots wait for the reader to reset them.
	resetWanted bool
	// readyHigh is the most results a Collect took at once: KeepRoom
	// keeps room in ready for twice that.
	readyHigh int
	took      Books // at the last take (Took)

	resetMu sync.Mutex // one resetDue at a time
	resets  []*Slot    // resetDue's scratch; guarded by resetMu
	// resetCost is resetDue's time and queries; added to under resetMu.
	resetCost offload.Cost

	readMu sync.Mutex    // one readback pass at a time
	wake   chan struct{} // Collect -> reader
	done   chan struct{} // closed when the reader exits

	life     sync.Mutex // Close and the device's close, one at a time
	stopped  bool       // the reader is stopped, nothing reads any more
	released bool       // the query pools are destroyed
	unreg    func()     // leaves the device's list of users

	lastRead  uint64 // p.frames at the last readback pass
	lastFrame uint64 // the frame id of the last BeginFrame
	finished  bool   // Finish ran

	growMu sync.Mutex // one Begin at a time makes a slot's extra blocks

	// writeTS is the device's vkCmdWriteTimestamp, which the zone path's
	// C half calls.
	writeTS uintptr

	pairs, collected, queryLimit, noFrame, unended, unsubmitted atomic.Uint64
	grown, behind, pending, extended, refusedClosed             atomic.Uint64
	refusedEnds                                                 endRefusals

	// Recordings (recording.go): by command buffer, under mu; nrecs is
	// their number, for Submit; open, the slots of those recording now,
	// for Begin; running, those with an execution not read yet.
	recs    map[uint64]*recording
	nrecs   atomic.Int32
	open    atomic.Pointer[map[uint64]*openSlot]
	running []*recording
	// takenIdle counts the recordings begun on the slot of one whose
	// command buffer was reset (takeIdleLocked).
	takenIdle uint64
	// Carried zones (carried.go), under mu: each queue's stack of them
	// (SubmitOn's numbering), those not yet settled (and some settled,
	// pruned now and then), and how many are not.
	carryStacks map[uint32][]*carried
	carryLive   []*carried
	carryOpen   int
	// over are the command buffers whose recording was refused
	// (overrec.go); nover their number, for Submit.
	over        map[uint64]*overRec
	nover       atomic.Int32
	overlapped  atomic.Uint64
	abandoned   atomic.Uint64
	resubmitted atomic.Uint64
	// resubmittedPairs: the pairs of executions submitted again (Stats).
	resubmittedPairs atomic.Uint64
	// refusedIn marks command buffers with a zone refused since their
	// last Submit (resubmit.go).
	refusedIn [refusedMarks]atomic.Uint64
	// watches are the command buffers submitted again whose timestamps
	// EndFrame copies to watchBuf (watch.go); nwatch of them in use.
	watches  []watch
	nwatch   int
	watchBuf *vk.HostBuffer

	// chains are the command buffers counting work (Config.Stats).
	chains [maxChains]chain
	// queries are the command buffers in which the application's own
	// statistics query is active (BeforeQuery), 0 where free;
	// queriesOver, those past them; queriesOn, all of them.
	queries                [maxChains]atomic.Uint64
	queriesOver, queriesOn atomic.Int32
	scratch                workScratch // the harvest's; guarded by mu
	workMissing            [timeline.NumWorkMissing]atomic.Uint64
}

// endRefusals counts the Ends refused, by cause: late (the pair was given
// up, its slot recycled, or the pool closed) and misuse (ended already, or
// the zero Pair). The zone path's C half counts into it (FS_END_LATE,
// FS_END_MISUSE).
type endRefusals struct {
	late, misuse atomic.Uint64
}

// New creates a Pool on dev. Closing dev closes the pool first (see
// vk.Device.OnClose): it is refused from then on, like after Close.
func New(dev *vk.Device, cfg Config) (*Pool, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	p := &Pool{dev: dev, cfg: cfg, wantCap: cfg.Queries,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	initGuard()
	if p.writeTS = dev.WriteTimestampProc(); p.writeTS == 0 {
		return nil, fmt.Errorf("querypool: the device has no vkCmdWriteTimestamp")
	}
	p.mask = ^uint64(0)
	if cfg.ValidBits < 64 {
		p.mask = 1<<cfg.ValidBits - 1
	}
	// The slots are made under p.life, after the pool is on the device's
	// list: a Close of the device that comes meanwhile waits for them
	// (its deviceStop takes p.life), then destroys them.
	p.life.Lock()
	unreg, err := dev.OnClose(p.deviceStop, p.deviceRelease)
	if err != nil {
		p.life.Unlock()
		return nil, fmt.Errorf("querypool: %w", err)
	}
	p.unreg = unreg
	go p.reader()
	for i := 0; i < cfg.Slots; i++ {
		s, err := p.newSlot(i, cfg.Queries)
		if err != nil {
			p.life.Unlock()
			p.Close()
			return nil, err
		}
		p.mu.Lock()
		p.ring = append(p.ring, s)
		p.mu.Unlock()
	}
	p.life.Unlock()
	return p, nil
}

// Config returns the pool's configuration with defaults filled in.
func (p *Pool) Config() Config { return p.cfg }

// Mask returns the mask applied to every value read back.
func (p *Pool) Mask() uint64 { return p.mask }

// newSlot makes a slot of the given number of queries: its VkQueryPool,
// reset on the host where it can be, and its host copy. A slot is never
// resized: a larger one replaces it (see BeginFrame), so that a late End
// holding the old one reads fields nothing writes any more.
func (p *Pool) newSlot(index int, queries uint32) (*Slot, error) {
	cursors, hot, meta := slotMem(queries / 2)
	b, err := newBlock(p.dev, 0, queries, p.dev.HostQueryReset, meta)
	if err != nil {
		return nil, err
	}
	s := &Slot{block: *b, slotHot: hot, cursors: cursors, index: index, dirty: !p.dev.HostQueryReset}
	if p.cfg.Stats != 0 {
		if s.work, err = newWorkSlot(p.dev, p.cfg.Stats, queries, p.dev.HostQueryReset); err != nil {
			b.destroy(p.dev)
			return nil, err
		}
		s.block.work = make([]zoneWork, queries/2)
	}
	s.qcap, s.qpool, s.writeTS = b.cap, uint64(uintptr(unsafe.Pointer(b.pool))), p.writeTS
	s.spares = make([]uint32, 0, cursorSlots*cursorBlock/2)
	s.limit = queries
	if p.dev.HostQueryReset {
		s.limit = max(queries, p.cfg.MaxQueries)
	}
	return s, nil
}

// resetHost resets on the host the queries of every block of s that its
// last frame wrote: those it handed out, the only ones a frame writes.
func (p *Pool) resetHost(s *Slot) error {
	var err error
	s.each(func(b *block) {
		if b.written == 0 {
			return
		}
		if e := p.dev.ResetQueryPool(b.pool, 0, b.written); e != nil {
			err = cmp.Or(err, e)
			return
		}
		b.written = 0
	})
	if w := s.work; w != nil && w.written > 0 {
		if e := p.dev.ResetQueryPool(w.pool, 0, w.written); e != nil {
			return cmp.Or(err, e)
		}
		w.written = 0
	}
	return err
}

// BeginFrame starts recording frame into a free slot, ending the previous
// frame if EndFrame was not called. Without hostQueryReset, cmd must be a
// command buffer in the recording state, outside a render pass, that the
// queue executes before any zone of this frame: the slot's reset is
// recorded into it. With hostQueryReset, cmd is ignored and may be nil.
//
// On ErrNoFreeSlot or ErrNeedResetCmd the frame has no slot: its zones are
// refused and counted in Stats.NoSlot, and nothing else goes wrong.
func (p *Pool) BeginFrame(frame uint64, cmd vkg.CommandBuffer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return ErrClosed
	}
	p.endFrameLocked()
	p.advanceLocked(frame)
	p.lastFrame = frame
	s, err := p.pickSlotLocked()
	if err != nil {
		return err
	}
	if s == nil {
		p.behind.Add(1)
		return p.noSlotError()
	}
	if s.cap < p.wantCap {
		n, err := p.newSlot(s.index, p.wantCap)
		if err != nil {
			return err
		}
		// The old slot is kept until Release: a command buffer the
		// application still has in flight may copy from it.
		s.state.Store(slotDead) // a Begin still holding it refuses
		p.retired = append(p.retired, s)
		p.ring[s.index] = n
		s = n
		p.grown.Add(1)
	}
	s.dirtyReset = s.dirty
	if s.dirty {
		if cmd == nil {
			return ErrNeedResetCmd
		}
		p.dev.CmdResetQueryPool(cmd, s.pool, 0, s.cap)
		if s.work != nil {
			p.dev.CmdResetQueryPool(cmd, s.work.pool, 0, s.work.cap)
		}
		s.dirty = false
	}
	s.keepPrev()
	s.frame = frame
	s.host = 0
	if p.cfg.Now != nil {
		s.host = p.cfg.Now()
	}
	s.subs, s.submitted, s.bySub = s.subs[:0], false, false
	s.elsewhere.Store(false)
	s.begun = p.frames
	s.copyAt = 0
	s.settledAt = 0
	s.needCopy = false
	s.next.Store(0)
	if s.work != nil {
		s.work.next.Store(0)
	}
	s.unused = 0
	clear(s.cursors) // no Begin holds one: the slot was not recording
	s.spares = s.spares[:0]
	s.frozen.Store(0)
	s.refused.Store(0)
	s.state.Store(slotRecording)
	p.cur.Store(s)
	return nil
}

// pickSlotLocked finds the slot for a new frame: a free one; else a new
// one, while the ring is below MaxSlots; else a spent one whose frame the
// application has waited for, reset here; else one the pool's goroutine
// is resetting, once it is done. A new slot comes before a reset here:
// Collect leaves resets to the pool's goroutine, and a frame begun just
// after a Collect would otherwise do that reset itself, every frame. nil
// when every slot is in use (the GPU or the application is behind). The
// caller holds p.mu.
func (p *Pool) pickSlotLocked() (*Slot, error) {
	// The free slot used longest ago: a command buffer of its frame
	// submitted again, which the application may do once it has waited
	// for the frame (one command buffer per frame in flight), is then
	// named by a Submit before the slot is given to another frame, and
	// the slot is pinned in time (resubmit.go).
	var free *Slot
	for _, c := range p.ring {
		if c.state.Load() == slotFree && (free == nil || c.begun < free.begun) {
			free = c
		}
	}
	if free != nil {
		return free, nil
	}
	if len(p.ring) < p.cfg.MaxSlots {
		n, err := p.newSlot(len(p.ring), p.wantCap)
		if err != nil {
			return nil, err
		}
		p.ring = append(p.ring, n)
		return n, nil
	}
	// vkResetQueryPool does not wait: a spent slot can be reset here
	// rather than by the pool's goroutine.
	var spent *Slot // the one used longest ago, as above
	for _, c := range p.ring {
		if c.state.Load() == slotSpent && p.frames-c.begun >= uint64(p.cfg.FramesInFlight) && (spent == nil || c.begun < spent.begun) {
			spent = c
		}
	}
	if c := spent; c != nil {
		if p.dev.HostQueryReset {
			if err := p.resetHost(c); err != nil {
				return nil, err
			}
			c.dirty = false
		}
		c.state.Store(slotFree)
		return c, nil
	}
	return p.awaitReset(), nil
}

// awaitReset waits for a slot that a readback pass on another goroutine
// (a Collect, a Drain, the pool's own) is resetting on the host, and
// returns it, free; nil when none is being reset. The reset was due: the
// application has waited for the slot's frame, so BeginFrame would have
// reset it itself. The caller holds p.mu, which a pass does not take to
// free a slot it reset.
func (p *Pool) awaitReset() *Slot {
	for _, c := range p.ring {
		if c.state.Load() != slotResetting {
			continue
		}
		for c.state.Load() == slotResetting {
			runtime.Gosched()
		}
		if c.state.Load() == slotFree {
			return c
		}
	}
	return nil
}

// Advance tells the pool that the application has begun frame (by then it
// has waited for frame-FramesInFlight's GPU work). BeginFrame does it for
// its own frame; Advance is for frames in which the pool records nothing.
// The clock never goes back.
func (p *Pool) Advance(frame uint64) {
	p.mu.Lock()
	p.advanceLocked(frame)
	p.mu.Unlock()
}

func (p *Pool) advanceLocked(frame uint64) {
	p.frames = max(p.frames, frame)
}

// EndFrame closes the current frame's slot: no more pairs are handed out
// from it. With a command buffer (recording, outside a render pass, the
// last the queue runs in this frame), it records the copy of the frame's
// results into host memory there, so that Collect reads them without any
// driver call once the application has waited for the frame; earlier
// frames still missing results are copied again. Without one, results are
// read through vkGetQueryPoolResults on the pool's reader goroutine, which
// some drivers (lavapipe) make wait for the device to go idle.
func (p *Pool) EndFrame(cmd vkg.CommandBuffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	closing := p.cur.Load()
	p.endFrameLocked()
	if cmd != nil && p.cfg.Stats != 0 {
		p.endCounts(cmd)
	}
	if cmd != nil && !p.cfg.NoCopy {
		p.recordCopies(cmd, closing)
		if closing != nil {
			p.recordWatches(cmd, closing.frame)
		}
	}
}

// recordCopies records, into cmd, the copy of every closed slot not yet
// copied (or whose copy came back incomplete). A barrier first makes the
// copy wait for all earlier work on the queue, so every timestamp written
// by command buffers submitted before cmd is in the copy; a second one
// makes the copy visible to the host once the frame's fence signals.
func (p *Pool) recordCopies(cmd vkg.CommandBuffer, closing *Slot) {
	p.copies = p.copies[:0]
	for _, s := range p.ring {
		if s.state.Load() != slotClosed || (s.copyAt != 0 && !s.needCopy) {
			continue
		}
		s.copyAt, s.needCopy = p.frames, false
		s.ownCopy = s == closing && !s.elsewhere.Load() && s.allIn(uint64(uintptr(unsafe.Pointer(cmd))))
		if s.settledAt == 0 && s.writers.Load() == 0 && s.settled() {
			s.settledAt = p.frames // every end is recorded before this copy
		}
		if s.usedNow() > 0 {
			p.copies = append(p.copies, s)
		}
	}
	first := true
	for i, s := range p.copies {
		used := s.usedNow()
		last := i == len(p.copies)-1
		wr, wk := p.workRanges(s, cmd)
		s.each(func(b *block) {
			if n := b.used(used); n > 0 {
				p.dev.CmdCopyQueries(cmd, b.pool, 0, n, b.buf.Buffer, first, last && wk == 0 && b.base+n == used)
				first = false
			}
		})
		for j, r := range wr[:wk] {
			p.dev.CmdCopyStats(cmd, s.work.pool, r[0], r[1]-r[0], s.work.n, s.work.buf.Buffer, first, last && j == wk-1)
			first = false
		}
	}
}

func (p *Pool) endFrameLocked() {
	s := p.cur.Load()
	if s == nil {
		return
	}
	p.cur.Store(nil)
	s.closed = p.frames
	s.state.Store(slotClosed)
	// A Begin that saw the slot recording may still be taking a pair:
	// count them once they are all taken.
	s.waitBegins()
	s.sealCursors()
	p.pairs.Add(uint64(s.handedOut()))
	if r := s.refused.Load(); r > 0 || s.size() > s.cap {
		want := uint64(s.size()) + 2*r // what the frame asked for
		if want > uint64(p.cfg.MaxQueries) {
			want = uint64(p.cfg.MaxQueries)
		}
		want = 1 << bits.Len64(want-1) // round up to a power of two
		if want > uint64(p.cfg.MaxQueries) {
			want = uint64(p.cfg.MaxQueries)
		}
		if uint32(want) > p.wantCap {
			p.wantCap = uint32(want)
		}
	}
}

// Submit notes one submission of cmds under key, under one hold of the
// pool's lock, so that no readback and no account (Took, Account) sees
// half of it: the recordings among cmds each get an execution in the
// application's frame last, and the pairs begun in cmds in frame get the
// key (Result.Key). It returns how many of cmds it could not note in
// frame: the frame has no slot (its zones were refused), or it already
// has MaxSubmitted.
func (p *Pool) Submit(last, frame, key uint64, cmds []vkg.CommandBuffer) (missed int) {
	return p.SubmitOn(last, frame, key, 0, cmds)
}

// SubmitOn is Submit for a submission to queue, as the caller numbers
// the queues that run the pool's command buffers: 0 is the pool's own.
// The recordings' executions it names are that queue's: their results
// say it (Result.Queue), and the zones they carry across command buffers
// pair on it. Where cmds hold a command buffer submitted again whose
// zones lie in a slot not read yet, it reads the slots due through the
// driver first, on the calling goroutine, before the new execution
// writes them again.
func (p *Pool) SubmitOn(last, frame, key uint64, queue uint32, cmds []vkg.CommandBuffer) (missed int) {
	p.mu.Lock()
	p.executedLocked(last, key, queue, cmds)
	missed = p.submittedLocked(frame, key, cmds)
	first := p.readFirst
	p.readFirst = false
	p.mu.Unlock()
	if first { // a command buffer submitted again would overwrite a slot not read (againLocked)
		p.readMu.Lock()
		p.readPass(readDriver)
		p.readMu.Unlock()
	}
	return missed
}

// submittedLocked is Submit's note of frame's pairs. The caller holds
// p.mu.
func (p *Pool) submittedLocked(frame, key uint64, cmds []vkg.CommandBuffer) (missed int) {
	p.pinResubmittedLocked(frame, cmds)
	var s *Slot
	for _, c := range p.ring {
		if c.frame == frame {
			switch c.state.Load() {
			case slotRecording, slotClosed:
				s = c
			}
		}
	}
	if s == nil {
		return len(cmds)
	}
	s.submitted = true
	for i, c := range cmds {
		if len(s.subs) >= MaxSubmitted {
			return len(cmds) - i
		}
		s.subs = append(s.subs, submission{cmd: uint64(uintptr(unsafe.Pointer(c))), key: key})
		s.bySub = false
	}
	return 0
}

// Pair is a handed-out begin/end query pair. The zero Pair is valid and
// does nothing but count misuse when ended.
type Pair struct {
	s   *Slot
	q   uint32
	gen uint32
}

// record returns the block that holds the pair (handed out: s is set)
// and the pair's record in it.
func (pr Pair) record() (*block, *pairMeta) {
	b := pr.s.blockOf(pr.q)
	return b, &b.meta[(pr.q-b.base)/2]
}

// Valid reports whether the pair was handed out.
func (pr Pair) Valid() bool { return pr.s != nil }

// Begin hands out a pair in the current frame's slot and records its begin
// timestamp into cmd at stage. It never blocks and never allocates; it
// returns false, counting why, when no pair is available.
func (p *Pool) Begin(cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, name uint32) (Pair, bool) {
	s := p.cur.Load()
	if rs, ok := p.openOf(cmdKey(cmd)); ok { // a recording's
		if rs == nil {
			return p.refuseOver(cmd)
		}
		s = rs
	}
	if s == nil {
		return p.refuseNoFrame(cmd)
	}
	r := beginC(s, cmd, stage, name)
	if r < 0 {
		return p.beginRefused(r, s, cmd, stage, name)
	}
	return Pair{s: s, q: uint32(r), gen: uint32(r >> 32)}, true
}

// beginRefused is Begin where the C half refused (cBeginNoFrame) or
// left the pair to Go's path (cBeginSlow).
func (p *Pool) beginRefused(r int64, s *Slot, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, name uint32) (Pair, bool) {
	if r == cBeginNoFrame {
		return p.refuseNoFrame(cmd)
	}
	return p.beginSlow(s, cmd, stage, name)
}

// beginSlow is Begin's path for a pair past the slot's first block (the
// frame grows, or the cursors were frozen), or for a thread the C half
// could not give a guard record: Begins in flight are counted in
// s.writers.
func (p *Pool) beginSlow(s *Slot, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits, name uint32) (Pair, bool) {
	s.writers.Add(1)
	if s.state.Load() != slotRecording {
		s.writers.Add(-1)
		return p.refuseNoFrame(cmd)
	}
	q, ok := p.spare(s)
	if !ok {
		// The load keeps next from counting on past the limit (and
		// wrapping) however many zones a frame is refused: it overshoots
		// by at most two a concurrent Begin.
		if s.next.Load() >= s.limit {
			return p.refuse(s, cmd)
		}
		q = s.next.Add(2) - 2
	}
	b := &s.block
	if q >= s.cap {
		// Past the first block: with host query reset, the frame grows
		// (a new query pool, made here once per doubling).
		if q >= s.limit || !p.extend(s, q) {
			return p.refuse(s, cmd)
		}
		b = s.blockOf(q)
	}
	m := &b.meta[(q-b.base)/2]
	m.name = name
	m.cmd = uint64(uintptr(unsafe.Pointer(cmd)))
	gen := s.gen.Load()
	p.dev.CmdWriteTimestamp(cmd, stage, b.pool, q-b.base)
	s.writers.Add(-1)
	return Pair{s: s, q: q, gen: gen}, true
}

// spare hands out a pair of the first block that a cursor took and did
// not hand out, once the block has no other left: the first call of the
// frame freezes the cursors (Begin takes Go's path from then on), waits
// for the Begins in flight, and moves what they hold to s.spare. So a
// frame whose zones fit the first block never grows for the cursors'
// sake. False when none is left.
func (p *Pool) spare(s *Slot) (uint32, bool) {
	p.growMu.Lock()
	defer p.growMu.Unlock()
	if s.frozen.Load() == 0 {
		s.frozen.Store(1)
		guardSync()
		s.takeTails(func(q uint32) { s.spares = append(s.spares, q) })
	}
	n := len(s.spares)
	if n == 0 {
		return 0, false
	}
	q := s.spares[n-1]
	s.spares = s.spares[:n-1]
	return q, true
}

// End records the pair's end timestamp into cmd at stage: the command
// buffer Begin used, or a later one on the same queue. Ending a pair twice,
// ending the zero Pair, or ending after the slot was given up records
// nothing and is counted; End reports whether it recorded.
func (p *Pool) End(pr Pair, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits) bool {
	s := pr.s
	if s == nil {
		p.refusedEnds.misuse.Add(1)
		return false
	}
	// The pair is ending while its timestamp is recorded: nothing renews
	// the slot (Slot.renew) or destroys its pool (Release) until it has
	// ended.
	b, m := pr.record()
	return endC(m, pr.gen, cmd, stage, b.pool, pr.q+1-b.base, s, &p.refusedEnds)
}

// EndQuiet is End for a caller that needs no answer: it records and
// counts the same, a little cheaper.
func (p *Pool) EndQuiet(pr Pair, cmd vkg.CommandBuffer, stage vkg.PipelineStageFlagBits) {
	s := pr.s
	if s == nil {
		p.refusedEnds.misuse.Add(1)
		return
	}
	if pr.q < s.qcap {
		endFirstC(s, pr.q, pr.gen, cmd, stage, &p.refusedEnds)
		return
	}
	b, m := pr.record()
	endQuietC(m, pr.gen, cmd, stage, b.pool, pr.q+1-b.base, s, &p.refusedEnds)
}

// refuse counts a Begin refused for a full slot, and how much more the
// frame asked for. The caller incremented s.writers.
func (p *Pool) refuse(s *Slot, cmd vkg.CommandBuffer) (Pair, bool) {
	p.markRefused(cmd)
	s.refused.Add(1)
	s.writers.Add(-1)
	p.queryLimit.Add(1)
	return Pair{}, false
}

// refuseNoFrame counts a Begin that found no frame recording: because the
// pool is closed, or because no frame was begun (or found a free slot).
func (p *Pool) refuseNoFrame(cmd vkg.CommandBuffer) (Pair, bool) {
	p.markRefused(cmd)
	if p.closed.Load() {
		p.refusedClosed.Add(1)
	} else {
		p.noFrame.Add(1)
	}
	return Pair{}, false
}

// noSlotError says why BeginFrame found no free slot. The caller holds p.mu.
func (p *Pool) noSlotError() error {
	var oldest uint64
	for _, s := range p.ring {
		if st := s.state.Load(); st == slotClosed && (oldest == 0 || s.closed < oldest) {
			oldest = s.closed
		}
	}
	f := uint64(p.cfg.FramesInFlight)
	switch {
	case p.frames-p.lastRead > f+1:
		return fmt.Errorf("%w: no readback for %d frames: call Collect every frame", ErrNoFreeSlot, p.frames-p.lastRead)
	case oldest != 0 && p.frames-oldest >= f:
		return fmt.Errorf("%w: the results of frame %d are still not complete %d frames on: is the application more than FramesInFlight (%d) frames ahead of the GPU?", ErrNoFreeSlot, oldest, p.frames-oldest, f)
	}
	return fmt.Errorf("%w: all %d slots are in use", ErrNoFreeSlot, len(p.ring))
}

// Stats returns the counters so far.
func (p *Pool) Stats() Stats {
	return Stats{
		Pairs: p.pairs.Load(), Collected: p.collected.Load(), QueryLimit: p.queryLimit.Load(),
		NoFrame: p.noFrame.Load(), Closed: p.refusedClosed.Load(), Unended: p.unended.Load(), Unsubmitted: p.unsubmitted.Load(),
		LateEnds: p.refusedEnds.late.Load(), Misuse: p.refusedEnds.misuse.Load(), Grown: p.grown.Load(), Behind: p.behind.Load(),
		Pending: p.pending.Load(), Extended: p.extended.Load(), Overlapped: p.overlapped.Load(), Abandoned: p.abandoned.Load(),
		Resubmitted: p.resubmitted.Load(), ResubmittedPairs: p.resubmittedPairs.Load(),
	}
}

// Account returns the counters and, counted from the slots at the same
// moment, the pairs in flight: counted in Pairs (their frame ended) and
// neither read back nor given up yet. By construction
// Pairs = inFlight + Collected + Unended + Unwritten + Pending + Overlapped; ready is
// how many of Collected wait in the pool for Collect to take them.
func (p *Pool) Account() (st Stats, inFlight, ready uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accountLocked()
}

// Books is the pool's account (Account) and how far its frames have
// settled (settledLocked), taken at one moment.
type Books struct {
	Stats           Stats
	InFlight, Ready uint64
	Settled         uint64
}

// Took returns the pool's books as they were when the last Collect, Drain
// or Finish took its results, in the same hold of the pool's lock: with
// what that call returned, they account for every pair, though the
// application submits meanwhile.
func (p *Pool) Took() Books {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.took
}

// tookLocked keeps the books of a take, for Took. The caller holds p.mu.
func (p *Pool) tookLocked() {
	b := &p.took
	b.Stats, b.InFlight, b.Ready = p.accountLocked()
	b.Settled = p.settledLocked()
}

// accountLocked is Account for a caller holding p.mu.
func (p *Pool) accountLocked() (st Stats, inFlight, ready uint64) {
	for _, s := range p.ring {
		switch s.state.Load() {
		case slotClosed, slotReading, slotRecycling:
			inFlight += uint64(s.handedOut())
		}
	}
	runs, _ := p.runsInFlight()
	return p.Stats(), inFlight + runs + uint64(p.carryOpen), uint64(len(p.ready) + p.deferredN)
}

// Slots returns the ring's size and each slot's capacity in queries.
func (p *Pool) Slots() []uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]uint32, len(p.ring))
	for i, s := range p.ring {
		out[i] = s.cap
	}
	return out
}

// Close stops the pool (Stop) and destroys its query pools (Release),
// counting what it had not read back. To read what the GPU has finished
// first, call Stop and Finish before it. Later calls to any method are
// safe: they are refused and counted.
func (p *Pool) Close() {
	p.life.Lock()
	defer p.life.Unlock()
	if p.unreg != nil {
		p.unreg()
		p.unreg = nil
	}
	p.stopLocked()
	p.releaseLocked()
}

// Stop ends the frame in progress and refuses every later BeginFrame,
// Begin, EndFrame and Collect; it waits for the reader goroutine. Ends of
// pairs already handed out still record until Release.
func (p *Pool) Stop() {
	p.life.Lock()
	defer p.life.Unlock()
	p.stopLocked()
}

// deviceStop and deviceRelease close the pool for the device's Close.
func (p *Pool) deviceStop() { p.Stop() }

func (p *Pool) deviceRelease() {
	p.life.Lock()
	defer p.life.Unlock()
	p.releaseLocked()
}

// stopLocked refuses every later call and waits for the reader goroutine
// and any readback in progress. The caller holds p.life.
func (p *Pool) stopLocked() {
	if p.stopped {
		return
	}
	p.stopped = true
	p.mu.Lock()
	p.closed.Store(true)
	p.endFrameLocked()
	for _, r := range p.recs {
		if r.open {
			p.closeLocked(r, false, false) // its later zones are refused
		}
	}
	p.open.Store(nil)
	p.mu.Unlock()
	p.wakeReader() // one pending or this: either way it sees closed
	<-p.done
}

// Finish reads every slot through the driver, once the pool is stopped,
// appends to dst every complete pair, and gives up the rest, counting it:
// pairs never ended in Unended, ended ones whose results were not
// available in Pending. It never waits for the GPU, but some drivers
// (lavapipe) make vkGetQueryPoolResults wait for the device to go idle:
// call it once the application has waited for its work (after
// vkDeviceWaitIdle). Finish before Stop, or twice, returns dst.
func (p *Pool) Finish(dst []Result) ([]Result, error) {
	p.life.Lock()
	defer p.life.Unlock()
	if !p.stopped || p.released || p.finished {
		return dst, nil
	}
	p.finished = true
	p.readMu.Lock()
	p.mu.Lock()
	p.order = p.order[:0]
	for _, s := range p.ring {
		if s.state.Load() == slotClosed {
			s.state.Store(slotReading)
			p.order = append(p.order, s)
		}
	}
	order := p.order
	p.mu.Unlock()
	var err error
	for _, s := range order {
		s.used = s.usedNow()
		s.fromCopy = false
		s.abandon(s.used)
		if rc := p.readDriver(s); rc != vkg.Success && rc != vkg.NotReady {
			s.each(func(b *block) { clear(b.results[:2*b.used(s.used)]) })
			if err == nil {
				err = fmt.Errorf("querypool: vkGetQueryPoolResults: %w", vkg.Error(rc))
			}
		}
	}
	p.mu.Lock()
	for _, s := range order {
		p.harvestFinal(s)
		s.state.Store(slotSpent)
	}
	p.finishRecordings()
	p.finishCarriedLocked()
	p.finishWatchesLocked()
	dst = append(dst, p.ready...)
	p.ready = p.ready[:0]
	dst = p.finishDeferredLocked(dst)
	p.tookLocked()
	p.mu.Unlock()
	p.readMu.Unlock()
	return dst, err
}

// releaseLocked counts what was never read back, waits for Ends still
// recording, and destroys the query pools and buffers. The caller holds
// p.life, and the pool is stopped.
func (p *Pool) releaseLocked() {
	if p.released {
		return
	}
	p.released = true
	// A readback on the application's goroutine (Collect, Drain) may
	// still be inside the driver with a slot, and a ResetDue on any
	// goroutine inside vkResetQueryPool: wait for them.
	p.readMu.Lock()
	defer p.readMu.Unlock()
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.ring {
		st := s.state.Load()
		used := s.quiesce()
		if st == slotClosed || st == slotReading || st == slotRecycling {
			s.used = used
			s.fromCopy = false
			s.each(func(b *block) { clear(b.results[:2*b.used(s.used)]) })
			p.harvestFinal(s)
		}
		s.destroy(p.dev)
	}
	for _, s := range append(p.retired, p.pinned...) {
		s.quiesce()
		s.destroy(p.dev)
	}
	p.retired, p.pinned = nil, nil
	if !p.finished {
		p.finishRecordings()
		p.finishCarriedLocked()
	}
	p.releaseRecordings()
	p.releaseWatches()
	// Pairs read back that nobody collected: the context closed first.
	if n := uint64(len(p.ready) + p.deferredN); n > 0 {
		p.collected.Add(-n)
		p.pending.Add(n)
		p.ready = p.ready[:0]
	}
	p.dropDeferredLocked()
}

// Debug describes the ring's slots, for diagnostics.
func (p *Pool) Debug() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := fmt.Sprintf("frames %d:", p.frames)
	for _, s := range p.ring {
		out += fmt.Sprintf(" [state %d begun %d closed %d next %d cap %d size %d]", s.state.Load(), s.begun, s.closed, s.next.Load(), s.cap, s.size())
	}
	return out
}
