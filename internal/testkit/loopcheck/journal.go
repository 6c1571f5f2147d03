package loopcheck

// The journal is what the application did, as it counted it: every zone
// it asked for, where it began and ended, which submission carried it and
// when that was submitted and waited for. The checks hold the trace to
// it, never to the library's own counts.
type journal struct {
	zones   []*zoneRec
	submits []*submitRec
	calls   uint64 // GPU.Zone calls
	// afterClose counts the GPU.Zone calls on a closed context (in calls
	// too): each refused, and not in zones, having no command buffer.
	afterClose uint64
	cpuSpans   uint64 // CPU spans ended
	// resubmitted counts the zones of each execution of a command buffer
	// submitted again without Record (Loop.Resubmit) after its first (in
	// calls too): run, not timed, and counted as such.
	resubmitted uint64
}

// zoneRec is one GPU.Zone call.
type zoneRec struct {
	frame  uint64
	queue  int
	name   string
	valid  bool     // GPU.Zone handed it out
	ended  int      // End or EndIn calls
	parent *zoneRec // the zone open around it when it began, in the same command buffer
	begin  *cbRec
	end    *cbRec // where it was ended first; nil: never
	// compute is the compute shader invocations the application
	// dispatched between its Begin and End (Loop.Stats).
	compute uint64
	// stale: a zone of a command buffer submitted again without Record
	// (Loop.Resubmit), which the library refuses: read back after a later
	// execution ran, it has that execution's times, so only its start
	// is held to its submission.
	stale bool
	// mayOverlap: a zone of an execution of a simultaneous-use recording
	// (Loop.Simultaneous), which may run beside another execution of it:
	// delivered in its window, or counted as overlapped.
	mayOverlap bool
}

// cbRec is one command buffer as recorded.
type cbRec struct {
	queue   int
	submit  *submitRec // nil: never submitted
	primary *cbRec     // for a secondary: the primary that executes it
	named   bool       // named to GPU.Submit with its submission
}

// submitRec is one vkQueueSubmit.
type submitRec struct {
	frame        uint64
	queue, index int
	span         string // the CPU span around it
	linked       bool   // GPU.Submit was called for it
	t0           int64  // timeline.Now() just before vkQueueSubmit
	done         int64  // timeline.Now() once a wait for it returned
}

// submission returns the submission that ran the command buffer: its
// own, or its primary's.
func (c *cbRec) submission() *submitRec {
	if c == nil {
		return nil
	}
	if c.primary != nil {
		return c.primary.submit
	}
	return c.submit
}

// deliverable reports whether the zone should reach the timeline: handed
// out, ended, and run by the GPU (both its command buffers submitted).
func (z *zoneRec) deliverable() bool {
	return z.valid && z.ended > 0 && z.begin.submission() != nil && z.end.submission() != nil
}

// linked reports whether the zone should have an arrow: its submission
// called GPU.Submit and named its command buffer (a secondary's
// primary named with it).
func (z *zoneRec) linked() bool {
	s := z.begin.submission()
	return s != nil && s.linked && z.begin.named
}
