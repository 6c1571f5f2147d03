package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/reach"
	"github.com/framescope/framescope/internal/tracesplit"
	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
	"github.com/framescope/framescope/timeline"
)

// output is the trace file the layer streams to: every flushEvery frames
// a batch, so that a program killed mid-run leaves a trace that reads
// back up to its last flush; a long or busy run goes on in more files
// (asyncSink), each within what Framescope's readers take. With a
// flight-recorder window nothing is streamed: the window is written at
// exit (at most tracesplit.BatchSpans spans, within the readers' limits
// too).
type output struct {
	f *traceFile
	w *asyncSink // nil with a window
}

const (
	flushEvery = 60
	// maxOverBudget bounds the traces of frames over a budget the layer
	// writes (OUT-over-FRAME.perfetto-trace); later ones are counted.
	maxOverBudget = 16
)

// start makes the profiler, streaming to the output or keeping a window,
// and the live view where asked (l.mu held).
func (l *layer) start() {
	c := readConfig()
	c.claimPath()
	l.cfg, l.frameEvery = c, c.frameEvery
	stacksAfter(c.stacks)
	// A frame ends inside the program's vkQueuePresentKHR or
	// vkQueueSubmit: its boundary never waits for a batch being built.
	o := profiler.Options{WindowFrames: c.window, MaxSpans: tracesplit.BatchSpans, FramesNoWait: true}
	l.out = &output{f: &traceFile{path: c.out, tmp: tmpPath(c.out)}}
	if c.window == 0 {
		l.out.w = newAsyncSink(&l.cfg, l.out.f, perfetto.Options{RenderStages: c.renderStages})
		o.Sink = l.out.w // flushed by the collector (collect.go), outside the program's calls
	} else {
		o.CPUBudget, o.GPUBudget = c.cpuBudget, c.gpuBudget
		o.OnBudget = l.overBudget
	}
	l.p = profiler.New(o)
	if c.live != "" {
		l.serveLive(c.live)
	}
}

// traceFile is the file a trace is written to: under a temporary name
// beside its path, made at the first write, and renamed to its path once
// it holds a batch (or, with a window, the whole trace), so that nothing
// at the path is touched until there is a trace to put there, and a
// program that ends before that leaves what was there as it was.
type traceFile struct {
	path, tmp string
	f         *os.File
	shown     bool // renamed to path
}

func (t *traceFile) Write(p []byte) (int, error) {
	if t.f == nil {
		f, err := os.OpenFile(t.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_CLOEXEC, 0o666)
		if err != nil {
			return 0, err
		}
		t.f = f
	}
	return t.f.Write(p)
}

// publish renames the file to its path, once it holds something; never
// over what is not a regular file (a directory, a device): the trace
// then stays at its temporary name, which the error names.
func (t *traceFile) publish() error {
	if t.shown || t.f == nil {
		return nil
	}
	if st, err := os.Lstat(t.path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v): the trace is left at %s", t.path, st.Mode().Type(), t.tmp)
	}
	if err := os.Rename(t.tmp, t.path); err != nil {
		return fmt.Errorf("%w: the trace is left at %s", err, t.tmp)
	}
	t.shown = true
	return nil
}

// Close publishes the file and closes it.
func (t *traceFile) Close() error {
	if t.f == nil {
		return nil
	}
	err := t.publish()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// overBudget writes a frame found over a budget, with the window before
// it, beside the output, on a goroutine: it is called inside the
// program's present.
func (l *layer) overBudget(ob profiler.OverBudget) {
	if l.overs.Add(1) > maxOverBudget {
		return
	}
	path := fmt.Sprintf("%s-over-%d.perfetto-trace", strings.TrimSuffix(l.cfg.out, ".perfetto-trace"), ob.Frame)
	l.writing.Add(1)
	go func() {
		defer l.writing.Done()
		if err := writeTrace(path, ob.Trace, l.cfg.renderStages); err != nil {
			fmt.Fprintf(os.Stderr, "framescope layer: %v\n", err)
		}
	}()
}

// writeTrace writes t to a new file at path.
func writeTrace(path string, t *timeline.Trace, stages bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = encode(f, t, stages)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// encode writes t as one Perfetto trace.
func encode(w io.Writer, t *timeline.Trace, stages bool) error {
	pw := perfetto.NewWriter(w, perfetto.Options{RenderStages: stages})
	if err := pw.Write(t); err != nil {
		return err
	}
	return pw.Close()
}

// serveLive serves the live view on addr, as an application mounts it.
func (l *layer) serveLive(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: the live view: %v\n", err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/framescope/", live.Handler(l.p))
	fmt.Fprintf(os.Stderr, "framescope layer: the live view is at http://%s/debug/framescope/\n", ln.Addr())
	go http.Serve(ln, mux)
}

// exitBudget bounds the exit handler: a driver being torn down with the
// process (NVIDIA's, while another thread of the program still submits)
// may never return from a call the profiler's goroutines make, and a
// program must end when it asks to.
const exitBudget = 2 * time.Second

// atExit closes the profiler (what the GPU finished is collected, the
// rest counted) and the trace: the stream's end, or the window; within
// exitBudget, or not at all (the stream holds what was flushed by then).
func (l *layer) atExit() {
	l.mu.Lock()
	p, out := l.p, l.out
	l.p, l.out = nil, nil
	l.mu.Unlock()
	if p == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.finish(p, out)
	}()
	select {
	case <-done:
	case <-time.After(exitBudget):
		fmt.Fprintf(os.Stderr, "framescope layer: closing the profiler took more than %v at exit; the trace holds what was written before\n", exitBudget)
	}
}

// finish closes p and out.
func (l *layer) finish(p *profiler.Profiler, out *output) {
	if err := p.CloseAtExit(); err != nil && !isFull(err) { // the program's GPU work may still run; the sink says it is full
		fmt.Fprintf(os.Stderr, "framescope layer: %v\n", err)
	}
	l.writing.Wait() // the frames over budget, written beside
	if n := l.overs.Load(); n > maxOverBudget {
		fmt.Fprintf(os.Stderr, "framescope layer: %d frames over budget; the first %d written\n", n, maxOverBudget)
	}
	if n := l.timedFrames.Load(); n > 0 && !l.presented.Load() {
		fmt.Fprintf(os.Stderr, "framescope layer: the program never presented nor marked a frame: %d frames ended at the first submission %v after their start, the first %v (-frame-every N ends one every N submissions)\n", n, timedFrame, l.cfg.firstTimed)
	}
	if out == nil {
		return
	}
	var err error
	if out.w != nil {
		err = out.w.Close(func() (timeline.Drops, timeline.Ledger) { // the books of the run's end
			rec, _ := reach.Profiler(p)
			st := rec.Stats()
			return st.Drops, st.Ledger
		})
	} else {
		err = encode(out.f, p.Dump(), l.cfg.renderStages)
		if cerr := out.f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "framescope layer: writing %s: %v\n", out.f.path, err)
	}
}
