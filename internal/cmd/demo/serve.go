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

// heapSampler samples the Go heap every 250 ms: the bytes of its objects
// (live and not yet swept), the bytes the last collection found live,
// and, over the whole run, what was allocated and how many collections
// ran.
type heapSampler struct {
	done      chan struct{}
	wg        sync.WaitGroup
	start     time.Time
	objects   sampled
	live      sampled
	allocs0   uint64
	cycles0   uint64
	sampleBuf []metrics.Sample
}

type sampled struct {
	max, sum float64
	n        int
}

func (s *sampled) add(v float64) {
	s.max = max(s.max, v)
	s.sum += v
	s.n++
}

// heapStats is what a heapSampler measured, in MiB.
type heapStats struct {
	ObjectsMax, ObjectsMean float64
	LiveMax, LiveMean       float64
	AllocPerS               float64 // MiB allocated a second
	Cycles                  uint64  // collections
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{}), start: time.Now(), sampleBuf: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"},
	}}
	h.allocs0, h.cycles0 = h.sample()
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

// sample adds one sample, and returns the allocation and collection
// totals.
func (h *heapSampler) sample() (allocs, cycles uint64) {
	metrics.Read(h.sampleBuf)
	h.objects.add(float64(h.sampleBuf[0].Value.Uint64()) / (1 << 20))
	h.live.add(float64(h.sampleBuf[1].Value.Uint64()) / (1 << 20))
	return h.sampleBuf[2].Value.Uint64(), h.sampleBuf[3].Value.Uint64()
}

// stop ends the sampling and returns what it measured.
func (h *heapSampler) stop() heapStats {
	close(h.done)
	h.wg.Wait()
	allocs, cycles := h.sample()
	return heapStats{
		ObjectsMax: h.objects.max, ObjectsMean: h.objects.sum / float64(h.objects.n),
		LiveMax: h.live.max, LiveMean: h.live.sum / float64(h.live.n),
		AllocPerS: float64(allocs-h.allocs0) / (1 << 20) / time.Since(h.start).Seconds(),
		Cycles:    cycles - h.cycles0,
	}
}
