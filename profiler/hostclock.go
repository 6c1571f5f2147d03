package profiler

import (
	"fmt"

	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
	"golang.org/x/sys/unix"
)

// HostClock is the host clock GPU time is placed on.
type HostClock int

const (
	// ClockMonotonic is CLOCK_MONOTONIC, the clock of CPU spans and of every
	// trace Framescope writes. The default.
	ClockMonotonic HostClock = iota
	// ClockMonotonicRaw is CLOCK_MONOTONIC_RAW, not slewed by NTP, for
	// applications whose own timestamps are on it. Zones of a context on
	// this clock come back from Collect on it; they are not added to the
	// timeline, whose CPU spans are on CLOCK_MONOTONIC.
	ClockMonotonicRaw
)

func (c HostClock) String() string {
	if c == ClockMonotonicRaw {
		return "CLOCK_MONOTONIC_RAW"
	}
	return "CLOCK_MONOTONIC"
}

func (c HostClock) domain() vk.TimeDomain {
	if c == ClockMonotonicRaw {
		return vk.TimeDomainClockMonotonicRaw
	}
	return vk.TimeDomainClockMonotonic
}

// now reads the clock in ns.
func (c HostClock) now() int64 {
	if c != ClockMonotonicRaw {
		return timeline.Now()
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

func (c HostClock) check() error {
	if c != ClockMonotonic && c != ClockMonotonicRaw {
		return fmt.Errorf("profiler: unknown host clock %d", int(c))
	}
	return nil
}
