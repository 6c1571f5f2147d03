package live

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/profiler"
)

// Limits of the options and parameters.
const (
	maxWindowFrames = 3600    // Options.WindowFrames at most
	maxWindowSpans  = 1 << 18 // spans the window holds at most
	maxCaptureSpans = 1 << 22 // spans one trace capture sends at most
	maxSeconds      = 60      // ?seconds at most
	maxMaxViewers   = 1024    // Options.MaxViewers at most
	maxMaxCaptures  = 64      // Options.MaxCaptures at most
	minPollEvery    = 50 * time.Millisecond
	maxPollEvery    = 5 * time.Second
)

// Options configure a handler. The zero Options are the defaults.
type Options struct {
	// WindowFrames is how many of the last frames the page shows and
	// /trace?frames can take (default 300, at most 3600).
	WindowFrames int
	// MaxViewers caps the page, json and frames requests served at once
	// (default 64, at most 1024).
	MaxViewers int
	// MaxCaptures caps the ?seconds captures running at once (default 4,
	// at most 64).
	MaxCaptures int
	// PollEvery is how often the handler copies what is new from the
	// recorder while someone is watching (default 250ms, from
	// 50ms to 5s).
	PollEvery time.Duration
}

func (o *Options) check() error {
	switch {
	case o.WindowFrames < 0 || o.WindowFrames > maxWindowFrames:
		return fmt.Errorf("live: WindowFrames %d: want 0 (default 300) to %d", o.WindowFrames, maxWindowFrames)
	case o.MaxViewers < 0 || o.MaxViewers > maxMaxViewers:
		return fmt.Errorf("live: MaxViewers %d: want 0 (default 64) to %d", o.MaxViewers, maxMaxViewers)
	case o.MaxCaptures < 0 || o.MaxCaptures > maxMaxCaptures:
		return fmt.Errorf("live: MaxCaptures %d: want 0 (default 4) to %d", o.MaxCaptures, maxMaxCaptures)
	case o.PollEvery != 0 && (o.PollEvery < minPollEvery || o.PollEvery > maxPollEvery):
		return fmt.Errorf("live: PollEvery %v: want 0 (default 250ms) or %v to %v", o.PollEvery, minPollEvery, maxPollEvery)
	}
	if o.WindowFrames == 0 {
		o.WindowFrames = 300
	}
	if o.MaxViewers == 0 {
		o.MaxViewers = 64
	}
	if o.MaxCaptures == 0 {
		o.MaxCaptures = 4
	}
	if o.PollEvery == 0 {
		o.PollEvery = 250 * time.Millisecond
	}
	return nil
}

// Handler returns the handler of p's live view with the default Options.
func Handler(p *profiler.Profiler) http.Handler {
	h, _ := New(p, Options{}) // the zero Options are valid
	return h
}

// New returns the handler of p's live view, or an error naming the option
// out of its range.
func New(p *profiler.Profiler, o Options) (http.Handler, error) {
	if p == nil {
		return nil, fmt.Errorf("live: nil profiler")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	h := &handler{opt: o, viewers: make(chan struct{}, o.MaxViewers), captures: make(chan struct{}, o.MaxCaptures)}
	h.w = newWatcher(p, o)
	return h, nil
}

type handler struct {
	opt      Options
	w        *watcher
	viewers  chan struct{} // a token per request being served
	captures chan struct{} // a token per capture running
	refused  atomic.Uint64 // 429 answers
	bad      atomic.Uint64 // 400 and 405 answers
}

func (h *handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.bad.Add(1)
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "live: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		h.badRequest(rw, "live: the query does not parse: %v", err)
		return
	}
	path := r.URL.Path
	if i := strings.LastIndex(path, "/debug/framescope/"); i >= 0 {
		path = path[i+len("/debug/framescope/"):]
	} else {
		path = strings.TrimPrefix(path, "/")
	}
	switch path {
	case "", "index.html":
		h.viewer(rw, h.page)(r)
	case "json":
		h.viewer(rw, h.json)(r)
	case "trace":
		h.trace(rw, r)
	case "gpu":
		h.gpu(rw, r)
	default:
		http.NotFound(rw, r)
	}
}

// viewer runs f under a viewer token, or answers 429.
func (h *handler) viewer(rw http.ResponseWriter, f func(http.ResponseWriter, *http.Request)) func(*http.Request) {
	return func(r *http.Request) {
		select {
		case h.viewers <- struct{}{}:
			defer func() { <-h.viewers }()
			f(rw, r)
		default:
			h.tooMany(rw, 1, "live: %d viewers are being served (Options.MaxViewers)", h.opt.MaxViewers)
		}
	}
}

func (h *handler) tooMany(rw http.ResponseWriter, retry int, format string, a ...any) {
	h.refused.Add(1)
	rw.Header().Set("Retry-After", strconv.Itoa(retry))
	http.Error(rw, fmt.Sprintf(format, a...), http.StatusTooManyRequests)
}

func (h *handler) badRequest(rw http.ResponseWriter, format string, a ...any) {
	h.bad.Add(1)
	http.Error(rw, fmt.Sprintf(format, a...), http.StatusBadRequest)
}

// intParam reads the integer parameter name, in [lo, hi], def when the
// query does not name it; ok false when it answered 400.
func (h *handler) intParam(rw http.ResponseWriter, r *http.Request, name string, lo, hi, def int) (int, bool) {
	q := r.URL.Query()
	if !q.Has(name) {
		return def, true
	}
	s := q.Get(name)
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		h.badRequest(rw, "live: %s=%q: want an integer from %d to %d", name, s, lo, hi)
		return 0, false
	}
	return v, true
}

func (h *handler) page(rw http.ResponseWriter, r *http.Request) {
	h.w.touch()
	deadline(http.NewResponseController(rw))
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Header().Set("Cache-Control", "no-store")
	rw.Write(pageHTML)
}

func (h *handler) json(rw http.ResponseWriter, r *http.Request) {
	frame, ok := h.intParam(rw, r, "frame", 0, 1<<62, 0)
	if !ok {
		return
	}
	// The first request after a stop waits for the window to fill (a
	// fraction of a second); a later one finds it filled.
	if err := h.w.waitSeeded(r.Context(), 2*time.Second); err != nil {
		http.Error(rw, err.Error(), http.StatusServiceUnavailable)
		return
	}
	b := h.w.viewJSON(uint64(frame), h.refused.Load(), h.bad.Load())
	deadline(http.NewResponseController(rw))
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Cache-Control", "no-store")
	rw.Write(b)
}

func (h *handler) trace(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	hasFrames, hasSeconds := q.Has("frames"), q.Has("seconds")
	switch {
	case hasFrames && hasSeconds:
		h.badRequest(rw, "live: trace takes frames=N or seconds=S, not both")
	case hasSeconds:
		s, ok := h.intParam(rw, r, "seconds", 1, maxSeconds, 0)
		if ok {
			h.capture(rw, r, s, false)
		}
	default:
		n, ok := h.intParam(rw, r, "frames", 1, h.opt.WindowFrames, min(60, h.opt.WindowFrames))
		if ok {
			h.viewer(rw, func(rw http.ResponseWriter, r *http.Request) {
				t, err := h.w.lastFrames(r.Context(), n)
				if err != nil {
					http.Error(rw, err.Error(), http.StatusServiceUnavailable)
					return
				}
				writeTrace(rw, t)
			})(r)
		}
	}
}

func (h *handler) gpu(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("frames") {
		h.badRequest(rw, "live: gpu takes seconds=S (1 to %d)", maxSeconds)
		return
	}
	s, ok := h.intParam(rw, r, "seconds", 1, maxSeconds, 10)
	if ok {
		h.capture(rw, r, s, true)
	}
}

// capture serves the next seconds as a trace, or as a pprof profile. A
// HEAD request gets the headers alone, at once: it takes no capture.
func (h *handler) capture(rw http.ResponseWriter, r *http.Request, seconds int, profile bool) {
	if r.Method == http.MethodHead {
		if profile {
			profileHeader(rw)
		} else {
			traceHeader(rw)
		}
		return
	}
	select {
	case h.captures <- struct{}{}:
		defer func() { <-h.captures }()
	default:
		h.tooMany(rw, seconds, "live: %d captures are running (Options.MaxCaptures)", h.opt.MaxCaptures)
		return
	}
	var out captureOut = &traceOut{rw: rw}
	limit := maxCaptureSpans
	if profile {
		out, limit = &profileOut{rw: rw, b: pprof.NewBuilder(pprof.Options{OmitFrames: true})}, 0
	}
	// An error is the client gone, or its connection failing: nothing
	// more can reach it.
	h.w.capture(r.Context(), time.Duration(seconds)*time.Second, out, limit)
}
