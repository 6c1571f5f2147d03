package querypool

import (
	"errors"
	"fmt"

	vkg "github.com/vulkan-go/vulkan"
)

// A command buffer whose recording was refused for the number of
// recordings (ErrRecordingCount), or recorded untimed (BeginUntimed), has
// its zones refused while it is recorded, counted once each (NoFrame).
// They run at each execution, and a command buffer recorded once is
// submitted many times: each execution after the first counts them
// again, so that every execution the GPU ran is in the books.

// overRec is such a command buffer: the zones refused in its recording,
// and its executions since.
type overRec struct {
	zones uint64
	runs  uint64
}

// maxOver bounds the command buffers kept so; past it, BeginRecording's
// error says that a refused recording's later executions are not counted.
const maxOver = 1 << 16

// overLocked notes that command buffer k's recording was refused by err,
// and returns the error to give. The caller holds p.mu.
func (p *Pool) overLocked(k uint64, err error) error {
	if !errors.Is(err, ErrRecordingCount) {
		return err
	}
	if !p.noteOverLocked(k) {
		return fmt.Errorf("%w, and %d more command buffers whose recording was refused: the executions of this one after its first are not counted", err, maxOver)
	}
	return err
}

// noteOverLocked keeps command buffer k as one whose zones are refused in
// this recording and counted at each execution; false past maxOver. The
// caller holds p.mu.
func (p *Pool) noteOverLocked(k uint64) bool {
	if o := p.over[k]; o != nil {
		*o = overRec{}
		return true
	}
	if len(p.over) >= maxOver {
		return false
	}
	if p.over == nil {
		p.over = map[uint64]*overRec{}
	}
	p.over[k] = &overRec{}
	p.nover.Store(int32(len(p.over)))
	return true
}

// ErrUntimedCount is BeginUntimed's error past maxOver command buffers
// recorded so: its zones are refused and counted once, not at each
// execution.
var ErrUntimedCount = fmt.Errorf("querypool: more than %d command buffers recorded untimed at once: the executions of this one after its first are not counted", maxOver)

// BeginUntimed notes that cmd is being recorded in a way none of its zones
// can be timed in (a secondary that continues a render pass, where neither
// a recording's reset nor its copy may be recorded): they are refused,
// counted once each (NoFrame), and again at each execution after the
// first that Submit names, until cmd is recorded again or freed, as a
// recording refused for the number of recordings is. A recording cmd had
// is read and dropped (Vulkan records it again only once its executions
// have completed).
func (p *Pool) BeginUntimed(cmd vkg.CommandBuffer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return ErrClosed
	}
	k := cmdKey(cmd)
	p.dropLocked(k)
	p.setOpen(k, nil) // its zones refused (refuseOver)
	if !p.noteOverLocked(k) {
		return ErrUntimedCount
	}
	return nil
}

// forgetOverLocked forgets command buffer k: recorded again as a
// recording, or freed. The caller holds p.mu.
func (p *Pool) forgetOverLocked(k uint64) {
	if _, ok := p.over[k]; ok {
		delete(p.over, k)
		p.nover.Store(int32(len(p.over)))
	}
}

// refuseOver refuses a zone begun in a command buffer whose recording was
// refused, and notes it for the command buffer's later executions.
func (p *Pool) refuseOver(cmd vkg.CommandBuffer) (Pair, bool) {
	p.mu.Lock()
	if o := p.over[cmdKey(cmd)]; o != nil {
		o.zones++
	}
	p.mu.Unlock()
	return p.refuseNoFrame(cmd)
}

// executedOverLocked counts, for an execution of command buffer k past
// its first, the zones refused in its recording. The caller holds p.mu.
func (p *Pool) executedOverLocked(k uint64) {
	o := p.over[k]
	if o == nil {
		return
	}
	if o.runs > 0 {
		p.noFrame.Add(o.zones)
	}
	o.runs++
}
