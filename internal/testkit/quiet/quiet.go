// Package quiet keeps the tests that time the machine apart from the
// tests that load it most: `go test ./...` runs packages side by side,
// and on a 2-core machine the Vulkan layer's tests (programs under
// lavapipe, one after another) made the performance gate's identical runs
// spread by +28% and its +25% runs go uncaught (TestDiffGateOnLavapipe,
// 64 of 100 where it wants 90).
//
//	quiet.Hold(t) // at the top of a test that times, or loads, the machine
//
// Hold takes an exclusive lock on a file in the temporary directory until
// the test ends, so such tests run one at a time, whatever package they
// are in.
package quiet

import (
	"os"
	"path/filepath"
	"testing"
)

// Hold waits for, and holds until tb's end, the lock of the tests that
// time or load the machine.
func Hold(tb testing.TB) {
	tb.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "framescope-quiet.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		tb.Fatalf("quiet: %v", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		tb.Fatalf("quiet: %v", err)
	}
	tb.Cleanup(func() { f.Close() }) // closing the file releases the lock
}
