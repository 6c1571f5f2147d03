package perfetto

import (
	"github.com/framescope/framescope/timeline"
	"golang.org/x/sys/unix"
)

// bootOffset returns CLOCK_BOOTTIME - CLOCK_MONOTONIC now: the time the
// machine has spent suspended. The clock snapshot carries it so that
// BOOTTIME-based data from other sources lines up.
func bootOffset() int64 {
	var boot unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil {
		return 0
	}
	return max(0, boot.Nano()-timeline.Now())
}
