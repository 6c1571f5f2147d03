package timeline

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// GPUSpan is a GPU zone handed to the recorder by the profiler, already on
// the host clock.
type GPUSpan struct {
	Name  NameID
	Start int64  // host CLOCK_MONOTONIC ns
	End   int64  // host CLOCK_MONOTONIC ns; End >= Start
	Frame uint64 // the frame whose command buffers recorded the zone
	ErrNs uint32 // the clock model's error bound
	// Depth is the zone's nesting level in its command buffer. It only
	// breaks ties: a parent and child with equal times keep their order.
	Depth uint16
	// Key is the submission that carried the zone (see [OpenSpan.Submitted]);
	// 0 for none.
	Key uint64
}

// queueState is one GPU queue: its track, its lanes, its clock error
// counter.
type queueState struct {
	q        Queue
	name     string
	errTrack TrackID
	lanes    []*lane // lanes[0] is the queue track
	// reports: the queue's source reports how far it has settled
	// (SettleGPU), up to frame settled.
	reports bool
	settled uint64
}

// MaxSettleFrames bounds how long a frame waits for a queue that reports
// its progress (SettleGPU) but stops doing so: MaxSettleFrames frames after
// it ended, a frame settles whatever the queue says.
const MaxSettleFrames = 256

// SettleGPU tells the recorder that every zone of frames up to frame on the
// queue whose track is track has been added (AddGPUSpans) or counted as
// lost (AddDrops): no more will come. From the first call on, the
// recorder waits for the queue's word before it samples a frame's GPU
// time and before a submission key gives up waiting for its zones, rather
// than Options.SettleFrames: however late results come, they are timed
// and linked. A source that stops reporting holds frames back at most
// MaxSettleFrames frames. Call it with ^uint64(0) when the queue is done.
func (r *Recorder) SettleGPU(track TrackID, frame uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if qs := r.queueOf[track]; qs != nil && (!qs.reports || frame > qs.settled) {
		qs.reports, qs.settled = true, frame
	}
}

// gpuWatermark returns the newest frame up to which every queue that
// reports its progress has settled; ok is false when none reports. The
// caller holds mu.
func (r *Recorder) gpuWatermark() (frame uint64, ok bool) {
	frame = ^uint64(0)
	for _, qs := range r.queues {
		if qs.reports {
			frame, ok = min(frame, qs.settled), true
		}
	}
	return frame, ok
}

// QueueName is the name of a queue's track, e.g.
// "NVIDIA H200 / graphics queue 0.0".
func QueueName(q Queue) string {
	kind := q.Flags
	if kind == "" {
		kind = "gpu"
	}
	dev := q.Device
	if dev == "" {
		dev = "GPU"
	}
	return dev + " / " + kind + " queue " + strconv.FormatUint(uint64(q.Family), 10) + "." + strconv.FormatUint(uint64(q.Index), 10)
}

// QueueTrack returns the track of queue q, defining it on first use.
func (r *Recorder) QueueTrack(q Queue) TrackID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queueLocked(q)
}

func (r *Recorder) queueLocked(q Queue) TrackID {
	if qs := r.queues[q]; qs != nil {
		return qs.lanes[0].track
	}
	qs := &queueState{q: q, name: QueueName(q)}
	id := r.addTrack(Track{Kind: TrackGPUQueue, Name: qs.name, Queue: q, Order: int32(len(r.queues))})
	qs.lanes = []*lane{{track: id}}
	r.queues[q] = qs
	r.queueOf[id] = qs
	return id
}

// ErrUnknownTrack is returned for a track ID the recorder did not define
// for the use asked.
var ErrUnknownTrack = errors.New("timeline: unknown track")

// AddGPUSpans adds GPU zones of the queue whose track is track (from
// QueueTrack). Zones may come in any batches and order; each goes on a
// lane of the queue where it nests properly (see placeGPU), a new lane
// when none fits. Zones with End < Start, an unknown name or no lane left
// (Options.MaxLanes), and all zones given for an unknown track, are
// dropped, counted in Drops.GPUSpans, and reported in the error; the
// others are kept.
func (r *Recorder) AddGPUSpans(track TrackID, spans []GPUSpan) error {
	if len(spans) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := r.queueOf[track]
	if qs == nil {
		r.drops.GPUSpans += uint64(len(spans))
		return fmt.Errorf("%w %d for %d GPU spans", ErrUnknownTrack, track, len(spans))
	}
	buf := append(r.gpuScratch[:0], spans...)
	slices.SortFunc(buf, cmpGPUSpan)
	var bad, full int
	for i := range buf {
		g := &buf[i]
		if g.End < g.Start || int(g.Name) >= len(r.names) {
			bad++
			continue
		}
		if !r.placeGPU(qs, g) {
			full++
		}
	}
	r.gpuScratch = buf[:0]
	r.drops.GPUSpans += uint64(bad + full)
	r.maybeEvict()
	if bad > 0 || full > 0 {
		return fmt.Errorf("timeline: %d GPU spans dropped on %q: %d with End < Start or an unknown name, %d with no free lane", bad+full, qs.name, bad, full)
	}
	return nil
}

// placeGPU puts g on a lane of qs where it nests properly: the lane where
// it nests deepest, so that a zone stays with the zone containing it, and
// the first such lane on a tie; a new lane when none fits and one is
// allowed. The caller holds mu.
func (r *Recorder) placeGPU(qs *queueState, g *GPUSpan) bool {
	var l *lane
	var pos int
	var ls laneSpan
	for _, c := range qs.lanes {
		if p, s, ok := c.fit(g.Start, g.End); ok && (l == nil || s.depth > ls.depth) {
			l, pos, ls = c, p, s
		}
	}
	if l == nil {
		if len(qs.lanes) >= r.opt.MaxLanes {
			return false
		}
		n := len(qs.lanes)
		l = &lane{track: r.addTrack(Track{
			Kind: TrackGPULane, Name: qs.name + " lane " + strconv.Itoa(n),
			Parent: qs.lanes[0].track, Order: int32(n), Queue: qs.q, Lane: int32(n),
		})}
		qs.lanes = append(qs.lanes, l)
		pos, ls = 0, laneSpan{start: g.Start, end: g.End}
	}
	l.insert(pos, ls)
	seq := r.appendSpan(Span{
		Track: l.track, Name: g.Name, Start: g.Start, End: g.End,
		Frame: g.Frame, Depth: ls.depth, ErrNs: g.ErrNs,
	})
	if g.Key != 0 {
		r.linkGPU(g.Key, seq)
	}
	if ls.depth == 0 {
		r.noteGPUFrame(g.Frame, g.Start, g.End)
	}
	return true
}
