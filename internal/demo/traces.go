package demo

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"

	"github.com/framescope/framescope/export/chrome"
	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

// Output file names under -out.
const (
	perfettoFile = "triangle.perfetto-trace"
	chromeFile   = "triangle.json"
	pprofFile    = "triangle.pb.gz"
)

// traceFiles is the recorder's sink: each batch goes to the Perfetto and
// Chrome writers as it comes, so that a run cut short leaves both files
// readable up to the last flush, and into one merged Trace for the pprof
// profile and the summary.
type traceFiles struct {
	dir    string
	pfile  *os.File
	pw     *perfetto.Writer
	cfile  *os.File
	cbuf   *bufio.Writer
	cw     *chrome.Writer
	all    timeline.Trace
	closed bool
}

func createTraceFiles(dir string) (*traceFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tf := &traceFiles{dir: dir}
	var err error
	if tf.pfile, err = os.Create(filepath.Join(dir, perfettoFile)); err != nil {
		return nil, err
	}
	if tf.cfile, err = os.Create(filepath.Join(dir, chromeFile)); err != nil {
		tf.pfile.Close()
		return nil, err
	}
	tf.pw = perfetto.NewWriter(tf.pfile, perfetto.Options{})
	tf.cbuf = bufio.NewWriterSize(tf.cfile, 64<<10)
	tf.cw = chrome.NewWriter(tf.cbuf)
	return tf, nil
}

// WriteBatch implements timeline.Sink.
func (tf *traceFiles) WriteBatch(b *timeline.Trace) error {
	if tf.closed {
		return errors.New("trace files already closed")
	}
	err1 := tf.pw.WriteBatch(b)
	err2 := tf.cw.WriteBatch(b)
	if err2 == nil {
		err2 = tf.cbuf.Flush()
	}
	tf.merge(b)
	return errors.Join(err1, err2)
}

// merge appends a batch to the whole trace: names, tracks and drops are
// the running totals, the rest is new; flows index the batch's spans.
func (tf *traceFiles) merge(b *timeline.Trace) {
	a := &tf.all
	a.Process = b.Process
	a.Names = b.Names
	a.Tracks = b.Tracks
	a.Drops = b.Drops
	base := len(a.Spans)
	a.Spans = append(a.Spans, b.Spans...)
	for _, f := range b.Flows {
		a.Flows = append(a.Flows, timeline.Flow{From: f.From + base, To: f.To + base})
	}
	a.Frames = append(a.Frames, b.Frames...)
	a.Samples = append(a.Samples, b.Samples...)
	a.Calibrations = append(a.Calibrations, b.Calibrations...)
}

// close finishes both streams and writes the pprof profile of the whole
// trace. It returns the paths written.
func (tf *traceFiles) close() ([]string, error) {
	if tf.closed {
		return nil, nil
	}
	tf.closed = true
	var errs []error
	errs = append(errs, tf.pw.Close(), tf.pfile.Close())
	errs = append(errs, tf.cw.Close(), tf.cbuf.Flush(), tf.cfile.Close())
	pp := filepath.Join(tf.dir, pprofFile)
	f, err := os.Create(pp)
	if err == nil {
		err = pprof.Write(f, &tf.all)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	errs = append(errs, err)
	return []string{tf.pfile.Name(), tf.cfile.Name(), pp}, errors.Join(errs...)
}
