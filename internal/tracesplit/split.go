// Package tracesplit cuts a stream of timeline batches (a Vulkan layer's
// trace, written while the program runs) into files that each stay
// within what Framescope's readers accept, so that a long or busy run
// never writes a trace that its own commands refuse.
//
// A file is cut only between batches, and each file is a whole trace: its
// own names, tracks and process, and books of its own. The books carry
// over so that each file's balance and their sum over the files is the
// run's: a file counts the items that reached it or were lost while it
// was the one being written (its Drops and each book's Delivered,
// Evicted and Sink are the run's change over the file), and the items
// still open when it is closed go to the books of a later file; so a
// closed file's Open is 0 and its Issued is what it settled, and the last
// file's Open is what was still open at the end. A file is closed by an
// extra batch of no items that states its final books.
//
// Past MaxFiles files the stream is not written: Place refuses the
// batches, which the recorder then counts lost to its sink (Drops.Sink
// and each book's Sink), and Final makes the last file's closing batch
// from the recorder's final books, so that the last file says what the
// run lost.
package tracesplit

import (
	"github.com/framescope/framescope/internal/books"
	"github.com/framescope/framescope/timeline"
)

// The readers' limits: the defaults of framescope's commands (stats,
// convert, diff, history add and run's summary: cmd/framescope, load.go)
// and the fixed ones of export/perfetto's Read.
const (
	// ReaderSlices bounds a trace's slices (spans, frames and instants).
	ReaderSlices = 4 << 20
	// ReaderBytes bounds a trace's bytes.
	ReaderBytes = 1 << 30
	// ReaderSequences bounds a trace's packet sequences.
	ReaderSequences = 1 << 16
)

// A file's budgets, well within the readers' limits; and the bound of a
// batch that keeps every batch alone within them.
const (
	// FileSlices bounds the slices of a file: its spans and frames.
	FileSlices = 3 << 20
	// FileBytes bounds the bytes of a file, as EstimateBytes counts them
	// (an upper bound of what the Perfetto writer writes).
	FileBytes = 768 << 20
	// FileBatches bounds a file's batches: the Perfetto writer opens at
	// most one packet sequence a batch (and its first), so that this
	// bounds the file's sequences.
	FileBatches = 1 << 15
	// MaxFiles bounds the files of one trace.
	MaxFiles = 32
	// BatchSpans is the recorder's MaxSpans the layer runs with: a batch
	// holds at most that many spans, and as many frames, counter samples,
	// calibrations and arrows.
	BatchSpans = 1 << 20
)

// Budgets within the readers' limits, with a quarter of them to spare,
// and a batch that holds as much as it may within a file's budgets (its
// names aside, which the layer bounds in number, not in length).
const (
	_ = uint64(ReaderSlices - FileSlices - ReaderSlices/4)
	_ = uint64(ReaderBytes - FileBytes - ReaderBytes/4)
	_ = uint64(ReaderSequences - FileBatches - 2)
	_ = uint64(FileSlices - 2*BatchSpans)
	_ = uint64(FileBytes - (2*BatchSpans*sliceBytes + BatchSpans*flowBytes + 2*BatchSpans*sampleBytes))
)

// What EstimateBytes counts for each item: more than the Perfetto writer
// writes for it (the test checks), render stages and work counters
// included.
const (
	sliceBytes  = 192 // a span's begin and end, its render stage
	workBytes   = 640 // a span's work: its own counters' group, at worst
	flowBytes   = 32  // a flow's id on both of its ends
	sampleBytes = 96  // a counter sample or a calibration's counters
	nameBytes   = 16  // an interned name, besides its text
	trackBytes  = 4096
	batchBytes  = 4096 // a batch's drops, books and mark, a sequence's start
)

// Decision is where Place puts a batch.
type Decision int

const (
	// Same: the batch goes into the file being written (the first one,
	// for the stream's first batch).
	Same Decision = iota
	// Next: the file being written is closed (with Place's closing
	// batch), and the batch begins the next one.
	Next
	// Refuse: the trace has MaxFiles files and the batch is not written;
	// nor is any later one.
	Refuse
)

// Splitter places a stream's batches into files. Its methods are called
// from one goroutine at a time, in the stream's order.
type Splitter struct {
	slices  int // the file budget of slices
	files   int // files begun
	refused uint64
	cur     counts // the file being written

	// The name table as seen so far, for the bytes of names.
	names     int
	nameBytes int64

	// The books: base is the raw books at the last cut (what the files
	// before the one being written settled); last is the raw books of the
	// last batch placed, and lastBatch that batch, for a closing batch.
	base, last books0
	lastBatch  *timeline.Trace
}

// counts are what a file holds so far.
type counts struct {
	batches, slices int
	bytes           int64
	tracks          int // the tracks it has described
}

// books0 is a batch's running totals, as the recorder made them.
type books0 struct {
	d timeline.Drops
	l timeline.Ledger
}

// New returns a Splitter with a budget of fileSlices slices a file:
// FileSlices when 0 or more, otherwise fileSlices (at least 1; a batch
// over it goes alone in a file).
func New(fileSlices int) *Splitter {
	if fileSlices <= 0 || fileSlices > FileSlices {
		fileSlices = FileSlices
	}
	return &Splitter{slices: fileSlices}
}

// Budget returns the budget of slices a file.
func (s *Splitter) Budget() int { return s.slices }

// Files returns the files begun so far.
func (s *Splitter) Files() int { return s.files }

// Refused returns the batches refused so far.
func (s *Splitter) Refused() uint64 { return s.refused }

// Place decides where b goes and, unless it is refused, rewrites its
// Drops and Ledger to the books of its file. On Next it also returns the
// batch that closes the file before (its final books, no items), to be
// written to that file before it is closed.
func (s *Splitter) Place(b *timeline.Trace) (Decision, *timeline.Trace) {
	if s.refused > 0 {
		s.refused++
		return Refuse, nil
	}
	grown := s.growNames(b.Names)
	slices := len(b.Spans) + len(b.Frames)
	d := Same
	if s.files == 0 {
		s.files = 1
	} else if s.over(slices, s.estimate(b, grown, s.cur)) {
		if s.files == MaxFiles {
			s.refused = 1
			return Refuse, nil
		}
		d = Next
	}
	var closing *timeline.Trace
	if d == Next {
		closing = s.closing(s.last)
		s.base = s.last
		s.files++
		s.cur = counts{}
	}
	s.cur.bytes += s.estimate(b, grown, s.cur)
	s.cur.batches++
	s.cur.slices += slices
	s.cur.tracks = len(b.Tracks)
	s.last = books0{b.Drops, b.Ledger}
	s.lastBatch = &timeline.Trace{Process: b.Process, Names: b.Names, Tracks: b.Tracks}
	b.Drops, b.Ledger = s.rebase(s.last)
	return d, closing
}

// over reports whether a batch of slices slices and bytes bytes overflows
// the file being written.
func (s *Splitter) over(slices int, bytes int64) bool {
	c := s.cur
	return c.batches >= FileBatches || c.slices+slices > s.slices || c.bytes+bytes+batchBytes > FileBytes // and its closing batch
}

// Final returns the batch that closes the last file when batches were
// refused: no items, and the books of the run's end (the recorder's, the
// refused batches' items lost to its sink) rebased to the last file.
// It returns nil when none was refused: the last batch written stated
// the run's end.
func (s *Splitter) Final(d timeline.Drops, l timeline.Ledger) *timeline.Trace {
	if s.refused == 0 || s.lastBatch == nil {
		return nil
	}
	c := *s.lastBatch
	c.Drops, c.Ledger = s.rebase(books0{d, l})
	return &c
}

// rebase returns the books of the file being written, from the raw ones.
func (s *Splitter) rebase(raw books0) (timeline.Drops, timeline.Ledger) {
	d := books.Sub(raw.d, s.base.d)
	l := raw.l
	for k := range books.NumKinds {
		b, o := books.Of(&l, k), books.Of(&s.base.l, k)
		b.Issued -= o.Issued - o.Open // what the files before settled
		b.Delivered -= o.Delivered
		b.Evicted -= o.Evicted
		b.Sink -= o.Sink
	}
	return d, l
}

// closing returns the batch that closes the file being written, whose
// last batch had the raw books last: what was open then goes to the next
// file's books.
func (s *Splitter) closing(last books0) *timeline.Trace {
	c := *s.lastBatch
	c.Drops, c.Ledger = s.rebase(last)
	for k := range books.NumKinds {
		b := books.Of(&c.Ledger, k)
		b.Issued -= b.Open
		b.Open = 0
	}
	return &c
}

// growNames takes in the names new since the last batch (the table only
// grows) and returns the bytes they add.
func (s *Splitter) growNames(names []string) int64 {
	var n int64
	for _, name := range names[min(s.names, len(names)):] {
		n += int64(len(name)) + nameBytes
	}
	s.names = max(s.names, len(names))
	s.nameBytes += n
	return n
}

// estimate is EstimateBytes of b as the next batch of a file that holds
// c, its names grown by grown bytes.
func (s *Splitter) estimate(b *timeline.Trace, grown int64, c counts) int64 {
	return EstimateBytes(b, c.batches, s.nameBytes, grown, c.tracks)
}

// EstimateBytes bounds from above the bytes the Perfetto writer writes
// for batch b when b is the (batches+1)-th batch of its file, whose name
// table's names and text come to nameBytes, grown by grown since the
// batch before, and whose file has described tracks tracks so far.
//
// A name is interned once on each packet sequence that uses it, and the
// writer opens at most one sequence a batch: this batch's sequence may
// intern every name, and each sequence opened before it may intern the
// names new since it opened.
func EstimateBytes(b *timeline.Trace, batches int, nameBytes, grown int64, tracks int) int64 {
	n := int64(batchBytes)
	n += int64(len(b.Spans)+len(b.Frames)) * sliceBytes
	for i := range b.Spans {
		if b.Spans[i].Work != nil {
			n += workBytes
		}
	}
	n += int64(len(b.Flows)) * flowBytes
	n += int64(len(b.Samples)+len(b.Calibrations)) * sampleBytes
	n += nameBytes + grown*int64(batches)
	for _, t := range b.Tracks[min(tracks, len(b.Tracks)):] {
		n += trackBytes + int64(len(t.Name)+len(t.Queue.Device)+len(t.Queue.Flags))
	}
	return n
}
