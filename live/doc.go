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
//     and GPU time of the last frames as a graph with budget lines, the
//     zones of the frame picked on the graph (the slowest by default) per
//     queue and track, nested; each zone's p50, p95 and max over the
//     window; each GPU queue's clock model (error bound, drift, age of the
//     last calibration); every drop counter by cause. It polls /json twice
//     a second. Its buttons save the last frames as a Perfetto trace, and
//     open them in ui.perfetto.dev through Perfetto's postMessage protocol.
//   - /json is what the page draws, for scripts; ?frame=ID picks the frame
//     whose zones it lists. One object, times in milliseconds: "frames"
//     (id, cpu_ms, gpu_ms of each frame in the window), "budget_cpu_ms" and
//     "budget_gpu_ms", "selected" and its "zones" (track, kind, name,
//     start_ms, dur_ms, depth), "stats" (each zone's count, p50_ms, p95_ms,
//     max_ms), "clocks" (each queue's err_us, drift_ppm, age_s, samples,
//     outliers), "drops" (every cause by the key traces use), "books"
//     (issued, delivered, open, lost, balanced of zones, spans and flows),
//     and the view's own counts (missed, capture_lost, settled, open,
//     refused, bad_requests).
//   - /trace?frames=N is a Perfetto trace of the last N settled frames of the
//     window (N from 1 to [Options].WindowFrames); /trace?seconds=S of the
//     frames that settle in the next S seconds (1 to [MaxSeconds]), sent
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
// copies what is new from the recorder ([timeline.Recorder.Peek]) every
// [Options].PollEvery (default 250 ms), at most 4096 spans per lock hold;
// it stops after 10 s without a request or capture. It copies every 50 ms
// while captures run, and while the recorder keeps less than two
// PollEvery of spans ([timeline.Peeked].Oldest), as a flight recorder's
// window at a high frame rate does, or spans left it before the last copy
// came. A recorder that keeps less than 50 ms loses spans to the view,
// which counts them.
//
// So with no viewer the render loop runs exactly as without the handler,
// and with viewers it shares the recorder's lock with one reader, four to
// twenty times a second, however many viewers there are: they all read
// one snapshot, which changes at most once a PollEvery. The window holds
// the last [Options].WindowFrames frames and their spans, at most
// [MaxWindowSpans].
//
// While ?seconds captures run, the poller also cuts what it copies into
// batches of whole frames, shared by every capture: a frame's batch is
// made once its GPU results are all in, so that its CPU spans, its GPU
// zones and the flows between them go together, at most 1024 spans a
// batch unless one frame has more. Each capture's own goroutine (its
// request's) writes the batches as they come: a trace capture sends each
// to its client and keeps none, a gpu capture adds each to its profile,
// which holds stacks, not spans. So a capture costs memory for the
// batches it has yet to write, not for its seconds. A capture 64 batches
// behind (its client reads too slowly) loses the next batch, and counts
// it. Batches, the writers' buffers and the gzip compressors of profiles
// are reused, so that captures allocate little once warm.
//
// # What a capture holds
//
// A trace from /trace?seconds or a profile from /gpu holds the frames that
// settled during its seconds, their spans and the flows between them, and
// the recorder's names and tracks. Its Drops count what it lacks: what
// never reached the recorder's memory during the capture (zones refused or
// never ended, spans dropped on entry: [timeline.Peeked].Upstream, not
// what the recorder let go of after the poller had copied it), and what
// the handler could not deliver: spans the poller copied too late (they
// had left the recorder's memory), spans of batches a slow client had no
// room for, and spans past [MaxCaptureSpans] in Drops.Evicted, the frames
// of those batches in Drops.Frames, and in Drops.Flows the flows whose two
// spans are not in one batch (one was before the capture, or a CPU span
// ended frames after its frame's GPU results were in). A trace from
// /trace?frames=N counts, the same way, what never reached the recorder's
// memory since it started, the spans the window copied too late, and the
// flows with one span outside the N frames. Counters and calibrations are
// in the application's own traces, not in these.
//
// A client that stops reading fails its request 10 s after its last write
// began, so that it holds no capture or viewer slot longer; HEAD on a
// capture answers the headers at once, with no capture.
package live
