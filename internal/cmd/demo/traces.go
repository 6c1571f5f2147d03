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
// readable up to the last flush, and into the pprof profile, which keeps
// stacks, not spans: a run until interrupted holds no more memory at its
// end than at its start.
type traceFiles struct {
	dir    string
	pfile  *os.File
	pw     *perfetto.Writer
	cfile  *os.File
	cbuf   *bufio.Writer
	cw     *chrome.Writer
	prof   *pprof.Builder
	drops  timeline.Drops // the running total of the last batch
	lanes  int            // GPU lane tracks
	closed bool
}

// createTraceFiles creates the trace files in dir. With frameLabels the
// profile's samples carry their frame, as pprof.Write's do; a run until
// interrupted leaves them out, so that its profile stays bounded.
func createTraceFiles(dir string, frameLabels, renderStages bool) (*traceFiles, error) {
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
	tf.pw = perfetto.NewWriter(tf.pfile, perfetto.Options{RenderStages: renderStages})
	tf.cbuf = bufio.NewWriterSize(tf.cfile, 64<<10)
	tf.cw = chrome.NewWriter(tf.cbuf)
	tf.prof = pprof.NewBuilder(pprof.Options{OmitFrames: !frameLabels})
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
	tf.prof.WriteBatch(b)
	tf.drops, tf.lanes = b.Drops, 0
	for i := range b.Tracks {
		if b.Tracks[i].Kind == timeline.TrackGPULane {
			tf.lanes++
		}
	}
	return errors.Join(err1, err2)
}

// close finishes both streams and writes the pprof profile. It returns the paths written.
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
		err = tf.prof.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	errs = append(errs, err)
	return []string{tf.pfile.Name(), tf.cfile.Name(), pp}, errors.Join(errs...)
}
