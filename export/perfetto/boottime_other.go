//go:build !linux

package perfetto

// bootOffset is 0 where there is no CLOCK_BOOTTIME to read: BOOTTIME is
// then written equal to MONOTONIC.
func bootOffset() int64 { return 0 }
