package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/tracesplit"
	"github.com/framescope/framescope/timeline"
)

// asyncSink hands the recorder's batches to the Perfetto writer on a
// goroutine of its own, so that encoding sixty frames of zones holds up
// neither the program nor the collector that flushes (collect.go). The
// recorder hands a batch over for good (timeline.Sink), so the goroutine
// may write it later; at most sinkQueue wait, beyond which a flush waits
// for the writer, so memory stays bounded. A file is published (renamed
// to its path) once a batch is in it.
//
// The trace goes on in a next file (partPath) before a batch that would
// take its file past what Framescope's readers take (tracesplit: the
// budgets, and how each file's books carry over); past
// tracesplit.MaxFiles files the batches are refused, and the recorder
// counts what they held lost to its sink. Where the batches go is
// decided as they come, in order; the files are written on the
// goroutine.
type asyncSink struct {
	cfg   *config
	split *tracesplit.Splitter
	ch    chan sinkItem
	done  chan struct{}

	// The goroutine's, read after done.
	w     *perfetto.Writer
	file  *traceFile
	paths []string // the files begun, in order
	err   error    // the first error
}

// sinkItem is a batch for the goroutine: next says that it begins the
// next file, once closing (the books that close the file before) is
// written to that one.
type sinkItem struct {
	b, closing *timeline.Trace
	next       bool
}

const sinkQueue = 4

// errFull is the sink's answer to a batch past the last file.
var errFull = fmt.Errorf("the trace has %d files, the most it is cut into: the rest of the run is not written, and counted lost (sink) in the last file's books", tracesplit.MaxFiles)

func newAsyncSink(cfg *config, file *traceFile, o perfetto.Options) *asyncSink {
	s := &asyncSink{cfg: cfg, split: tracesplit.New(cfg.fileSpans), ch: make(chan sinkItem, sinkQueue), done: make(chan struct{}),
		w: perfetto.NewWriter(file, o), file: file, paths: []string{file.path}}
	go s.run()
	return s
}

func (s *asyncSink) run() {
	defer close(s.done)
	for it := range s.ch {
		if it.next {
			s.nextFile(it.closing)
		}
		err := s.w.WriteBatch(it.b)
		if err == nil {
			err = s.file.publish()
		}
		s.fail(err)
	}
}

func (s *asyncSink) fail(err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
}

// nextFile closes the file being written with the batch closing, and
// begins the next, recorded in the run directory.
func (s *asyncSink) nextFile(closing *timeline.Trace) {
	s.fail(s.w.WriteBatch(closing))
	s.fail(s.w.Close())
	s.fail(s.file.Close())
	path := partPath(s.cfg.out, len(s.paths)+1)
	s.fail(s.cfg.recordPart(path))
	s.paths = append(s.paths, path)
	s.file = &traceFile{path: path, tmp: tmpPath(path)}
	s.w.Reset(s.file)
}

// WriteBatch places b in its file and queues it, or refuses it past the
// last file; the writer's errors come at Close.
func (s *asyncSink) WriteBatch(b *timeline.Trace) error {
	d, closing := s.split.Place(b)
	if d == tracesplit.Refuse {
		return errFull
	}
	s.ch <- sinkItem{b: b, closing: closing, next: d == tracesplit.Next}
	return nil
}

// Close writes what is queued, and, where batches were refused, the
// books of the run's end (final, called once the recorder is closed)
// into the last file; then it closes the writer and the file. It says
// where the trace is when it is in several files.
func (s *asyncSink) Close(final func() (timeline.Drops, timeline.Ledger)) error {
	close(s.ch)
	<-s.done
	if s.split.Refused() > 0 {
		if c := s.split.Final(final()); c != nil {
			s.fail(s.w.WriteBatch(c))
			s.fail(s.file.publish())
		}
	}
	s.fail(s.w.Close())
	s.fail(s.file.Close())
	s.say()
	return s.err
}

// say tells where a trace of several files is: `framescope run` lists
// them from its run directory, so only without one, or past the last.
func (s *asyncSink) say() {
	n := s.split.Refused()
	if len(s.paths) < 2 || (s.cfg.record != "" && n == 0) {
		return
	}
	fmt.Fprintf(os.Stderr, "framescope layer: the trace is in %d files, each a whole trace that framescope reads (at most %d spans and frames each):\n", len(s.paths), s.split.Budget())
	for _, p := range s.paths {
		fmt.Fprintf(os.Stderr, "  %s\n", p)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "framescope layer: %v: %d batches\n", errFull, n)
	}
}

// isFull reports whether err says that batches were refused past the
// last file.
func isFull(err error) bool { return errors.Is(err, errFull) }
