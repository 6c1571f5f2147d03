package hostile

import (
	"compress/gzip"
	"io"
	"net/http"
	"time"
)

// An Answer is what a hostile server sends for a live view's trace: for
// `framescope capture`, which must end each with a clear error, in bounded
// memory, leaving its output as it was.
type Answer struct {
	Name string
	// Serve answers one request; it returns when the client goes.
	Serve http.HandlerFunc
}

// Answers are the hostile answers of docs/hostile-inputs.md. Those
// without end stop when the client hangs up.
func Answers() []Answer {
	return []Answer{
		{"endless body of zeros", func(w http.ResponseWriter, r *http.Request) {
			forever(w, make([]byte, 1<<16))
		}},
		{"endless body of empty Perfetto packets (well-formed, never ending)", func(w http.ResponseWriter, r *http.Request) {
			b := make([]byte, 1<<16)
			for i := 0; i < len(b); i += 2 {
				b[i] = 0x0a // field 1, length-delimited: a TracePacket of 0 bytes
			}
			forever(w, b)
		}},
		{"gzip bomb: Content-Encoding gzip, endless zeros", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			forever(zw, make([]byte, 1<<16))
		}},
		{"gzip bomb: a gzipped body of endless empty Perfetto packets", func(w http.ResponseWriter, r *http.Request) {
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			b := make([]byte, 1<<16)
			for i := 0; i < len(b); i += 2 {
				b[i] = 0x0a
			}
			forever(zw, b)
		}},
		{"Content-Length of 10 GB", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10000000000")
			forever(w, make([]byte, 1<<16))
		}},
		{"slow trickle: a byte a second", func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			for {
				if _, err := w.Write([]byte{0x0a}); err != nil {
					return
				}
				if rc.Flush() != nil {
					return
				}
				select {
				case <-r.Context().Done():
					return
				case <-time.After(time.Second):
				}
			}
		}},
	}
}

// forever writes b again and again until a write fails.
func forever(w io.Writer, b []byte) {
	for {
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}
