//go:build linux

package timeline

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestNowIsClockMonotonic checks that Now reads CLOCK_MONOTONIC, the clock
// every time in a Trace is on: a reading falls between two readings of it
// taken before and after.
func TestNowIsClockMonotonic(t *testing.T) {
	read := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return ts.Nano()
	}
	for range 1000 {
		before := read()
		now := Now()
		after := read()
		if now < before || now > after {
			t.Fatalf("Now() = %d, not within CLOCK_MONOTONIC readings %d and %d", now, before, after)
		}
	}
}
