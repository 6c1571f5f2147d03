package record

import (
	"sync"
	"sync/atomic"

	"github.com/framescope/framescope/timeline"
)

// MaxCPUDepth is how deeply CPU spans may nest on one track. A span opened
// deeper is dropped and counted in Drops.Spans; its End is a no-op.
const MaxCPUDepth = 64

// chunkSize is the number of records in one CPU track buffer chunk.
const chunkSize = 256

// Record kinds in a CPU track's buffer.
const (
	recSpan   uint8 = iota + 1 // a closed span
	recSubmit                  // the open span at depth submitted key
)

// cpuRec is one record written by a track's owner goroutine: a closed span,
// or a mark that the span open at depth submitted a command buffer.
type cpuRec struct {
	start int64
	end   int64
	frame uint64 // the frame of a span, or the key of a submit mark
	name  timeline.NameID
	depth uint16
	kind  uint8
}

// chunk is a fixed block of records. Its owner writes recs[n] and then
// publishes n+1, so the collector may read recs[:n] at any time.
type chunk struct {
	n    atomic.Int32
	next *chunk // set under CPUTrack.mu when the owner moves on
	recs [chunkSize]cpuRec
}

// openSpan is one entry of a track's stack of open spans.
type openSpan struct {
	start int64
	frame uint64
	name  timeline.NameID
	gen   uint32
}

// CPUTrack is a logical thread of CPU work: the render loop, a worker.
// Spans on a track nest like calls. A track is used by one goroutine at a
// time; different tracks may be used from different goroutines at once.
// Methods on a nil *CPUTrack do nothing.
type CPUTrack struct {
	rec *Recorder
	id  timeline.TrackID

	// Owned by the goroutine using the track; nobody else touches them.
	depth int    // open spans on stack
	over  int    // open spans dropped for being too deep
	gen   uint32 // bumped on every push, so a stale OpenSpan is detected
	cur   *chunk // the chunk being written
	wn    int    // records written to cur
	stack [MaxCPUDepth]openSpan

	// Guarded by mu: the chunk chain between writer and collector.
	mu      sync.Mutex
	read    *chunk // oldest chunk not fully collected
	readOff int    // records of read already collected
	nchunks int    // chunks in the chain
	free    *chunk // collected chunks for reuse

	// Guarded by Recorder.mu: submit marks waiting for their span.
	marks []submitMark

	dropped atomic.Uint64 // spans dropped: buffer full, too deep
	misuse  atomic.Uint64 // End twice, out of order, Submitted on an ended span
}

// submitMark says that the span open at depth submitted key.
type submitMark struct {
	key   uint64
	depth uint16
}

// OpenSpan is a CPU span that has begun. End it once, from the goroutine
// that began it: defer track.Span(name).End(). The zero OpenSpan is valid
// and does nothing.
type OpenSpan struct {
	t     *CPUTrack
	gen   uint32
	depth uint16 // stack index; tooDeep when the span was dropped
}

const tooDeep = ^uint16(0)

// ID returns the track's ID in the Trace.
func (t *CPUTrack) ID() timeline.TrackID {
	if t == nil {
		return 0
	}
	return t.id
}

// Span begins a span named name on the track, stamped with Now and the
// current frame. It allocates nothing.
func (t *CPUTrack) Span(name timeline.NameID) OpenSpan {
	if t == nil {
		return OpenSpan{}
	}
	d := t.depth
	if d >= MaxCPUDepth {
		return t.spanTooDeep()
	}
	t.gen++
	e := &t.stack[d]
	e.name = name
	e.gen = t.gen
	e.frame = t.rec.frame.Load()
	e.start = timeline.Now()
	t.depth = d + 1
	return OpenSpan{t: t, gen: t.gen, depth: uint16(d)}
}

// spanTooDeep drops a span opened deeper than MaxCPUDepth.
func (t *CPUTrack) spanTooDeep() OpenSpan {
	t.over++
	t.dropped.Add(1)
	return OpenSpan{t: t, depth: tooDeep}
}

// End ends the span at Now. Ending a span twice is counted as misuse and
// ignored. Ending a span while spans it contains are still open ends those
// too, at the same time, and counts the misuse: the track stays nested.
func (s OpenSpan) End() {
	t := s.t
	if t == nil {
		return
	}
	now := timeline.Now()
	if s.depth == tooDeep {
		if t.over > 0 {
			t.over--
		} else {
			t.misuse.Add(1)
		}
		return
	}
	d := int(s.depth)
	if d >= t.depth || t.stack[d].gen != s.gen {
		t.misuse.Add(1)
		return
	}
	if d != t.depth-1 {
		t.closeInner(d, now)
	}
	t.depth = d
	if t.wn == chunkSize && !t.nextChunk() {
		t.dropped.Add(1)
		return
	}
	e := &t.stack[d]
	c := t.cur
	r := &c.recs[t.wn]
	r.start, r.end, r.frame = e.start, now, e.frame
	r.name, r.depth, r.kind = e.name, uint16(d), recSpan
	t.wn++
	c.n.Store(int32(t.wn))
}

// closeInner ends, at now, the spans open above depth d, innermost first.
func (t *CPUTrack) closeInner(d int, now int64) {
	for i := t.depth - 1; i > d; i-- {
		e := &t.stack[i]
		t.put(cpuRec{start: e.start, end: now, frame: e.frame, name: e.name, depth: uint16(i), kind: recSpan})
		t.misuse.Add(1)
	}
	t.depth = d + 1
	t.over = 0
}

// Submitted marks this span, which must still be open, as the submitter of
// the command buffers the profiler keyed key. The recorder links it to the
// GPU spans added with the same key.
func (s OpenSpan) Submitted(key uint64) {
	t := s.t
	if t == nil {
		return
	}
	d := int(s.depth)
	if s.depth == tooDeep {
		d = t.depth - 1 // the innermost span that was kept
	} else if d >= t.depth || t.stack[d].gen != s.gen {
		t.misuse.Add(1)
		return
	}
	if d < 0 {
		t.misuse.Add(1)
		return
	}
	t.put(cpuRec{frame: key, depth: uint16(d), kind: recSubmit})
}

// put appends r to the track's buffer, or counts it dropped when the
// collector is too far behind.
func (t *CPUTrack) put(r cpuRec) {
	if t.wn == chunkSize && !t.nextChunk() {
		if r.kind == recSpan {
			t.dropped.Add(1)
		}
		return
	}
	c := t.cur
	c.recs[t.wn] = r
	t.wn++
	c.n.Store(int32(t.wn))
}

// nextChunk moves the writer to a fresh chunk; false when the track
// already holds as many uncollected chunks as it may.
func (t *CPUTrack) nextChunk() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nchunks >= t.rec.maxChunks {
		return false
	}
	c := t.free
	if c != nil {
		t.free = c.next
		c.next = nil
		c.n.Store(0)
	} else {
		c = new(chunk)
	}
	t.nchunks++
	t.cur.next = c
	t.cur = c
	t.wn = 0
	return true
}

// collect hands every record published so far to fn, oldest first, and
// recycles the chunks it has finished. The caller holds Recorder.mu.
func (t *CPUTrack) collect(fn func(t *CPUTrack, r *cpuRec)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		c := t.read
		n := int(c.n.Load())
		for i := t.readOff; i < n; i++ {
			fn(t, &c.recs[i])
		}
		t.readOff = n
		if n < chunkSize || c.next == nil {
			return
		}
		t.read = c.next
		t.readOff = 0
		c.next = t.free
		t.free = c
		t.nchunks--
	}
}
