package live_test

import (
	"log"
	"net/http"
	"time"

	"github.com/framescope/framescope/live"
	"github.com/framescope/framescope/profiler"
)

// The three lines that serve a profiler's live view at
// http://127.0.0.1:6060/debug/framescope/.
func ExampleHandler() {
	p := profiler.New(profiler.Options{})

	mux := http.NewServeMux()
	mux.Handle("/debug/framescope/", live.Handler(p))
	go http.ListenAndServe("127.0.0.1:6060", mux)
}

// Options other than the defaults: a longer window, fewer captures at
// once, slower polling.
func ExampleNew() {
	p := profiler.New(profiler.Options{})
	h, err := live.New(p, live.Options{WindowFrames: 1200, MaxCaptures: 1, PollEvery: time.Second})
	if err != nil {
		log.Fatal(err) // an option out of its range, named
	}
	http.Handle("/debug/framescope/", h)
}
