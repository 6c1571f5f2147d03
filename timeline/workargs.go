package timeline

import (
	"fmt"
	"strconv"
)

// WorkArgs is a GPU zone's work as a trace format carries it, each part
// read but not yet held to the rules: one count per statistic counted,
// and the two keys of a zone without counts. Every reader (Chrome JSON,
// Perfetto) fills one from what it found and calls Work, so that the
// same inputs are refused with the same messages in every format.
type WorkArgs struct {
	Counted PipelineStats // the statistics with a count
	Count   [NumPipelineStats]uint64
	// Stats is work_stats: the statistics a zone without counts would
	// have counted, or, on a counted zone, those it counted ("" for none).
	Stats    PipelineStats
	HasStats bool
	// Missing is work_missing: why a zone has no counts.
	Missing    WorkMissing
	HasMissing bool
}

// The keys a trace gives a zone's work besides one per statistic
// (StatKey): why it has no counts, and the statistics it would have
// counted.
const (
	KeyWorkMissing = "work_missing"
	KeyWorkStats   = "work_stats"
)

// Work returns the work a describes, or an error saying which rule it
// breaks: a reason other than "counted" for a zone without counts, and
// then no counts; on a counted zone, work_stats (if given) naming exactly
// the statistics counted. Nothing is invented: a statistic is counted
// only where a count was given.
func (a *WorkArgs) Work() (Work, error) {
	if !a.HasMissing {
		if a.HasStats && a.Stats != a.Counted {
			return Work{}, fmt.Errorf("%q says %q, but the counts are of %q", KeyWorkStats, a.Stats, a.Counted)
		}
		return Work{Stats: a.Counted, Count: a.Count}, nil
	}
	if a.Missing == WorkCounted || a.Missing >= NumWorkMissing {
		return Work{}, fmt.Errorf("%q is %q, not a reason a zone has no counts (%s)", KeyWorkMissing, a.Missing, workReasons)
	}
	if a.Counted != 0 {
		return Work{}, fmt.Errorf("%q with counts (of %q)", KeyWorkMissing, a.Counted)
	}
	return Work{Stats: a.Stats, Missing: a.Missing}, nil
}

// NotACount is the error for a statistic whose value is no count, text
// its value as the trace wrote it.
func NotACount(i int, text string) error {
	return fmt.Errorf("%q is %s, not a count (an integer from 0 to 18446744073709551615)", StatKey(i), text)
}

// NotAReason is the error for a work_missing that names no reason a zone
// has no counts, text its value as the trace wrote it.
func NotAReason(text string) error {
	return fmt.Errorf("%q is %s, not a reason a zone has no counts (%s)", KeyWorkMissing, text, workReasons)
}

// NotAStatsList is the error for a work_stats that is not a string.
func NotAStatsList(text string) error {
	return fmt.Errorf("%q is %s, not a string", KeyWorkStats, text)
}

// workReasons lists the keys of the reasons a zone has no counts.
var workReasons = func() string {
	s := ""
	for m := WorkCounted + 1; m < NumWorkMissing; m++ {
		if s != "" {
			s += ", "
		}
		s += strconv.Quote(m.String())
	}
	return s
}()
