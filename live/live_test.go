package live

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/profiler"
	"github.com/google/pprof/profile"
)

// app is a render loop without a GPU: frames of two nested CPU spans, one
// a millisecond, on a goroutine of its own, as an application runs.
type app struct {
	p    *profiler.Profiler
	stop chan struct{}
	wg   sync.WaitGroup
}

func startApp(t *testing.T) *app {
	t.Helper()
	a := &app{p: profiler.New(profiler.Options{}), stop: make(chan struct{})}
	loop, work := a.p.CPUTrack("render loop"), a.p.Name("work")
	inner := a.p.Name("inner")
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			select {
			case <-a.stop:
				return
			default:
			}
			a.p.BeginFrame()
			s := loop.Span(work)
			loop.Span(inner).End()
			time.Sleep(time.Millisecond)
			s.End()
			a.p.EndFrame()
		}
	}()
	t.Cleanup(func() {
		close(a.stop)
		a.wg.Wait()
		a.p.Close()
	})
	return a
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/debug/framescope/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/debug/framescope/"
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r.StatusCode, b
}

// waitView polls /json until it shows frames.
func waitView(t *testing.T, base string) view {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, b := get(t, base+"json")
		if code != 200 {
			t.Fatalf("json: %d %s", code, b)
		}
		var v view
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("json: %v", err)
		}
		if len(v.Frames) > 10 && len(v.Zones) > 0 {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frames after 10 s: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEndpoints(t *testing.T) {
	a := startApp(t)
	base := serve(t, Handler(a.p))

	code, page := get(t, base)
	if code != 200 || !bytes.Contains(page, []byte(`id="graph"`)) {
		t.Fatalf("page: %d, %d bytes", code, len(page))
	}
	// Self-contained: nothing loaded from elsewhere.
	for _, bad := range []string{"<script src", "<link", "@import", "url(", "@font-face"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page loads something from elsewhere: %q", bad)
		}
	}

	v := waitView(t, base)
	if v.Selected == 0 || v.Zones[0].Name != "work" || v.Zones[0].Kind != "cpu" {
		t.Errorf("selected %d, zones %+v", v.Selected, v.Zones)
	}
	if len(v.Drops) == 0 || len(v.Stats) != 2 {
		t.Errorf("drops %v, stats %+v", v.Drops, v.Stats)
	}
	// A frame picked by id.
	pick := v.Frames[len(v.Frames)/2].ID
	_, b := get(t, base+"json?frame="+itoa(pick))
	var pv view
	json.Unmarshal(b, &pv)
	if pv.Selected != pick {
		t.Errorf("?frame=%d selected %d", pick, pv.Selected)
	}

	for _, q := range []string{"trace?frames=10", "trace", "trace?seconds=1"} {
		code, b := get(t, base+q)
		if code != 200 {
			t.Fatalf("%s: %d %s", q, code, b)
		}
		tr, err := perfetto.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(tr.Frames) == 0 || len(tr.Spans) < 2*len(tr.Frames) {
			t.Errorf("%s: %d frames, %d spans", q, len(tr.Frames), len(tr.Spans))
		}
		if q == "trace?frames=10" && len(tr.Frames) != 10 {
			t.Errorf("%s: %d frames", q, len(tr.Frames))
		}
	}
	code, b = get(t, base+"gpu?seconds=1")
	if code != 200 {
		t.Fatalf("gpu: %d %s", code, b)
	}
	prof, err := profile.Parse(bytes.NewReader(b))
	if err != nil || len(prof.Sample) == 0 {
		t.Fatalf("gpu: %v, %d samples", err, len(prof.Sample))
	}
}

func itoa(v uint64) string { return strings.TrimSpace(strings.Repeat(" ", 0) + uintString(v)) }

func uintString(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		if v /= 10; v == 0 {
			return string(b[i:])
		}
	}
}

func TestBadRequests(t *testing.T) {
	p := profiler.New(profiler.Options{})
	defer p.Close()
	base := serve(t, Handler(p))
	for q, want := range map[string]int{
		"trace?frames=0":           400,
		"trace?frames=-1":          400,
		"trace?frames=x":           400,
		"trace?frames=301":         400,
		"trace?frames=99999999999": 400,
		"trace?seconds=0":          400,
		"trace?seconds=61":         400,
		"trace?seconds=1e3":        400,
		"trace?frames=1&seconds=1": 400,
		"gpu?frames=3":             400,
		"gpu?seconds=-5":           400,
		"json?frame=-1":            400,
		"json?frame=":              400,
		"trace?seconds=":           400,
		"trace?frames=":            400,
		"trace?frames=%zz":         400,
		"gpu?seconds=;":            400,
		"nothing":                  404,
	} {
		code, b := get(t, base+q)
		if code != want {
			t.Errorf("%s: %d, want %d (%s)", q, code, want, b)
		}
		if want == 400 && !strings.HasPrefix(string(b), "live: ") {
			t.Errorf("%s: %q names no limit", q, b)
		}
	}
	r, err := http.Post(base+"json", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
}

func TestOptions(t *testing.T) {
	p := profiler.New(profiler.Options{})
	defer p.Close()
	for _, o := range []Options{{WindowFrames: -1}, {WindowFrames: maxWindowFrames + 1}, {MaxViewers: -1},
		{MaxViewers: maxMaxViewers + 1}, {MaxCaptures: maxMaxCaptures + 1}, {PollEvery: time.Millisecond}, {PollEvery: time.Hour}} {
		if _, err := New(p, o); err == nil || !strings.HasPrefix(err.Error(), "live: ") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil profiler accepted")
	}
}

// Past MaxCaptures, a capture is refused with 429 and Retry-After; past
// MaxViewers, a viewer too.
func TestLimits(t *testing.T) {
	a := startApp(t)
	hh, err := New(a.p, Options{MaxCaptures: 1, MaxViewers: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := hh.(*handler)
	base := serve(t, h)
	done := make(chan int)
	go func() {
		code, _ := get(t, base+"trace?seconds=2")
		done <- code
	}()
	for len(h.captures) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	r, err := http.Get(base + "gpu?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("second capture: %d, Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if code := <-done; code != 200 {
		t.Errorf("first capture: %d", code)
	}
	h.viewers <- struct{}{} // a viewer being served
	if code, _ := get(t, base+"json"); code != 429 {
		t.Errorf("viewer past MaxViewers: %d", code)
	}
	<-h.viewers
	if code, _ := get(t, base+"json"); code != 200 {
		t.Errorf("viewer within MaxViewers: %d", code)
	}
	if h.refused.Load() != 2 {
		t.Errorf("refused %d, want 2", h.refused.Load())
	}
}

// Mounting starts nothing; the poller starts with a request and stops
// once no request came for idleStop, letting its window go; many viewers
// share one snapshot a poll.
func TestPollerLifecycle(t *testing.T) {
	a := startApp(t)
	time.Sleep(20 * time.Millisecond)
	g0 := runtime.NumGoroutine()
	hh, _ := New(a.p, Options{PollEvery: minPollEvery})
	h := hh.(*handler)
	h.w.idle = 300 * time.Millisecond
	if runtime.NumGoroutine() != g0 {
		t.Fatalf("mounting started goroutines: %d -> %d", g0, runtime.NumGoroutine())
	}
	rec := httptest.NewRecorder()
	for range 200 {
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/framescope/json", nil))
	}
	h.w.mu.Lock()
	running, polls := h.w.running, h.w.win.polls
	h.w.mu.Unlock()
	if !running {
		t.Fatal("no poller after requests")
	}
	if polls > 50 {
		t.Errorf("%d polls for 200 requests: viewers must share polls", polls)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.w.mu.Lock()
		running, spans := h.w.running, len(h.w.win.spans)
		h.w.mu.Unlock()
		if !running && spans == 0 && runtime.NumGoroutine() <= g0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("poller still running (%v, %d spans, %d goroutines, %d before)", running, spans, runtime.NumGoroutine(), g0)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
