// Package books owns the vocabulary of losses: the causes of
// timeline.Drops and the books of timeline.Ledger, their keys in every
// trace format and in framescope stats, which cause belongs to which book,
// and the balance Issued = Delivered + Open + lost that every book keeps.
package books

import "github.com/framescope/framescope/timeline"

// Cause is one count of timeline.Drops.
type Cause int

// The causes, in the order exporters write them.
const (
	QueryLimit Cause = iota
	NoFrame
	Closed
	Unended
	Unsubmitted
	Pending
	Overlapped
	RunAgain
	Abandoned
	Uncalibrated
	GPUSpans
	Spans
	Evicted
	Untimed
	Work
	Flows
	Frames
	Samples
	Sink
	Misuse
	NumCauses
)

var causeKeys = [NumCauses]string{
	QueryLimit: "query_limit", NoFrame: "no_frame", Closed: "closed", Unended: "unended",
	Unsubmitted: "unsubmitted", Pending: "pending", Overlapped: "overlapped", RunAgain: "run_again", Abandoned: "abandoned",
	Uncalibrated: "uncalibrated",
	GPUSpans:     "gpu_spans", Spans: "spans",
	Evicted: "evicted", Untimed: "untimed", Work: "work", Flows: "flows",
	Frames: "frames", Samples: "samples", Sink: "sink", Misuse: "misuse",
}

// String is the cause's key in every trace format and in framescope stats:
// "query_limit", "no_frame", "closed", ...
func (c Cause) String() string {
	if c < 0 || c >= NumCauses {
		return "unknown"
	}
	return causeKeys[c]
}

// CauseOf returns the cause whose key is s. It also reads the keys of
// traces written before the causes had their present names ("zones",
// "no_slot", "unmatched", "unwritten", "unconverted").
func CauseOf(s string) (Cause, bool) {
	for c, k := range causeKeys {
		if k == s {
			return Cause(c), true
		}
	}
	c, ok := formerKeys[s]
	return c, ok
}

var formerKeys = map[string]Cause{
	"zones": QueryLimit, "no_slot": NoFrame, "unmatched": Unended,
	"unwritten": Unsubmitted, "unconverted": Uncalibrated,
}

// Loss reports whether the cause counts data lost (every cause but
// Misuse), as timeline.Drops.Total, the rule's one owner, says.
func (c Cause) Loss() bool { return c >= 0 && c < NumCauses && loss[c] }

// loss is Loss of each cause: whether one item of it is in Drops.Total.
var loss = func() (t [NumCauses]bool) {
	for c := range NumCauses {
		var d timeline.Drops
		*Count(&d, c) = 1
		t[c] = d.Total() == 1
	}
	return t
}()

// Count returns d's count of cause c, for reading and setting.
func Count(d *timeline.Drops, c Cause) *uint64 {
	switch c {
	case QueryLimit:
		return &d.QueryLimit
	case NoFrame:
		return &d.NoFrame
	case Closed:
		return &d.Closed
	case Unended:
		return &d.Unended
	case Unsubmitted:
		return &d.Unsubmitted
	case Pending:
		return &d.Pending
	case Overlapped:
		return &d.Overlapped
	case RunAgain:
		return &d.RunAgain
	case Abandoned:
		return &d.Abandoned
	case Uncalibrated:
		return &d.Uncalibrated
	case GPUSpans:
		return &d.GPUSpans
	case Spans:
		return &d.Spans
	case Evicted:
		return &d.Evicted
	case Untimed:
		return &d.Untimed
	case Work:
		return &d.Work
	case Flows:
		return &d.Flows
	case Frames:
		return &d.Frames
	case Samples:
		return &d.Samples
	case Sink:
		return &d.Sink
	case Misuse:
		return &d.Misuse
	}
	return new(uint64)
}

// Add returns the sum of two Drops.
func Add(d, o timeline.Drops) timeline.Drops {
	for c := range NumCauses {
		*Count(&d, c) += *Count(&o, c)
	}
	return d
}

// Sub returns d minus o, count by count (the change since o).
func Sub(d, o timeline.Drops) timeline.Drops {
	for c := range NumCauses {
		*Count(&d, c) -= *Count(&o, c)
	}
	return d
}

// GPUZones is the number of GPU zones of d that never reached the
// timeline: the zone book's own causes.
func GPUZones(d timeline.Drops) uint64 {
	var n uint64
	for c := range NumCauses {
		if k, own := KindOf(c); own && k == ZoneBook {
			n, _ = timeline.Sum(n, *Count(&d, c)) // saturates
		}
	}
	return n
}
