package live

import (
	"net/http"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/timeline"
)

// writeTrace sends t as a Perfetto trace file.
func writeTrace(rw http.ResponseWriter, t *timeline.Trace) {
	rw.Header().Set("Content-Type", "application/octet-stream")
	rw.Header().Set("Content-Disposition", `attachment; filename="framescope.perfetto-trace"`)
	perfetto.Write(rw, t) // a write error is the client gone: nothing to tell it
}

// writeProfile sends t as a pprof profile of GPU and CPU zone time.
func writeProfile(rw http.ResponseWriter, t *timeline.Trace) {
	rw.Header().Set("Content-Type", "application/octet-stream")
	rw.Header().Set("Content-Disposition", `attachment; filename="framescope-gpu.pb.gz"`)
	pprof.Write(rw, t)
}
