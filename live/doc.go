// Package live serves a running application's profile over HTTP, as
// net/http/pprof serves Go's: mount it on the application's own mux.
//
//	mux := http.NewServeMux()
//	mux.Handle("/debug/framescope/", live.Handler(p)) // p: the *profiler.Profiler
//	go http.ListenAndServe("127.0.0.1:6060", mux)
//
// The library opens no listener: the application chooses the address (keep
// it on loopback, or behind its own authentication: the pages show names of
// its zones and tracks). Under /debug/framescope/:
//
//   - / is a page, one self-contained HTML document (no script, font or
//     style from elsewhere), that updates while the application runs: CPU
//     and GPU time of the last frames as a graph with budget lines, under
//     it what limits each frame (timeline/limits: CPU-bound, GPU-bound,
//     presentation-bound) and the window's share of each, a frame's GPU
//     and CPU busy shares on hover; the zones of the frame picked on the
//     graph (by default the slowest with a verdict) per queue and track,
//     nested, and the GPU's idle gaps in it by cause; each zone's p50, p95
//     and max over the window; where GPU zones count pipeline statistics,
//     their work (a zone's counts, in full on hover, or why it has none;
//     each zone name's mean count per statistic over the window, and how
//     many have no counts); each GPU queue's clock model (error bound, drift, age of
//     the last calibration); every drop counter by cause. It polls /json twice
//     a second. Its buttons save the last frames as a Perfetto trace, and
//     open them in ui.perfetto.dev through Perfetto's postMessage protocol.
//   - /json is what the page draws, for scripts; ?frame=ID picks the frame
//     whose zones it lists. One object, times in milliseconds: "frames"
//     (id, cpu_ms, gpu_ms of each frame in the window; "limit", what
//     limits it, "pending" until it has settled and the next frame has
//     begun; gpu_busy and cpu_busy, shares of its interval, -1 where it
//     has no verdict, cpu_busy also where no thread submitted),
//     "limited_by" (each verdict's share of the frames that have one),
//     "budget_cpu_ms" and "budget_gpu_ms", "selected", its "gaps"
//     (start_ms, dur_ms, cause of each GPU idle gap, in the "selected_ms"
//     from its start to the next frame's) and its "zones" (track, kind, name,
//     start_ms, dur_ms, depth; "work", a GPU zone's counts by statistic
//     key as traces have them, or "no_counts", why it has none), "stats"
//     (each zone's count, p50_ms, p95_ms, max_ms; "work" where zones of
//     the name count: counted, no_counts, and "mean" by statistic key over
//     those counted), "work_stats" and "no_counts" (the statistics the
//     window's zones count, and how many have no counts, by reason),
//     "clocks" (each queue's err_us, drift_ppm, age_s, samples,
//     outliers), "drops" (every cause by the key traces use), "books"
//     (issued, delivered, open, lost, balanced of zones, spans and flows),
//     and the view's own counts (missed, capture_lost, settled, open,
//     refused, bad_requests).
//   - /trace?frames=N is a Perfetto trace of the last N settled frames of the
//     window (N from 1 to [Options].WindowFrames); /trace?seconds=S of the
//     frames that settle in the next S seconds (1 to 60), sent
//     as they settle.
//   - /gpu?seconds=S is a pprof profile of GPU and CPU zone time over the
//     next S seconds (default 10), so that
//     `go tool pprof -http=: http://127.0.0.1:6060/debug/framescope/gpu?seconds=10`
//     works on a running application. Its samples carry the track and
//     queue labels, not the frame: its size grows with the stacks, not
//     with the seconds.
//
// Bad parameters get 400 with a message naming the limit; methods other
// than GET and HEAD get 405. At most [Options].MaxViewers page, json and
// frames requests run at once, and at most [Options].MaxCaptures seconds
// captures: beyond, 429 with Retry-After.
//
// # Cost
//
// Mounting starts nothing. The first request starts one goroutine that
// copies what is new from the recorder every [Options].PollEvery (every
// 50 ms while captures run) and stops after 10 s without a request, or
// when the profiler closes. With no viewer the render loop runs exactly as
// without the handler; with viewers it shares the recorder's lock with that
// one reader, however many viewers there are. What limits each frame is
// read from the window once a view change, by the request that makes the
// view, at a cost bounded by the window's spans and frames. A ?seconds
// capture costs memory for the batches of whole frames it has yet to
// write, not for its seconds; one 64 batches behind (a client that reads
// too slowly) loses the next batch, and counts it. A trace or profile from the view counts
// in its Drops what it lacks: what never reached the recorder's memory,
// and what the view could not deliver (copied too late, a slow client,
// over 4Mi spans in one capture, flows with one end outside it). The work
// of GPU zones costs the view, besides the zones it holds, a sum a
// statistic for each zone name whose zones count; zones that count
// nothing cost what they did before zones had work. How the
// poller, batches and captures are bounded, and what exactly each count
// holds, is in docs/design.md of the repository.
//
// A client that stops reading fails its request 10 s after its last write
// began, so that it holds no capture or viewer slot longer; HEAD on a
// capture answers the headers at once, with no capture.
package live
