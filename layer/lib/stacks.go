package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// stacksAfter, from FRAMESCOPE_TEST_STACKS, a knob for tests on machines
// without a debugger: that long after the profiler starts, the layer
// writes to stderr every goroutine's stack and, for each of the
// process's threads, the kernel's word on where it waits (wchan and
// syscall), then goes on. A process that hangs under the layer says
// where.
func stacksAfter(d time.Duration) {
	if d <= 0 {
		return
	}
	go func() {
		time.Sleep(d)
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var b strings.Builder
		fmt.Fprintf(&b, "framescope layer: process %d after %v (FRAMESCOPE_TEST_STACKS)\n", os.Getpid(), d)
		maps, _ := os.ReadFile("/proc/self/maps")
		tasks, _ := filepath.Glob("/proc/self/task/*")
		for _, t := range tasks {
			comm, _ := os.ReadFile(t + "/comm")
			wchan, _ := os.ReadFile(t + "/wchan")
			sys, _ := os.ReadFile(t + "/syscall")
			f := strings.Fields(string(sys))
			where := ""
			if len(f) > 1 {
				where = mappedAt(string(maps), f[len(f)-1])
			}
			fmt.Fprintf(&b, "thread %s %s: wchan %s, syscall %s%s\n", filepath.Base(t), strings.TrimSpace(string(comm)),
				wchan, strings.TrimSpace(string(sys)), where)
		}
		b.Write(buf)
		os.Stderr.WriteString(b.String())
	}()
}

// mappedAt names the file mapped at the hexadecimal address pc in maps
// (/proc/self/maps), with pc's offset in it.
func mappedAt(maps, pc string) string {
	a, err := strconv.ParseUint(strings.TrimPrefix(pc, "0x"), 16, 64)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(maps, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if ok && err1 == nil && err2 == nil && err3 == nil && a >= l && a < h {
			return fmt.Sprintf(" in %s+%#x", f[5], a-l+off)
		}
	}
	return ""
}
