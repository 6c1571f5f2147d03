package main

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/framescope/framescope/profiler"
)

// CPU span kinds (shim.h's FS_CPU_*), and their names.
const (
	cpuSubmit  = 1
	cpuAcquire = 3
)

var cpuNames = [...]string{
	1: "vkQueueSubmit",
	2: "vkQueuePresentKHR",
	3: "vkAcquireNextImageKHR",
	4: "vkWaitForFences",
	5: "vkWaitSemaphores",
	6: "vkQueueWaitIdle",
	7: "vkDeviceWaitIdle",
}

// cpuSpans are the open CPU spans of the program's threads, each thread
// on a track of its own, handed to the shim as numbers: a span is open
// for the length of one hooked call.
type cpuSpans struct {
	mu     sync.Mutex
	names  [len(cpuNames)]profiler.Name
	tracks map[int]profiler.CPUTrack
	open   map[uint64]openSpan
	next   uint64
}

type openSpan struct {
	s    profiler.Span
	what int
}

// maxThreads bounds the tracks: a program that makes a thread for each
// call would grow them without bound; the rest share one.
const maxThreads = 1024

// cpuBegin opens a span of kind what on thread tid's track.
func (l *layer) cpuBegin(what, tid int) uint64 {
	id, _ := l.cpuSpanBegin(what, tid)
	return id
}

// cpuSpanBegin is cpuBegin, with the span begun.
func (l *layer) cpuSpanBegin(what, tid int) (uint64, profiler.Span) {
	p := l.profiler()
	if p == nil || what <= 0 || what >= len(cpuNames) {
		return 0, profiler.Span{}
	}
	if what == cpuSubmit || what == cpuAcquire {
		l.inFrame()
	}
	c := &l.cpu
	c.mu.Lock()
	if c.tracks == nil {
		c.tracks, c.open = map[int]profiler.CPUTrack{}, map[uint64]openSpan{}
		for i, n := range cpuNames {
			if n != "" {
				c.names[i] = p.Name(n)
			}
		}
	}
	t, ok := c.tracks[tid]
	if !ok {
		if len(c.tracks) >= maxThreads {
			tid = -1 // its calls look it up here each time: no name read for them
		}
		if t, ok = c.tracks[tid]; !ok {
			name := "other threads"
			if tid >= 0 {
				name = threadName(len(c.tracks)+1, tid)
			}
			t = p.CPUTrack(name)
			c.tracks[tid] = t
		}
	}
	c.next++
	id := c.next
	name := c.names[what]
	c.mu.Unlock()
	s := t.Span(name)
	c.mu.Lock()
	c.open[id] = openSpan{s, what}
	c.mu.Unlock()
	return id, s
}

func (l *layer) cpuEnd(id uint64) {
	c := &l.cpu
	c.mu.Lock()
	o, ok := c.open[id]
	delete(c.open, id)
	c.mu.Unlock()
	if !ok {
		return
	}
	o.s.End()
	if o.what == cpuSubmit {
		l.submitted()
	}
}

// threadName names the track of the n-th thread to call into the layer,
// tid: "thread 1 (vkcube)", its place and its name as the kernel has it
// (/proc/self/task/TID/comm), not its ID, so that the same thread of two
// runs of a program has one track name, and framescope diff compares
// its spans.
func threadName(n, tid int) string {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", tid))
	if c := strings.TrimSpace(string(comm)); err == nil && c != "" {
		return fmt.Sprintf("thread %d (%s)", n, c)
	}
	return fmt.Sprintf("thread %d", n)
}
