package querypool

import (
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// block is one VkQueryPool of a slot, with its host copy and the records
// of its pairs. A slot's first block is embedded in it; with host query
// reset, a frame that outgrows it gets more, each as large as all those
// before it (so that a query index finds its block with one shift), up to
// Config.MaxQueries in all. A frame's pairs are numbered across its
// blocks: block b holds queries [b.base, b.base+b.cap) of the frame.
type block struct {
	pool    vkg.QueryPool
	base    uint32 // the frame's index of its first query
	cap     uint32 // queries
	meta    []pairMeta
	work    []zoneWork     // with Config.Stats: each pair's part in its chain
	written uint32         // queries handed out since its last reset (host reset only)
	results []uint64       // value, availability per query, as the driver read them
	buf     *vk.HostBuffer // vkCmdCopyQueryPoolResults lands here
	gone    bool           // destroyed (its pool handle stays, stale)
}

// maxBlocks bounds a slot's extra blocks: the first block holds at least 2
// queries and MaxQueries is 2^16, so 15 doublings reach it.
const maxBlocks = 16

// newBlock makes a block of n queries from the frame's query base: its
// query pool, reset on the host when reset is set, its host copy, and the
// records of its pairs: meta where given (n/2 of them), else made here.
func newBlock(dev *vk.Device, base, n uint32, reset bool, meta []pairMeta) (*block, error) {
	h, err := dev.CreateQueryPool(vkg.QueryTypeTimestamp, n, 0)
	if err != nil {
		return nil, fmt.Errorf("querypool: vkCreateQueryPool(%d queries): %w", n, err)
	}
	b := &block{pool: h, base: base, cap: n}
	buf, err := dev.HostBuffer(uint64(n)*16, vkg.BufferUsageTransferDstBit)
	if err != nil {
		dev.DestroyQueryPool(h)
		return nil, err
	}
	b.buf = buf
	clear(buf.Uint64s())
	b.meta = meta
	if b.meta == nil {
		b.meta = make([]pairMeta, n/2)
	}
	b.results = make([]uint64, 2*n)
	if reset {
		if err := dev.ResetQueryPool(h, 0, n); err != nil {
			b.destroy(dev)
			return nil, err
		}
	}
	return b, nil
}

// values returns the block's results as the reader has them, value and
// availability per query: its host copy, read in place, or what the
// driver last wrote into results.
func (b *block) values(fromCopy bool) []uint64 {
	if fromCopy {
		return b.buf.Uint64s()
	}
	return b.results
}

// destroy destroys the block's query pool and host buffer. The pool's
// handle stays as it was: an End reads it, racing with nothing, before it
// finds its pair given up and records nothing.
func (b *block) destroy(dev *vk.Device) {
	if !b.gone && b.pool != vkg.NullQueryPool {
		dev.DestroyQueryPool(b.pool)
	}
	b.gone = true
	b.buf.Destroy()
	b.buf = nil
}

// used returns how many of the block's queries are among the first n of
// the frame.
func (b *block) used(n uint32) uint32 {
	if n <= b.base {
		return 0
	}
	return min(n-b.base, b.cap)
}

// blocks is a slot's extra blocks: ext[k] holds the frame's queries
// [cap<<k, cap<<(k+1)), clipped to the slot's limit, and is published
// (stored) once made, before any pair in it is handed out.
type blocks struct {
	ext   [maxBlocks]atomic.Pointer[block]
	limit uint32 // most queries the frame may take: cap, or MaxQueries with host reset
}

// blockOf returns the block that holds the frame's query q, which must be
// below size(). The first block holds most, and costs one comparison.
func (s *Slot) blockOf(q uint32) *block {
	if q < s.cap {
		return &s.block
	}
	return s.ext[bits.Len32(q/s.cap)-1].Load()
}

// each calls fn with the slot's blocks, the first first.
func (s *Slot) each(fn func(b *block)) {
	fn(&s.block)
	for k := range s.ext {
		b := s.ext[k].Load()
		if b == nil {
			return
		}
		fn(b)
	}
}

// size returns the queries the slot's blocks hold.
func (s *Slot) size() uint32 {
	n := s.cap
	for k := range s.ext {
		b := s.ext[k].Load()
		if b == nil {
			break
		}
		n = b.base + b.cap
	}
	return n
}

// usedNow returns the queries of the frame handed out so far.
func (s *Slot) usedNow() uint32 { return min(s.next.Load(), s.size()) }

// extend makes the block that holds query q, and those before it, when
// the slot may grow that far. The caller is a Begin (counted in
// s.writers, so that nothing reads or recycles the slot meanwhile); p.grow
// makes one Begin at a time grow. False when q is past the slot's limit
// or a block could not be made.
func (p *Pool) extend(s *Slot, q uint32) bool {
	if q >= s.limit {
		return false
	}
	p.growMu.Lock()
	defer p.growMu.Unlock()
	for k := range s.ext {
		if s.ext[k].Load() != nil {
			continue
		}
		base := s.cap << k
		if base > q || base >= s.limit {
			return base > q
		}
		n := min(s.cap<<k, s.limit-base)
		b, err := newBlock(p.dev, base, n, true, nil)
		if err != nil {
			return false
		}
		// Its pairs are open in the slot's generation, as those of the
		// slot's other blocks are since the slot was last renewed: a
		// Begin hands out pairs of that generation.
		if p.cfg.Stats != 0 {
			b.work = make([]zoneWork, len(b.meta))
		}
		g := s.gen.Load()
		for j := range b.meta {
			b.meta[j].state.Store(pairWord(g, pairOpen))
		}
		s.ext[k].Store(b)
		p.extended.Add(1)
	}
	return q < s.size()
}
