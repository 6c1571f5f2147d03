package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
)

// liveWindow is the recorder's frame window: with the live view on, the
// last 4096 frames (over 2 s at lavapipe's 1700 frames a second) stay in
// memory after they go to the trace files, for the view to copy between
// its polls; without it, none.
func liveWindow(cfg Config) int {
	if cfg.http == "" {
		return 0
	}
	return 4096
}

// serveLive serves p's live view on addr, the three lines of the live
// package's doc, and says where on stderr. stop shuts the server down,
// waiting at most 2 s for requests in progress.
func serveLive(addr string, p *profiler.Profiler, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-http: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/framescope/", live.Handler(p))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stderr, "live view: http://%s/debug/framescope/\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close() // a capture still running: cut it
		}
	}, nil
}

// heapSampler samples the Go heap's live objects every 250 ms.
type heapSampler struct {
	done      chan struct{}
	wg        sync.WaitGroup
	max, sum  float64
	n         int
	sampleBuf []metrics.Sample
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{}), sampleBuf: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	h.sample()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	metrics.Read(h.sampleBuf)
	v := float64(h.sampleBuf[0].Value.Uint64()) / (1 << 20)
	h.max = max(h.max, v)
	h.sum += v
	h.n++
}

// stop ends the sampling and returns the maximum and the mean, in MiB.
func (h *heapSampler) stop() (maxMB, meanMB float64) {
	close(h.done)
	h.wg.Wait()
	h.sample()
	return h.max, h.sum / float64(h.n)
}
