package profiler

import "github.com/framescope/framescope/internal/record"

// NewWith makes a Profiler whose recorder runs with o, for the tests
// that set what Options leaves at its defaults.
func NewWith(o record.Options) *Profiler { return newProfiler(o) }

// RecorderOf returns p's recorder, for the tests that read its counts.
func RecorderOf(p *Profiler) *record.Recorder { return p.rec }
