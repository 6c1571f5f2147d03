// Package reach hands the live view what a profiler.Profiler keeps
// unexported: its recorder, and the channel its Close closes. Package
// profiler sets Profiler when it loads; live calls it.
package reach

import "github.com/framescope/framescope/internal/record"

// Profiler returns the recorder of p, a *profiler.Profiler, and a channel
// closed once p's Close has collected and flushed everything.
var Profiler func(p any) (rec *record.Recorder, done <-chan struct{})
