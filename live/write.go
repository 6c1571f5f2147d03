package live

import (
	"compress/gzip"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

// writeTimeout bounds each write to a client: one that stops reading
// fails the request that long after, so that it holds no capture or
// viewer slot. A variable for the tests.
var writeTimeout = 10 * time.Second

// deadline gives the next write to rw writeTimeout, where rw allows it.
func deadline(rc *http.ResponseController) {
	rc.SetWriteDeadline(time.Now().Add(writeTimeout)) // ErrNotSupported: no deadline, as before
}

// writeTrace sends t as a Perfetto trace file.
func writeTrace(rw http.ResponseWriter, t *timeline.Trace) {
	traceHeader(rw)
	deadline(http.NewResponseController(rw))
	perfetto.Write(rw, t) // a write error is the client gone: nothing to tell it
}

func traceHeader(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "application/octet-stream")
	rw.Header().Set("Content-Disposition", `attachment; filename="framescope.perfetto-trace"`)
}

// Captures reuse the writers of earlier ones, and their buffers. A
// capture's batches are flushed as they are written, so its buffer need
// not be large.
var (
	writerPool = sync.Pool{New: func() any { return perfetto.NewWriter(io.Discard, perfetto.Options{FlushBytes: 16 << 10}) }}
	gzipPool   = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}
)

// traceOut streams a capture as a Perfetto trace, batch by batch: the
// answer starts with the first batch, and the handler holds no more of it
// than the batch it writes.
type traceOut struct {
	rw http.ResponseWriter
	rc *http.ResponseController
	pw *perfetto.Writer
}

func (o *traceOut) batch(t *timeline.Trace) error {
	if o.pw == nil {
		traceHeader(o.rw)
		o.rc = http.NewResponseController(o.rw)
		o.pw = writerPool.Get().(*perfetto.Writer)
		o.pw.Reset(o.rw)
	}
	deadline(o.rc)
	return o.pw.WriteBatch(t)
}

func (o *traceOut) end(t *timeline.Trace) error {
	if err := o.batch(t); err != nil {
		return err
	}
	return o.pw.Close()
}

func (o *traceOut) release() {
	if o.pw != nil {
		o.pw.Reset(io.Discard) // keeps no client
		writerPool.Put(o.pw)
		o.pw = nil
	}
}

// profileOut builds a capture's pprof profile as the batches come, and
// sends it, gzip-compressed, at the end.
type profileOut struct {
	rw http.ResponseWriter
	b  *pprof.Builder
}

func (o *profileOut) batch(t *timeline.Trace) error { return o.b.WriteBatch(t) }

func profileHeader(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "application/octet-stream")
	rw.Header().Set("Content-Disposition", `attachment; filename="framescope-gpu.pb.gz"`)
}

func (o *profileOut) end(t *timeline.Trace) error {
	o.b.WriteBatch(t)
	profileHeader(o.rw)
	deadline(http.NewResponseController(o.rw))
	gz := gzipPool.Get().(*gzip.Writer)
	defer gzipPool.Put(gz)
	gz.Reset(o.rw)
	err := o.b.Profile().WriteUncompressed(gz)
	if cerr := gz.Close(); err == nil {
		err = cerr
	}
	gz.Reset(io.Discard)
	return err
}

func (o *profileOut) release() {}
