package perfetto

import (
	"fmt"
	"io"

	"github.com/framescope/framescope/timeline"
)

// CutError is the error Read returns, with the trace, for input that ends
// inside a batch: a trace cut short by a writer killed mid-write or a
// full disk. The trace holds what came before the cut, exactly as a
// reader of those bytes alone would read it. What the cut part held is
// unknown, so nothing of it is counted anywhere: the error says where the
// trace was cut and how much of it is not read.
//
// The Writer ends each batch with a mark (the "framescope batches"
// counter), and Read keeps a trace that has marks up to its last one: the
// batch in progress at the cut is left out whole, so that the books of
// the trace (drops, ledger) agree with its spans. A trace without marks
// (written by an older Framescope or by another program) is kept up to
// its last whole packet; its slices that began but had not ended are
// counted in Drops.Unended, as before.
//
// A trace that ends exactly at the end of a batch (or, without marks, of
// a packet) is whole as far as any reader can tell, and reads back with
// no error.
type CutError struct {
	// Size is the bytes the input held (after decompression, for a
	// compressed file).
	Size int64
	// Read is the bytes read back: up to the end of the last whole batch
	// (Marked) or packet. The Size-Read bytes after it are not read.
	Read int64
	// Batches is the whole batches read back (Marked only).
	Batches uint64
	// Marked: the trace marks its batches, and Read ends at a batch's end.
	Marked bool
	// Frame is the last frame that ended in what is read back, 0 if none.
	Frame uint64
}

func (e *CutError) Error() string {
	what, upTo := "a packet in progress", "its last whole packet"
	if e.Marked {
		what = "a batch in progress"
		upTo = fmt.Sprintf("its last whole batch (%d batches, %d bytes)", e.Batches, e.Read)
	}
	s := fmt.Sprintf("perfetto: the trace was cut short at byte %d: the last %d bytes (%s) are not read; it reads back up to %s", e.Size, e.Size-e.Read, what, upTo)
	if e.Frame != 0 {
		s += fmt.Sprintf(", to frame %d", e.Frame)
	}
	return s
}

// Unwrap makes a CutError an io.ErrUnexpectedEOF, as Read's error for a
// trace cut short has always been.
func (e *CutError) Unwrap() error { return io.ErrUnexpectedEOF }

// mark is what the reader had read at the end of the last whole batch:
// the lengths of what only grows, and the values of what is overwritten.
// The events of the tracks touched since (rtrack.epoch) are cut back to
// rtrack.kept.
type mark struct {
	at                                    int64 // bytes read
	tracks, order, names, samples, calibs int
	drops                                 timeline.Drops
	ledger                                timeline.Ledger
	process                               timeline.Process
	unended                               uint64
}

// commit takes the end of a batch: everything read so far is whole.
func (rd *reader) commit() {
	t := rd.t
	rd.mark = mark{at: rd.pktEnd, tracks: len(t.Tracks), order: len(rd.order), names: len(t.Names),
		samples: len(t.Samples), calibs: len(t.Calibrations), drops: t.Drops, ledger: t.Ledger,
		process: t.Process, unended: rd.unended}
	rd.batches++
	rd.epoch++
}

// addEvent adds a slice begin or end to rt, first noting how many events
// rt had at the last batch end if it is the first since.
func (rd *reader) addEvent(rt *rtrack, r rev) {
	if rt.epoch != rd.epoch {
		rt.epoch, rt.kept = rd.epoch, rt.events.n
	}
	rt.events.add(r)
}

// rollback forgets everything read after the last batch end.
func (rd *reader) rollback() {
	m, t := &rd.mark, rd.t
	for _, rt := range rd.order[:m.order] {
		if rt.epoch == rd.epoch {
			rt.events.truncate(rt.kept)
		}
	}
	rd.order = cutTo(rd.order, m.order)
	t.Tracks = cutTo(t.Tracks, m.tracks)
	t.Names = cutTo(t.Names, m.names)
	t.Samples = cutTo(t.Samples, m.samples)
	t.Calibrations = cutTo(t.Calibrations, m.calibs)
	t.Drops, t.Ledger, t.Process, rd.unended = m.drops, m.ledger, m.process, m.unended
}

// cutTo is s cut to n elements, nil when none, as a reader that never
// read the rest would have it.
func cutTo[T any](s []T, n int) []T {
	if n == 0 {
		return nil
	}
	return s[:n:n]
}

// truncate cuts l to its first n revs.
func (l *revs) truncate(n int) {
	keep := (n + revChunk - 1) / revChunk
	l.chunks = l.chunks[:keep]
	if keep > 0 {
		last := &l.chunks[keep-1]
		*last = (*last)[:n-(keep-1)*revChunk]
	}
	l.n = n
}

// cutShort returns the CutError of the input read, nil when it is whole:
// parse's error is a cut inside a packet, or a trace with marks goes on
// past its last.
func (rd *reader) cutShort(err error) *CutError {
	if err == nil && (!rd.marked || rd.mark.at == rd.size) {
		return nil
	}
	if !rd.marked {
		return &CutError{Size: rd.size, Read: rd.whole}
	}
	return &CutError{Size: rd.size, Read: rd.mark.at, Batches: rd.batches, Marked: true}
}

// lastFrame is the largest frame ID of t's frames, 0 if none.
func lastFrame(t *timeline.Trace) uint64 {
	var f uint64
	for _, fr := range t.Frames {
		f = max(f, fr.ID)
	}
	return f
}
