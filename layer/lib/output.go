package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
)

// output is the trace file the layer streams to: every flushEvery frames
// a batch, so that a program killed mid-run leaves a trace that reads
// back up to its last flush.
type output struct {
	f *os.File
	w *perfetto.Writer
}

const flushEvery = 60

// outPath is $FRAMESCOPE_OUT, or framescope-PROGRAM-PID.perfetto-trace in
// the working directory.
func outPath() string {
	if p := os.Getenv("FRAMESCOPE_OUT"); p != "" {
		return p
	}
	return "framescope-" + filepath.Base(os.Args[0]) + "-" + strconv.Itoa(os.Getpid()) + ".perfetto-trace"
}

// start makes the profiler, streaming to the output (l.mu held).
func (l *layer) start() {
	o := profiler.Options{}
	path := outPath()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: %v: the trace is kept in memory and lost at exit\n", err)
	} else {
		l.out = &output{f: f, w: perfetto.NewWriter(f, perfetto.Options{RenderStages: true})}
		o.Sink, o.FlushEvery = l.out.w, flushEvery
	}
	l.p = profiler.New(o)
	if n, err := strconv.ParseUint(os.Getenv("FRAMESCOPE_FRAME_EVERY"), 10, 32); err == nil {
		l.frameEvery = n
	}
}

// atExit closes the profiler (what the GPU finished is collected, the
// rest counted) and the trace.
func (l *layer) atExit() {
	l.mu.Lock()
	p, out := l.p, l.out
	l.p, l.out = nil, nil
	l.mu.Unlock()
	if p == nil {
		return
	}
	if err := p.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: %v\n", err)
	}
	if out == nil {
		return
	}
	err := out.w.Close()
	if cerr := out.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: writing %s: %v\n", out.f.Name(), err)
	}
}
