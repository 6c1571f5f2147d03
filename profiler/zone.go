package profiler

import (
	"github.com/framescope/framescope/internal/querypool"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Zone is an open GPU zone: a small value, ended once with End or EndIn.
// Ending the zero Zone, or a zone GPU.Zone refused, does nothing.
type Zone struct {
	g    *GPU
	pair querypool.Pair
	cmd  vkg.CommandBuffer
}

// Zone writes a begin timestamp into cmd and returns the open zone:
//
//	defer gpu.Zone(cmd, name).End()
//
// It never blocks and allocates nothing. When no query is free (the frame's
// budget is spent, no frame begun, the context closed) it records nothing,
// counts the zone as dropped and returns a Zone whose End does nothing.
//
// Zones may begin on any goroutine, each recording its own command buffers;
// as Vulkan requires of every command recorded into cmd, one goroutine at
// a time records into it. The context keeps its place in cmd's queries
// without atomics on that condition, so goroutines recording their own
// command buffers share little: one atomic for each block of their zones.
func (g *GPU) Zone(cmd vkg.CommandBuffer, name Name) Zone { return g.zone(cmd, name, false) }

// zone is Zone, or ZoneInRenderPass when inside is set. Both are inlined
// where the application calls them, so that a zone costs this one call.
func (g *GPU) zone(cmd vkg.CommandBuffer, name Name, inside bool) Zone {
	if g == nil {
		return Zone{}
	}
	pr, ok := g.pool.Begin(cmd, g.begin, uint32(name))
	if !ok {
		g.refused()
		return Zone{}
	}
	z := Zone{g: g, pair: pr, cmd: cmd}
	if g.extra {
		g.zoneExtra(z, name, inside)
	}
	return z
}

// refused reports a refused zone of a closed context as late.
func (g *GPU) refused() {
	if g.state.Load() != stateOpen {
		g.reportLate()
	}
}

// End writes the zone's end timestamp into the command buffer it began in.
func (z Zone) End() { z.EndIn(z.cmd) }

// EndIn writes the zone's end timestamp into cmd: the command buffer it
// began in or a later one submitted to the same queue, for zones that span
// command buffers. Ending twice records nothing and is counted as misuse
// (Drops.Misuse); ending the zero Zone or a refused zone does nothing.
//
// With DebugLabels, the zone's label region is ended only in the command
// buffer that began it: ended in another, the region stays open on the
// queue. Vulkan allows ending a region in a later command buffer of the
// queue, but Mesa's drivers (lavapipe 22.3, whose command buffers keep
// their own stack of labels) corrupt memory when a command buffer ends a
// region it did not begin, and crash at its next label.
func (z Zone) EndIn(cmd vkg.CommandBuffer) { z.endIn(cmd, false) }

// EndInRenderPass is End for a zone begun outside a render pass instance
// (or dynamic rendering instance) and ended inside one, as a debug label
// may be. With GPUOptions.PipelineStatistics, no statistics query begun
// outside the instance may end inside it: the zone has no counts of its
// own (timeline.WorkRenderPass), and the count around it goes on. The
// layer calls it. Without statistics it is End.
func (z Zone) EndInRenderPass() { z.endIn(z.cmd, true) }

func (z Zone) endIn(cmd vkg.CommandBuffer, inside bool) {
	g := z.g
	if g == nil {
		return
	}
	if !g.extra {
		g.pool.EndQuiet(z.pair, cmd, g.end) // the pool counts a refusal
	} else {
		g.endExtra(z, cmd, inside)
	}
	if g.state.Load() != stateOpen {
		g.reportLate() // ended after the context closed: misuse, to the trace's books too
	}
}

// Valid reports whether the zone is recording (false when it was dropped).
func (z Zone) Valid() bool { return z.g != nil }

// unknownLabel labels the zones of a Name the profiler never gave out
// (they are dropped from the timeline and counted there).
var unknownLabel = vk.NewLabel("framescope: unregistered name")

// labelFor returns name's debug label, made on first use. The labels are
// the profiler's, one a name for its life (bounded by the names, which
// are bounded): contexts made again use the same.
func (g *GPU) labelFor(name Name) vk.Label {
	p := g.p
	p.labelMu.RLock()
	if int(name) < len(p.labels) {
		l := p.labels[name]
		p.labelMu.RUnlock()
		if l != (vk.Label{}) {
			return l
		}
	} else {
		p.labelMu.RUnlock()
	}
	// The table grows only to names the recorder gave out (at most
	// 1Mi), never to whatever a caller passes.
	s := p.rec.NameOf(name)
	if s == "" {
		return unknownLabel
	}
	p.labelMu.Lock()
	defer p.labelMu.Unlock()
	for int(name) >= len(p.labels) {
		p.labels = append(p.labels, vk.Label{})
	}
	if p.labels[name] == (vk.Label{}) {
		p.labels[name] = vk.NewLabel(s)
	}
	return p.labels[name]
}
