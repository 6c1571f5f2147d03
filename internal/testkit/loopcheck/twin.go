package loopcheck

/*
#include "app.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
	vkg "github.com/vulkan-go/vulkan"
)

// twin is a second device on the application's physical device, alive
// for the whole run beside the first (Loop.Twin), as an application with
// a device per window makes: wrapped on the same profiler, with one
// context on its one queue, a frame's zones in one command buffer, and a
// queue lock of its own for the context's fallback calibration.
type twin struct {
	c     *C.lc_twin
	dev   *profiler.Device
	g     *profiler.GPU
	lock  sync.Mutex
	last  *submitRec // its submission not waited for yet
	track timeline.TrackID
	done  bool // stopped: its objects are gone
}

// twinQueue is the journal's queue of the twin's zones: no queue of the
// first device's.
const twinQueue = -1

// startTwin makes the second device and its context.
func (r *run) startTwin() error {
	var errBuf [512]C.char
	t := &twin{}
	if rc := C.lc_twin_create(r.a.c, &t.c, &errBuf[0], C.size_t(len(errBuf))); rc != 0 {
		return fmt.Errorf("loopcheck: %s", C.GoString(&errBuf[0]))
	}
	r.twin = t
	q := C.lc_twin_queue(t.c)
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: r.a.instance(), Physical: r.a.physical(), Device: vkg.Device(unsafe.Pointer(C.lc_twin_device(t.c))),
		Queues: []profiler.QueueID{{Family: uint32(q.family), Index: uint32(q.index)}}, APIVersion: r.a.apiVersion(),
	})
	if err != nil {
		return err
	}
	t.dev = dev
	gq, err := dev.Queue(uint32(q.family), uint32(q.index))
	if err != nil {
		return err
	}
	t.g, err = r.p.GPU(dev, gq, profiler.GPUOptions{FramesInFlight: 1, FallbackQueue: &gq, FallbackLock: &t.lock})
	if err != nil {
		return err
	}
	r.all = append(r.all, t.g)
	t.track = t.g.Track()
	return nil
}

// twinFrame records frame f's zones on the twin (after the first
// device's), submits them and notes them in the journal; it waits for
// the twin's last frame first.
func (r *run) twinFrame(frame uint64, f int) error {
	t := r.twin
	if err := r.twinWait(); err != nil {
		return err
	}
	t.lock.Lock()
	defer t.lock.Unlock()
	c := C.lc_twin_begin(t.c)
	if c == nil {
		return fmt.Errorf("%w: the second device's command buffer", errVulkan)
	}
	cmd := cmdHandle(c)
	t.g.BeginFrame(cmd)
	rec := &cbRec{queue: twinQueue}
	var names []string
	for i := range 1 + f%3 {
		names = append(names, fmt.Sprintf("twin z%d", i))
	}
	r.nestedZones(t.g, cmd, names, frame, rec, false)
	t.g.EndFrame(cmd)
	span := r.main.Span(r.name(spanTwinSubmit))
	sub := &submitRec{frame: frame, queue: twinQueue, span: spanTwinSubmit, linked: true}
	rec.submit, rec.named = sub, true
	t.g.Submit(span, cmd)
	sub.t0 = timeline.Now()
	err := vkErr("vkQueueSubmit (second device)", C.lc_twin_submit(t.c))
	r.endSpan(span)
	r.j.submits = append(r.j.submits, sub)
	t.last = sub
	return err
}

const spanTwinSubmit = "submit twin"

// twinWait waits for the twin's last submission and notes when.
func (r *run) twinWait() error {
	t := r.twin
	if t == nil || t.done || t.last == nil {
		return nil
	}
	err := vkErr("vkWaitForFences (second device)", C.lc_twin_wait(t.c))
	t.last.done = timeline.Now()
	t.last = nil
	return err
}

// nestedZones records a zone a name into cmd on context g, each inside
// the one before, and ends them, noting each in the journal in frame,
// recorded in cb (stale: Loop.Resubmit's, see zoneRec).
func (r *run) nestedZones(g *profiler.GPU, cmd vkg.CommandBuffer, names []string, frame uint64, cb *cbRec, stale bool) []*zoneRec {
	recs := make([]*zoneRec, len(names))
	zs := make([]profiler.Zone, len(names))
	for i, name := range names {
		zs[i] = g.Zone(cmd, r.name(name))
		r.j.calls++
		recs[i] = &zoneRec{frame: frame, queue: cb.queue, name: name, valid: zs[i].Valid(), begin: cb, stale: stale}
		if i > 0 {
			recs[i].parent = recs[i-1]
		}
		r.j.zones = append(r.j.zones, recs[i])
	}
	for i := len(zs) - 1; i >= 0; i-- {
		zs[i].End()
		recs[i].ended, recs[i].end = 1, cb
	}
	return recs
}

// stopTwin waits for the twin, and closes and destroys what it made:
// after Profiler.Close, or on the way out of a failed run.
func (r *run) stopTwin() error {
	t := r.twin
	if t == nil || t.done {
		return nil
	}
	err := r.twinWait()
	if t.g != nil {
		t.g.Close()
	}
	if t.dev != nil {
		t.dev.Close()
	}
	C.lc_twin_destroy(t.c)
	t.done = true
	return err
}

// checkTwin holds the trace to "one track per device alive": the twin's
// context has a track of its own, and no queue track (with its lanes)
// holds zones of both devices.
func (r *run) checkTwin(tr *timeline.Trace, p *problems) {
	t := r.twin
	if t == nil || t.g == nil {
		return
	}
	for _, g := range r.all {
		if g != t.g && g.Track() == t.track {
			p.add("devices", "the second device's context shares track %d with a context of the first", t.track)
			break
		}
	}
	byTrack := map[timeline.TrackID][2]bool{} // queue track: zones of the first, of the twin
	for _, s := range tr.Spans {
		tk := tr.Track(s.Track)
		if tk.Kind != timeline.TrackGPUQueue && tk.Kind != timeline.TrackGPULane {
			continue
		}
		id := tk.ID
		if tk.Lane > 0 {
			id = tk.Parent
		}
		seen := byTrack[id]
		seen[b2i(isTwinZone(tr.Name(s.Name)))] = true
		byTrack[id] = seen
	}
	for id, seen := range byTrack {
		if seen[0] && seen[1] {
			p.add("devices", "track %q holds zones of both devices alive at once", tr.Track(id).Name)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isTwinZone(name string) bool { return len(name) > 5 && name[:5] == "twin " }
