package chrome

import (
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/internal/framerule"
	"github.com/framescope/framescope/timeline"
)

// Names of Framescope's own metadata events. Other tools ignore 'M' events
// they do not know; Read uses these to restore what JSON has no place for.
const (
	metaTrack       = "framescope_track"
	metaFrame       = "framescope_frame"
	metaCalibration = "framescope_calibration"
	metaDrops       = "framescope_drops"
	metaLedger      = "framescope_ledger"
	// metaFramesList marks the thread on which the frames of a trace
	// without a frames track are drawn, whose slices Read skips.
	metaFramesList = "framescope_frames"
	// dropsCounter is a counter, shown in viewers, of everything dropped so
	// far; written only once something has been dropped.
	dropsCounter = "framescope dropped"
)

// A Writer is a recorder's sink.
var _ timeline.Sink = (*Writer)(nil)

// maxHeld bounds the spans a Writer holds back waiting for their parent
// (see WriteBatch). Past it the held spans are written at once, in order.
// A span waits while its parent is still open, so the children of one
// long-lived span (a whole-run "main" span, say) pile up until the bound.
// Past it, a child written early nests wrongly in viewers only if its
// parent, when it comes, starts at the very same nanosecond. Invalid.Forced
// counts them.
const maxHeld = 1 << 16

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("chrome: writer closed")

// Invalid counts what a Writer refused to write because the input broke
// the model's rules. These are added to Drops.Spans in the trace's
// framescope_drops record, so the reader sees them as dropped spans.
type Invalid struct {
	Spans   uint64 // unknown track, negative times, End < Start, or overlapping a sibling
	Flows   uint64 // a span index out of range, an end dropped, or an arrow back in time
	Samples uint64 // not on a counter track, or a value that is NaN or infinite
	Forced  uint64 // spans written before their parent arrived (over 64Ki waiting)
	// Work counts spans written without their Work, which broke the
	// model: a Missing that is no reason, or bits past the last statistic.
	Work uint64
	// Frames counts frames not written: with ID 0 or an ID the batch gave
	// another frame, ended before they began, or begun before the clock's
	// zero (the readers refuse a trace holding one whole). They are added to
	// Drops.Frames in the framescope_drops record.
	Frames uint64
}

// Writer streams a trace as Chrome JSON. Make one with NewWriter, give it
// batches with WriteBatch and finish with Close. It is not safe for
// concurrent use.
type Writer struct {
	out     io.Writer
	buf     []byte
	err     error
	started bool
	closed  bool
	pid     int32
	pidStr  []byte

	tracks map[timeline.TrackID]*trackState
	tids   map[uint32]bool // tids in use
	// frameIDs are the batch's frames written: one the readers refuse is
	// not (Invalid.Frames).
	frameIDs framerule.Batch
	// nextTid is where freeTid looks next, going down.
	nextTid uint32
	// framesTrack: the trace has a frames track. Until it has, frames
	// are drawn on the frames thread, made on first use.
	framesTrack bool
	frames      *trackState
	series      map[string]bool // counter names in use
	order       []*trackState   // tracks in first-seen order
	names       [][]byte        // quoted, escaped names by NameID

	flowID    uint64
	drops     timeline.Drops
	ledger    timeline.Ledger
	lastDrops uint64
	maxTs     int64
	invalid   Invalid
	held      int
	// dead holds the flows one of whose spans was refused: counted once,
	// and neither end written. It only grows with bad input.
	dead map[uint64]bool

	// Scratch reused across batches.
	idx   []int32
	marks []flowMark
	cands []cand
	safe  []bool
	bad   []bool
	stack []int32
}

type trackState struct {
	t   timeline.Track
	tid []byte // the tid, formatted
	// bPre and ePre start this thread's B and E events, up to the ts.
	bPre, ePre []byte
	queue      []byte // the queue, quoted; nil on tracks with none
	name       []byte // the name of all its slices, quoted; nil: their own
	// series is a counter track's name in 'C' events, quoted: its name,
	// made unique with its ID when another counter has the same name.
	series []byte
	held   []cand
	// written holds the outermost intervals written so far, disjoint and
	// sorted, the last maxWritten of them: a span written later may lie
	// inside one, contain some or lie apart, but not overlap one partly,
	// which claim checks.
	written []interval
	// lastAt[d] is the last span written at depth d (up to maxDepthSeen):
	// a span inside lastAt[d-1] has its parent written already, so it is
	// safe to write at once.
	lastAt []timeline.Span
}

// NewWriter returns a Writer that writes to w. Writes are buffered; Close
// flushes them.
func NewWriter(w io.Writer) *Writer {
	return &Writer{
		out:     w,
		buf:     make([]byte, 0, 64<<10),
		tracks:  make(map[timeline.TrackID]*trackState),
		tids:    make(map[uint32]bool),
		nextTid: math.MaxUint32,
		series:  make(map[string]bool),
		names:   [][]byte{[]byte(`""`)},
	}
}

// Write writes a whole trace to w as Chrome JSON, and what limits each
// of its frames (package timeline/limits), which only the whole trace
// tells: see the package comment.
func Write(w io.Writer, t *timeline.Trace) error {
	cw := NewWriter(w)
	if err := cw.WriteBatch(t); err != nil {
		return err
	}
	cw.writeLimits(t)
	return cw.Close()
}

// Invalid returns what the Writer has refused so far.
func (w *Writer) Invalid() Invalid { return w.invalid }

// WriteBatch writes one batch. Per the streaming contract, b.Names is the
// full name table so far, b.Tracks every track defined so far, Spans,
// Frames, Samples and Calibrations only new items, Flows index b.Spans, and
// b.Drops is the running total.
//
// Within a batch spans may come in any order. Across batches they may
// come as they end (children before parents, a recorder's order) or as
// they start (parents first); viewers order events of equal time by their
// place in the file, so other orders can misplace spans that start or end
// at the very same nanosecond. A span with Depth > 0 whose
// parent has not been written is held back until its parent arrives when
// the two could start at the same time, so that viewers nest them right;
// Close writes whatever is still held. A span that overlaps another
// without nesting, in its batch or among the outermost spans written
// before, is refused and counted (Invalid).
func (w *Writer) WriteBatch(b *timeline.Trace) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if b == nil {
		return errors.New("chrome: nil batch")
	}
	if !w.started {
		w.start(b)
	}
	w.internNames(b.Names)
	for i := range b.Tracks {
		if _, ok := w.tracks[b.Tracks[i].ID]; !ok && b.Tracks[i].ID != 0 {
			w.describe(b, &b.Tracks[i])
		}
	}
	w.writeSpans(b)
	w.writeFrameSlices(b)
	w.writeSamples(b)
	w.frameIDs.Reset()
	for _, f := range b.Frames {
		if !w.frameIDs.Take(f) {
			w.invalid.Frames++
			continue
		}
		w.writeFrame(f)
	}
	for _, c := range b.Calibrations {
		w.writeCalibration(c)
	}
	w.drops = b.Drops
	w.ledger = b.Ledger
	w.writeDropsCounter()
	// Every batch goes out whole: should the process die, the file holds
	// an array of whole events, which readers take without its ']'.
	return w.flush(0)
}

// Close writes the spans still held, the dropped counts and the end of the
// JSON document, and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.start(&timeline.Trace{})
	}
	for _, ts := range w.order {
		if len(ts.held) > 0 {
			w.emit(ts, ts.held, nil, true)
			w.held -= len(ts.held)
			ts.held = ts.held[:0]
		}
	}
	w.writeDropsCounter()
	d := w.total()
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaDrops+`","args":{`...)
	for c := range books.NumCauses {
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, c.String()...)
		w.buf = append(w.buf, `":`...)
		w.buf = strconv.AppendUint(w.buf, *books.Count(&d, c), 10)
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, `"invalid_flows":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Flows, 10)
	w.buf = append(w.buf, `,"invalid_samples":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Samples, 10)
	w.buf = append(w.buf, `,"held_overflow":`...)
	w.buf = strconv.AppendUint(w.buf, w.invalid.Forced, 10)
	if w.invalid.Work > 0 {
		w.buf = append(w.buf, `,"invalid_work":`...)
		w.buf = strconv.AppendUint(w.buf, w.invalid.Work, 10)
	}
	w.buf = append(w.buf, "}}"...)
	if !(w.ledger == timeline.Ledger{}) {
		w.writeLedger()
	}
	w.buf = append(w.buf, "\n]\n"...)
	w.closed = true
	return w.flush(0)
}

// writeLedger writes the framescope_ledger record: every count of the
// books, by its key.
func (w *Writer) writeLedger() {
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"`+metaLedger+`","args":{`...)
	for i := range books.NumLedgerCounts {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, books.LedgerKey(i)...)
		w.buf = append(w.buf, `":`...)
		w.buf = strconv.AppendUint(w.buf, *books.LedgerCount(&w.ledger, i), 10)
	}
	w.buf = append(w.buf, "}}"...)
}

// total is the trace's drops plus the spans this writer refused.
func (w *Writer) total() timeline.Drops {
	d := w.drops
	d.Spans += w.invalid.Spans
	d.Frames += w.invalid.Frames
	return d
}

func (w *Writer) flush(min int) error {
	if w.err != nil || len(w.buf) < min || len(w.buf) == 0 {
		return w.err
	}
	_, w.err = w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return w.err
}

func (w *Writer) start(b *timeline.Trace) {
	w.started = true
	w.pid = b.Process.PID
	if w.pid <= 0 {
		w.pid = 1
	}
	w.pidStr = strconv.AppendInt(nil, int64(w.pid), 10)
	w.buf = append(w.buf, "[\n"...)
	w.buf = append(w.buf, `{"ph":"M","pid":`...)
	w.buf = strconv.AppendInt(w.buf, int64(w.pid), 10)
	w.buf = append(w.buf, `,"name":"process_name","args":{"name":`...)
	name := b.Process.Name
	if name == "" {
		name = "framescope"
	}
	w.buf = appendString(w.buf, name)
	w.buf = append(w.buf, "}}"...)
	w.beginEvent('M')
	w.buf = append(w.buf, `,"name":"process_sort_index","args":{"sort_index":0}}`...)
}

func (w *Writer) internNames(names []string) {
	for i := len(w.names); i < len(names); i++ {
		w.names = append(w.names, appendString(nil, names[i]))
	}
}

func (w *Writer) name(id timeline.NameID) []byte {
	if int(id) < len(w.names) {
		return w.names[id]
	}
	return w.names[0]
}
