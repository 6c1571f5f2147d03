package timeline

import _ "unsafe" // for go:linkname

// nanotime is the runtime's CLOCK_MONOTONIC reading (vDSO on Linux).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the host CLOCK_MONOTONIC time in nanoseconds, the clock every
// time in a Trace is on. It does not allocate.
func Now() int64 { return nanotime() }
