// Package leakcheck fails a test whose goroutines outlive it, as goleak
// does: Check notes the goroutines running when it is called, and at the
// test's cleanup waits a little for every goroutine started since to end,
// then reports the stacks of those still running.
//
//	func TestClose(t *testing.T) {
//		leakcheck.Check(t, time.Second)
//		...
//	}
//
// Goroutines of the runtime and of the testing package are not counted.
// Tests that use it must not run in parallel with others.
package leakcheck

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Check registers, at tb's cleanup, a check that every goroutine started
// since this call has ended within wait.
func Check(tb testing.TB, wait time.Duration) {
	tb.Helper()
	before := map[uint64]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	tb.Cleanup(func() {
		deadline := time.Now().Add(wait)
		for {
			left := Since(before)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				var b strings.Builder
				for _, g := range left {
					b.WriteString(g.stack)
					b.WriteString("\n\n")
				}
				tb.Errorf("%d goroutines outlived the test by %v:\n%s", len(left), wait, b.String())
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// Goroutine is one goroutine's ID and stack.
type Goroutine struct {
	id    uint64
	stack string
}

// Snapshot returns the IDs of the goroutines running now.
func Snapshot() map[uint64]bool {
	ids := map[uint64]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return ids
}

// Since returns the goroutines running now that were not in before, less
// those of the runtime and the testing package.
func Since(before map[uint64]bool) []Goroutine {
	var out []Goroutine
	for _, g := range goroutines() {
		if !before[g.id] && !ignored(g.stack) {
			out = append(out, g)
		}
	}
	return out
}

// Stacks formats goroutines' stacks for a message.
func Stacks(gs []Goroutine) string {
	var b strings.Builder
	for _, g := range gs {
		b.WriteString(g.stack)
		b.WriteString("\n\n")
	}
	return b.String()
}

func goroutines() []Goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []Goroutine
	self := goid()
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := bytes.Cut(block, []byte("\n"))
		f := strings.Fields(string(head)) // goroutine N [state]:
		if len(f) < 2 || f[0] != "goroutine" {
			continue
		}
		id, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || id == self {
			continue
		}
		out = append(out, Goroutine{id: id, stack: string(block)})
	}
	return out
}

// goid is the calling goroutine's ID, from its stack's first line.
func goid() uint64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := strings.Fields(string(b[:n]))
	if len(f) < 2 {
		return 0
	}
	id, _ := strconv.ParseUint(f[1], 10, 64)
	return id
}

// ignored reports whether a goroutine belongs to the runtime or the
// testing package rather than to the code under test.
func ignored(stack string) bool {
	for _, s := range []string{
		"testing.(*T).Run(", "testing.(*T).Parallel(", "testing.tRunner.func1", "testing.runFuzzing",
		"runtime.goexit0", "runtime/trace.", "os/signal.signal_recv", "runtime.ensureSigM",
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}
