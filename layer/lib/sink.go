package main

import (
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/timeline"
)

// asyncSink hands the recorder's batches to the Perfetto writer on a
// goroutine of its own: the recorder flushes at a frame's end, which the
// layer reaches inside the program's present or submit, and encoding
// sixty frames of zones there was a hitch every sixty frames. The
// recorder hands a batch over for good (timeline.Sink), so the goroutine
// may write it later; at most sinkQueue wait, beyond which a flush waits
// for the writer, so memory stays bounded. The file is published (renamed
// to its path) once a batch is in it.
type asyncSink struct {
	w    *perfetto.Writer
	file *traceFile
	ch   chan *timeline.Trace
	done chan struct{}
	err  error // the writer's first error, read after done
}

const sinkQueue = 4

func newAsyncSink(w *perfetto.Writer, file *traceFile) *asyncSink {
	s := &asyncSink{w: w, file: file, ch: make(chan *timeline.Trace, sinkQueue), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *asyncSink) run() {
	defer close(s.done)
	for b := range s.ch {
		err := s.w.WriteBatch(b)
		if err == nil {
			err = s.file.publish()
		}
		if err != nil && s.err == nil {
			s.err = err
		}
	}
}

// WriteBatch queues b; the writer's errors come at Close.
func (s *asyncSink) WriteBatch(b *timeline.Trace) error {
	s.ch <- b
	return nil
}

// Close writes what is queued and closes the writer.
func (s *asyncSink) Close() error {
	close(s.ch)
	<-s.done
	if err := s.w.Close(); s.err == nil {
		s.err = err
	}
	return s.err
}
