package perfetto

import (
	"errors"
	"io"
	"math/bits"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/framerule"
	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

// Options configure a Writer. The zero Options are the defaults. A value
// out of its range is clamped to the range (see [Options.Clamp]), so that
// no option can make the Writer allocate more than its bound.
type Options struct {
	// FlushBytes is how much the writer buffers before it hands whole
	// packets to the io.Writer (default 64 KiB, at most 64 MiB).
	// It also flushes at the end of every batch.
	FlushBytes int
	// MaxSequences caps the packet sequences kept open for reuse by later
	// batches (default 8, at most 1024); see the package
	// comment.
	MaxSequences int
	// RenderStages also writes every GPU zone as a GpuRenderStageEvent on
	// a hardware queue of its GPU queue track, and each queue's work
	// counters as GPU counters (GpuCounterEvent), the packets Perfetto's
	// GPU data sources write: ui.perfetto.dev shows them under the GPU
	// group, and the trace processor in its gpu_slice and gpu_counter_track
	// tables. The slices, arrows and counters written without it are
	// written as they are; Read ignores what it adds. See the package
	// comment.
	RenderStages bool
}

// Bounds of Options: the writer's buffer is FlushBytes plus one packet,
// and each open sequence keeps a bitset of the names interned on it.
const (
	maxFlushBytes   = 64 << 20
	maxMaxSequences = 1024
)

// Clamp returns o with zero or negative fields set to their defaults and
// fields over their bounds set to the bound. NewWriter applies it.
func (o Options) Clamp() Options {
	if o.FlushBytes <= 0 {
		o.FlushBytes = 64 << 10
	}
	o.FlushBytes = min(o.FlushBytes, maxFlushBytes)
	if o.MaxSequences <= 0 {
		o.MaxSequences = 8
	}
	o.MaxSequences = min(o.MaxSequences, maxMaxSequences)
	return o
}

// Stats count what a Writer wrote, and the input it had to drop.
type Stats struct {
	Batches   uint64
	Packets   uint64
	Bytes     uint64 // handed to the io.Writer
	Sequences uint64 // packet sequences opened
	// Invalid counts input items the writer dropped: spans on unknown or
	// counter tracks, with unknown names, negative times or End < Start;
	// flows between dropped or out-of-range spans; samples on non-counter
	// tracks; calibrations of non-GPU tracks; a span's Work with a reason
	// out of range or bits past the last statistic (the span is written
	// without it). They are also in the trace, as the "framescope
	// dropped: invalid" counter.
	Invalid uint64
	// Lost counts the bytes encoded but not written because the io.Writer
	// failed: once it has, the writer drops what it buffers.
	Lost uint64
}

// Writer writes a Perfetto trace from timeline batches. It implements
// timeline.Sink. Its methods must not be called concurrently.
type Writer struct {
	w     io.Writer
	opt   Options
	e     enc
	pktAt int   // where the open packet's length byte is
	err   error // sticky: the first error of the io.Writer, or ErrClosed

	bootOffset int64 // BOOTTIME - MONOTONIC when the writer was made
	seqs       []*sequence
	nextSeq    uint32
	cur        *sequence

	trackIndex map[timeline.TrackID]int32
	tracks     []trackState
	framesList trackState      // the writer's own frames track, if needed
	frameIDs   framerule.Batch // the batch's frames written: one the readers refuse is not

	processDone, gpuDone, dropsDone, framesDone, ledgerDone, batchesDone bool

	names      []string
	lastDrops  [len(dropFields)]uint64
	lastLedger [books.NumLedgerCounts]uint64
	flowID     uint64
	stats      Stats

	// Scratch, reused by every batch.
	events    []event
	sortBuf   []event
	spanTrack []int32 // each span's index in tracks; -1: invalid
	flowOut   []int32 // per span: first flow leaving it, -1 none
	flowIn    []int32
	nextOut   []int32 // per flow: next flow leaving the same span
	nextIn    []int32
	flowIDs   []uint64
	beginPos  []int32 // per span: its begin's place in events
	groups    []zeroGroup

	// The batch's work: per GPU queue and frame, the sum of its outermost
	// counted zones (see collectWork).
	workGroups []workGroup
	workIndex  map[workKey]int32

	// Render stages (Options.RenderStages).
	pid       int32            // the process, for the graphics contexts
	gpuIDs    map[string]int32 // a device's gpu_id, in the order seen
	stageID   uint64           // the last event_id
	counterID uint32           // the last GPU counter id
}

// workKey names a workGroup: a GPU queue track (an index into
// Writer.tracks) and a frame.
type workKey struct {
	queue int32
	frame uint64
}

// workGroup is the work of a GPU queue's outermost counted zones of one
// frame in a batch: the statistics any of them counted, each one's sum
// over the zones that counted it, their earliest start and latest end.
type workGroup struct {
	workKey
	start, end int64
	stats      timeline.PipelineStats
	sum        [timeline.NumPipelineStats]uint64
}

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("perfetto: writer is closed")

// sequence is one packet sequence: its interned names and the value of its
// incremental clock.
type sequence struct {
	id       uint32
	last     int64    // the incremental clock's value, MONOTONIC ns
	interned []uint64 // bitset of NameIDs interned on it
	track    uint64   // the default track of its events, 0 = none

	workNames bool // the work annotation names are interned on it
	// Render stages: bitsets of the NameIDs interned as stage
	// specifications, the track indexes as hardware queues, and the
	// gpu ids as graphics contexts.
	stages, hwQueues, contexts []uint64
}

// clearInterned forgets what is interned on s, for its reuse as a new
// sequence.
func (s *sequence) clearInterned() {
	clear(s.interned)
	clear(s.stages)
	clear(s.hwQueues)
	clear(s.contexts)
	s.workNames = false
	s.track = 0
}

// hasBit reports whether bit i of set is set.
func hasBit(set []uint64, i uint64) bool {
	return i/64 < uint64(len(set)) && set[i/64]&(1<<(i%64)) != 0
}

// setBit sets bit i of *set, growing it as needed.
func setBit(set *[]uint64, i uint64) {
	for i/64 >= uint64(len(*set)) {
		*set = append(*set, 0)
	}
	(*set)[i/64] |= 1 << (i % 64)
}

// NewWriter returns a Writer that writes to w, with o clamped to its
// bounds ([Options.Clamp]).
func NewWriter(w io.Writer, o Options) *Writer {
	o = o.Clamp()
	wr := &Writer{opt: o, trackIndex: map[timeline.TrackID]int32{}, workIndex: map[workKey]int32{}, e: enc{buf: make([]byte, 0, o.FlushBytes+4096)}}
	wr.Reset(w)
	return wr
}

// Reset makes w write a new trace to out, with its options, as a Writer
// just made would, and keeps its buffers: a program that writes many
// traces, one after another, need not allocate them again.
func (w *Writer) Reset(out io.Writer) {
	clear(w.trackIndex)
	clear(w.workIndex)
	*w = Writer{
		w:          out,
		opt:        w.opt,
		nextSeq:    1,
		trackIndex: w.trackIndex,
		tracks:     w.tracks[:0],
		e:          enc{buf: w.e.buf[:0]},
		events:     w.events[:0],
		sortBuf:    w.sortBuf[:0],
		spanTrack:  w.spanTrack[:0],
		flowOut:    w.flowOut[:0],
		flowIn:     w.flowIn[:0],
		nextOut:    w.nextOut[:0],
		nextIn:     w.nextIn[:0],
		flowIDs:    w.flowIDs[:0],
		beginPos:   w.beginPos[:0],
		groups:     w.groups[:0],
		workGroups: w.workGroups[:0],
		workIndex:  w.workIndex,
	}
	w.bootOffset = bootOffset()
	w.framesList = trackState{Track: timeline.Track{Kind: timeline.TrackFrames, Name: "Frames"}, uuid: uuidFrames, cat: catFrames}
}

// Write writes a whole timeline as a Perfetto trace.
func Write(w io.Writer, t *timeline.Trace) error {
	pw := NewWriter(w, Options{})
	if err := pw.Write(t); err != nil {
		return err
	}
	pw.writeLimits(limits.Of(t))
	return pw.Close()
}

// Stats returns the writer's counts so far.
func (w *Writer) Stats() Stats { return w.stats }

// WriteBatch is Write, under the name timeline.Sink wants.
func (w *Writer) WriteBatch(batch *timeline.Trace) error { return w.Write(batch) }

// Flush hands everything buffered to the io.Writer. Once that has failed,
// Flush drops what is buffered (counting it in Stats.Lost) and returns the
// error.
func (w *Writer) Flush() error {
	if w.err != nil {
		w.stats.Lost += uint64(len(w.e.buf))
		w.e.buf = w.e.buf[:0]
		return w.err
	}
	if len(w.e.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.e.buf)
	n = max(0, min(n, len(w.e.buf)))
	w.stats.Bytes += uint64(n)
	if err == nil && n < len(w.e.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.stats.Lost += uint64(len(w.e.buf) - n)
		w.err = err
	}
	w.e.buf = w.e.buf[:0]
	return err
}

// Close flushes the writer. It does not close the io.Writer.
func (w *Writer) Close() error {
	if w.err == ErrClosed {
		return nil
	}
	err := w.Flush()
	if w.err == nil {
		w.err = ErrClosed
	}
	return err
}

// Event kinds, in their order among events of one track at one time:
// slice ends (deepest first), slice begins (outermost first), zero-length
// slices, then everything else.
const (
	evEnd uint8 = iota
	evBegin
	evZero
	evOther
)

// Event sources.
const (
	srcSpan uint8 = iota
	srcFrame
	srcSample
	srcCalib
	srcWork // a workGroup's counters
)

// event is one thing to write at one time. track is an index into
// Writer.tracks, or -1 for the writer's own frames track.
//
// It is 24 bytes: the writer holds two for each span of a batch, and a
// whole trace converted is one batch of up to 4 Mi spans. key holds the
// track, kind, source and depth, which its methods give back.
type event struct {
	ts  int64
	key uint64 // orders events of one time: see mkEvent
	idx int32
}

func (e event) track() int32 { return int32(uint32(e.key>>32)) - 1 }
func (e event) kind() uint8  { return uint8(e.key >> 24) }

func (e event) src() uint8 {
	if e.kind() == evOther {
		return uint8(e.key >> 16)
	}
	return uint8(e.key)
}

// depth is 0 for evOther, whose events mkEvent makes at depth 0.
func (e event) depth() uint16 {
	switch e.kind() {
	case evOther:
		return 0
	case evEnd:
		return 0xffff - uint16(e.key>>8)
	}
	return uint16(e.key >> 8)
}

// mkEvent makes an event with its sort key: track, then kind, then depth
// (deepest first for ends, outermost first otherwise). Begins at one time
// thus come in timeline.CompareSpans order, a zero-length span (evZero)
// before a span that begins as it ends.
func mkEvent(ts int64, track, idx int32, depth uint16, kind, src uint8) event {
	d := depth
	if kind == evEnd {
		d = 0xffff - depth
	}
	key := uint64(uint32(track+1))<<32 | uint64(kind)<<24 | uint64(src)<<16 | uint64(d)
	if kind != evOther {
		key = uint64(uint32(track+1))<<32 | uint64(kind)<<24 | uint64(d)<<8 | uint64(src)
	}
	return event{ts: ts, key: key, idx: idx}
}

func cmpEvent(a, b event) int {
	if a.ts != b.ts {
		if a.ts < b.ts {
			return -1
		}
		return 1
	}
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	return int(a.idx) - int(b.idx)
}

// Write writes one batch (see timeline.Sink for what a batch holds) and
// flushes it. Invalid items are dropped and counted (Stats.Invalid and the
// trace's "framescope dropped: invalid" counter); an error is returned
// only when the io.Writer fails, or after Close.
func (w *Writer) Write(b *timeline.Trace) error {
	if w.err != nil {
		return w.err
	}
	if b == nil {
		return errors.New("perfetto: nil batch")
	}
	w.stats.Batches++
	w.names = b.Names
	w.pid = b.Process.PID
	newTracks := w.addTracks(b.Tracks)
	w.collect(b)
	w.sortBuf = sortEvents(w.events, w.sortBuf)
	w.linkFlows(b)

	// Events before the end of the latest sequence (late GPU results, outer
	// spans ending after inner ones) go on an older sequence that they
	// fit, or a new one; the rest continue the latest.
	ev := w.events
	latest, split := w.latest(), 0
	switch {
	case len(ev) == 0:
		if w.cur == nil {
			w.pickSequence(timeline.Now())
		}
	case latest != nil && ev[0].ts < latest.last:
		split = searchTime(ev, latest.last)
		w.pickSequence(ev[0].ts)
	default:
		w.pickSequence(ev[0].ts)
	}
	w.describeBatches()
	w.describeProcess(b.Process)
	for _, i := range newTracks {
		w.describe(&w.tracks[i])
	}
	if split > 0 {
		w.writeEvents(b, ev[:split])
		if split < len(ev) {
			w.cur = latest
		}
	}
	w.setDefaultTrack()
	w.writeEvents(b, ev[split:])
	w.writeDrops(b.Drops)
	w.writeLedger(b.Ledger)
	w.writeBatchEnd()
	w.names = nil
	return w.Flush()
}

// addTracks registers the batch's tracks the writer has not seen, and
// returns their indexes.
func (w *Writer) addTracks(ts []timeline.Track) []int32 {
	var added []int32
	if len(ts) == len(w.tracks) && (len(ts) == 0 || w.known(ts[len(ts)-1].ID)) {
		return nil // the usual case: nothing new (the list only grows)
	}
	for i := range ts {
		t := &ts[i]
		if t.ID == 0 {
			continue
		}
		if _, ok := w.trackIndex[t.ID]; ok {
			continue
		}
		st := trackState{Track: *t, uuid: trackUUID(t.ID), cat: catCPU}
		switch t.Kind {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			st.cat = catGPU
			st.queue = queueString(t.Queue)
		case timeline.TrackFrames:
			st.cat = catFrames
		case timeline.TrackCounter:
			st.cat = catOther
		}
		w.trackIndex[t.ID] = int32(len(w.tracks))
		added = append(added, int32(len(w.tracks)))
		w.tracks = append(w.tracks, st)
	}
	return added
}

func (w *Writer) known(id timeline.TrackID) bool {
	_, ok := w.trackIndex[id]
	return ok
}

// collect validates the batch's items and lists their events.
func (w *Writer) collect(b *timeline.Trace) {
	if len(w.workGroups) > 0 {
		w.workGroups = w.workGroups[:0]
		clear(w.workIndex)
	}
	w.collectSpans(b)
	for i := range w.workGroups {
		g := &w.workGroups[i]
		w.events = append(w.events, mkEvent(g.start, g.queue, int32(i), 0, evOther, srcWork))
	}
	if !w.framesOnTrack(b) {
		w.frameIDs.Reset()
		for i, f := range b.Frames {
			if f.End == 0 {
				continue // still open: written when it ends
			}
			if !w.frameIDs.Take(f) {
				w.stats.Invalid++ // the readers refuse such a trace whole
				continue
			}
			kind := evBegin
			if f.End == f.Start {
				kind = evZero
			}
			w.events = append(w.events, mkEvent(f.Start, -1, int32(i), 0, kind, srcFrame))
			if kind == evBegin {
				w.events = append(w.events, mkEvent(f.End, -1, int32(i), 0, evEnd, srcFrame))
			}
		}
	}
	for i, s := range b.Samples {
		ti, ok := w.trackIndex[s.Track]
		if !ok || w.tracks[ti].Kind != timeline.TrackCounter || s.Time < 0 {
			w.stats.Invalid++
			continue
		}
		w.events = append(w.events, mkEvent(s.Time, ti, int32(i), 0, evOther, srcSample))
	}
	for i, c := range b.Calibrations {
		ti, ok := w.trackIndex[c.Track]
		if !ok || (w.tracks[ti].Kind != timeline.TrackGPUQueue && w.tracks[ti].Kind != timeline.TrackGPULane) || c.Time < 0 {
			w.stats.Invalid++
			continue
		}
		w.events = append(w.events, mkEvent(c.Time, ti, int32(i), 0, evOther, srcCalib))
	}
}

// collectSpans validates the batch's spans, gathers their work, and lists
// their events first in a list made to the size the batch needs: a whole
// trace of 4 Mi spans is one batch, and growing its list by appending
// would hold two lists at once.
func (w *Writer) collectSpans(b *timeline.Trace) {
	n := len(b.Spans)
	w.spanTrack = grow(w.spanTrack, n)
	w.flowOut = grow(w.flowOut, n)
	w.flowIn = grow(w.flowIn, n)
	need := 2*len(b.Frames) + len(b.Samples) + len(b.Calibrations)
	for i := range b.Spans {
		s := &b.Spans[i]
		w.flowOut[i], w.flowIn[i] = -1, -1
		ti, ok := w.trackIndex[s.Track]
		if !ok || w.tracks[ti].Kind == timeline.TrackCounter || int(s.Name) >= len(b.Names) || s.Start < 0 || s.End < s.Start {
			w.spanTrack[i] = -1
			w.stats.Invalid++
			continue
		}
		w.spanTrack[i] = ti
		w.tracks[ti].count++
		if s.Work != nil {
			w.collectWork(s, ti)
		}
		need += 2
	}
	w.events = reserve(w.events, need+len(w.workGroups))
	for i := range b.Spans {
		s, ti := &b.Spans[i], w.spanTrack[i]
		if ti < 0 {
			continue
		}
		if s.End == s.Start {
			w.events = append(w.events, mkEvent(s.Start, ti, int32(i), s.Depth, evZero, srcSpan))
			continue
		}
		w.events = append(w.events,
			mkEvent(s.Start, ti, int32(i), s.Depth, evBegin, srcSpan),
			mkEvent(s.End, ti, int32(i), s.Depth, evEnd, srcSpan))
	}
}

// collectWork adds a valid span's work to the batch's work groups when it
// is an outermost counted zone of a GPU queue, or of one of its lanes,
// and counts a malformed Work as invalid.
func (w *Writer) collectWork(s *timeline.Span, ti int32) {
	wk := s.Work
	if !wk.Valid() {
		w.stats.Invalid++
		return
	}
	if wk.Missing != timeline.WorkCounted || s.Depth != 0 || wk.Stats == 0 {
		return
	}
	q := w.queueOf(ti)
	if q < 0 {
		return
	}
	key := workKey{q, s.Frame}
	gi, ok := w.workIndex[key]
	if !ok {
		gi = int32(len(w.workGroups))
		w.workIndex[key] = gi
		w.workGroups = append(w.workGroups, workGroup{workKey: key, start: s.Start, end: s.End})
	}
	g := &w.workGroups[gi]
	g.start, g.end = min(g.start, s.Start), max(g.end, s.End)
	g.stats |= wk.Stats
	for v := uint32(wk.Stats); v != 0; v &= v - 1 {
		i := bits.TrailingZeros32(v)
		sum, carry := bits.Add64(g.sum[i], wk.Count[i], 0)
		if carry != 0 {
			sum = ^uint64(0) // saturate
		}
		g.sum[i] = sum
	}
}

// queueOf returns the GPU queue track of the track at index ti: itself,
// or a lane's queue (the lane itself if its parent is no queue); -1 for a
// track of another kind.
func (w *Writer) queueOf(ti int32) int32 {
	switch t := &w.tracks[ti]; t.Kind {
	case timeline.TrackGPUQueue:
		return ti
	case timeline.TrackGPULane:
		if p, ok := w.trackIndex[t.Parent]; ok && w.tracks[p].Kind == timeline.TrackGPUQueue {
			return p
		}
		return ti
	}
	return -1
}

// reversedFlow marks a flow written from its To span to its From span,
// because To begins first: the trace processor links a flow only forwards
// in time. Read turns it back.
const reversedFlow = 1 << 63

// linkFlows gives each valid flow an id and lists it on the slice where
// it starts (flow_ids) and the one where it ends (terminating_flow_ids):
// From and To, or To and From when To's begin is written first.
func (w *Writer) linkFlows(b *timeline.Trace) {
	n := len(b.Spans)
	w.beginPos = grow(w.beginPos, n)
	for k, ev := range w.events {
		if ev.src() == srcSpan && ev.kind() != evEnd {
			w.beginPos[ev.idx] = int32(k)
		}
	}
	w.nextOut = grow(w.nextOut, len(b.Flows))
	w.nextIn = grow(w.nextIn, len(b.Flows))
	w.flowIDs = grow(w.flowIDs, len(b.Flows))
	for i := len(b.Flows) - 1; i >= 0; i-- {
		f := b.Flows[i]
		if f.From < 0 || f.From >= n || f.To < 0 || f.To >= n || f.From == f.To || w.spanTrack[f.From] < 0 || w.spanTrack[f.To] < 0 {
			w.stats.Invalid++
			continue
		}
		w.flowID++
		w.flowIDs[i] = w.flowID
		from, to := f.From, f.To
		if w.beginPos[to] < w.beginPos[from] {
			from, to = to, from
			w.flowIDs[i] |= reversedFlow
		}
		w.nextOut[i], w.flowOut[from] = w.flowOut[from], int32(i)
		w.nextIn[i], w.flowIn[to] = w.flowIn[to], int32(i)
	}
}

// framesOnTrack reports whether batch b's frames are spans of a frames
// track, which Trace.Frames then mirrors: the timeline defines one, and
// b has spans on it. (A frames track with no spans does not hold the
// frames: before, they were then not written at all.)
func (w *Writer) framesOnTrack(b *timeline.Trace) bool {
	if len(b.Frames) == 0 {
		return true // nothing to write either way
	}
	for i := range b.Spans {
		if ti := w.spanTrack[i]; ti >= 0 && w.tracks[ti].Kind == timeline.TrackFrames {
			return true
		}
	}
	return false
}

// reserve returns events emptied, with room for n: a quarter more for a
// batch the radix sort takes, so that the batches after it reuse the list,
// and no more for a larger one.
func reserve(events []event, n int) []event {
	if cap(events) >= n {
		return events[:0]
	}
	if n <= maxRadix {
		n += n / 4
	}
	return make([]event, 0, n)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// setDefaultTrack makes the track with the most events in the batch the
// current sequence's default, so that its events need no track_uuid: two
// bytes less for each slice begin and end on it.
func (w *Writer) setDefaultTrack() {
	best, n := int32(-2), 0
	for i := range w.tracks {
		if c := w.tracks[i].count; c > n {
			best, n = int32(i), c
		}
		w.tracks[i].count = 0
	}
	if best < 0 {
		return
	}
	uuid := w.tracks[best].uuid
	if uuid == w.cur.track || n < 8 {
		return
	}
	w.cur.track = uuid
	e := w.packet()
	def := e.open(fPktDefaults)
	e.varint(fDefTimestampClockID, clockIncremental)
	ted := e.open(fDefTrackEventDefaults)
	e.varint(fTETrackUuid, uuid)
	e.close(ted)
	e.close(def)
	w.endPacket()
}

// latest returns the open sequence furthest ahead, or nil.
func (w *Writer) latest() *sequence {
	var l *sequence
	for _, s := range w.seqs {
		if l == nil || s.last > l.last {
			l = s
		}
	}
	return l
}

// searchTime returns the index of the first event at or after ts.
func searchTime(ev []event, ts int64) int {
	lo, hi := 0, len(ev)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ev[m].ts < ts {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// pickSequence makes w.cur a sequence whose clock is at or before ts: the
// open one closest to ts, or a new one starting at ts.
func (w *Writer) pickSequence(ts int64) {
	var best *sequence
	for _, s := range w.seqs {
		if s.last <= ts && (best == nil || s.last > best.last) {
			best = s
		}
	}
	if best != nil {
		w.cur = best
		return
	}
	s := &sequence{}
	if len(w.seqs) < w.opt.MaxSequences {
		w.seqs = append(w.seqs, s)
	} else {
		// Retire the sequence furthest behind.
		oldest := 0
		for i, o := range w.seqs {
			if o.last < w.seqs[oldest].last {
				oldest = i
			}
		}
		s = w.seqs[oldest]
		s.clearInterned()
	}
	s.id = w.nextSeq
	w.nextSeq++
	s.last = ts
	w.cur = s
	w.stats.Sequences++
	w.startSequence(s)
}

// startSequence writes a sequence's first packet: incremental state
// cleared, the clock snapshot, packet defaults, categories and annotation
// names.
func (w *Writer) startSequence(s *sequence) {
	e := &w.e
	at := e.open(fTracePacket)
	e.varint(fPktSequenceID, uint64(s.id))
	e.varint(fPktSequenceFlags, seqIncrementalStateCleared)
	e.varint(fPktFirstOnSequence, 1)
	e.varint(fPktTimestamp, uint64(s.last))
	e.varint(fPktTimestampClockID, clockMonotonic)

	snap := e.open(fPktClockSnapshot)
	for _, c := range [...]struct {
		id  uint64
		ts  int64
		inc bool
	}{{clockBoottime, s.last + w.bootOffset, false}, {clockMonotonic, s.last, false}, {clockIncremental, s.last, true}} {
		ce := e.open(fSnapClocks)
		e.varint(fClockID, c.id)
		e.varint(fClockTimestamp, uint64(c.ts))
		if c.inc {
			e.varint(fClockIncremental, 1)
		}
		e.close(ce)
	}
	e.varint(fSnapPrimaryClock, clockMonotonic)
	e.close(snap)

	def := e.open(fPktDefaults)
	e.varint(fDefTimestampClockID, clockIncremental)
	e.close(def)

	in := e.open(fPktInternedData)
	for iid := 1; iid < len(categoryNames); iid++ {
		x := e.open(fInternCategories)
		e.varint(fInternIID, uint64(iid))
		e.str(fInternName, categoryNames[iid])
		e.close(x)
	}
	for iid := 1; iid < len(annotationNames); iid++ {
		x := e.open(fInternAnnotationNames)
		e.varint(fInternIID, uint64(iid))
		e.str(fInternName, annotationNames[iid])
		e.close(x)
	}
	e.close(in)
	e.close(at)
	w.stats.Packets++
}

// packet starts a packet on the current sequence, with no timestamp.
func (w *Writer) packet() *enc {
	w.pktAt = w.e.open(fTracePacket)
	w.e.varint(fPktSequenceID, uint64(w.cur.id))
	return &w.e
}

// timedPacket starts a packet at ts on the current sequence's clock.
func (w *Writer) timedPacket(ts int64) *enc {
	w.pktAt = w.e.open(fTracePacket)
	w.e.varint(fPktTimestamp, uint64(ts-w.cur.last))
	w.cur.last = ts
	w.e.varint(fPktSequenceID, uint64(w.cur.id))
	return &w.e
}

// endPacket closes the packet and flushes when the buffer is full.
func (w *Writer) endPacket() {
	w.e.close(w.pktAt)
	w.stats.Packets++
	if len(w.e.buf) >= w.opt.FlushBytes {
		w.Flush()
	}
}
