package live_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/leakcheck"
	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
)

// The live view's poller stops when the profiler closes, not 10 s after
// the last request: a goroutine-leak check right after Profiler.Close
// passes. Requests after the close are answered from the last window,
// and a capture asked for after it ends at once.
func TestPollerStopsAtProfilerClose(t *testing.T) {
	leakcheck.Check(t, time.Second)
	p := profiler.New(profiler.Options{})
	loop, work := p.CPUTrack("loop"), p.Name("work")
	for range 5 {
		p.BeginFrame()
		loop.Span(work).End()
		p.EndFrame()
	}
	srv := httptest.NewServer(live.Handler(p))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	get := func(path string) (int, []byte) {
		t.Helper()
		r, err := client.Get(srv.URL + "/debug/framescope/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, b
	}
	if code, _ := get("json"); code != http.StatusOK {
		t.Fatalf("json: %d", code)
	}
	// A capture in progress when the profiler closes ends with it.
	capDone := make(chan int)
	go func() {
		r, err := client.Get(srv.URL + "/debug/framescope/trace?seconds=30")
		if err != nil {
			capDone <- 0
			return
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		capDone <- r.StatusCode
	}()
	time.Sleep(100 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-capDone:
		if code != http.StatusOK {
			t.Errorf("capture across the close: %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a 30 s capture did not end when the profiler closed")
	}
	start := time.Now()
	if code, _ := get("trace?seconds=5"); code != http.StatusOK || time.Since(start) > 2*time.Second {
		t.Errorf("capture after the close: %d after %v, want 200 at once", code, time.Since(start))
	}
	if code, b := get("trace?frames=5"); code != http.StatusOK || len(b) == 0 {
		t.Errorf("trace?frames after the close: %d, %d bytes", code, len(b))
	}
	srv.Close()
	client.CloseIdleConnections()
}
