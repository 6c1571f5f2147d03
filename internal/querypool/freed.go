package querypool

import vkg "github.com/vulkan-go/vulkan"

// Freed drops what the pool keeps of command buffer cmd, which the
// application frees (vkFreeCommandBuffers, or the destruction of its
// command pool): a recording's last execution is read, as when it is
// recorded again (Vulkan lets a command buffer be freed only once no
// execution of it is pending), and its slot destroyed, so that it counts
// no longer against MaxRecordings; a command buffer pinned as submitted
// again is unpinned. A handle the driver gives out again is a new
// command buffer.
func (p *Pool) Freed(cmd vkg.CommandBuffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	k := cmdKey(cmd)
	p.forgetOverLocked(k)
	defer p.forgetOpen(k)
	p.dropLocked(k)
}

// dropLocked drops command buffer k's recording, its last execution read
// (one still recorded is abandoned: freed, or reset, while recorded), and
// unpins it as submitted again. The caller holds p.mu.
func (p *Pool) dropLocked(k uint64) {
	if a, ok := p.again[k]; ok {
		p.forgetAgainLocked(k, a)
	}
	if r := p.recs[k]; r != nil {
		if r.open {
			p.abandonLocked(r)
		}
		p.retireLocked(r)
		p.forgetLocked(r)
	}
}
