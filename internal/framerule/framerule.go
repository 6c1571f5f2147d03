// Package framerule says which of a batch's frames the trace writers
// write: those the readers take. A reader refuses a whole trace for one
// frame that breaks the model (timeline.Trace.Validate: an ID of 0, an
// ID twice, an end before the start; and Perfetto's clock, a time before
// its zero), so the writers leave such frames out and count them.
package framerule

import "github.com/framescope/framescope/timeline"

// Batch is the frames of one batch written so far. Its zero value is
// ready.
type Batch struct{ ids map[uint64]bool }

// Reset begins a batch.
func (b *Batch) Reset() { clear(b.ids) }

// Take reports whether f may be written: a non-zero ID that no frame of
// the batch taken before has, begun at or after the clock's zero, and
// open (End 0) or ended no earlier than it began. A frame it takes keeps
// its ID.
func (b *Batch) Take(f timeline.Frame) bool {
	if f.ID == 0 || f.Start < 0 || f.End != 0 && f.End < f.Start || b.ids[f.ID] {
		return false
	}
	if b.ids == nil {
		b.ids = map[uint64]bool{}
	}
	b.ids[f.ID] = true
	return true
}
