// Command triangle is Framescope's demo: a headless Vulkan render loop,
// instrumented throughout, that writes its profile as a Perfetto trace, a
// Chrome JSON trace and a pprof profile. (To see how an application of
// your own calls the library, read examples/wrap: it is the one to copy.)
//
// Each frame renders a rotating triangle into an offscreen 256x256 RGBA8
// image and copies the image into host memory, with up to three frames in
// flight. The GPU side is measured with zones (frame, render pass, load,
// draw, copy), the CPU side with spans on a "render loop" track (wait,
// collect, update, record, submit), tied by frames and by arrows from each
// submit to the GPU work it carried. Counters follow the draws per frame
// next to the recorder's own CPU and GPU time per frame.
//
// Usage:
//
//	go run ./examples/triangle [-frames 300] [-out out] [-device NAME|INDEX]
//	    [-png FILE] [-load N] [-iterations 256] [-zones N] [-queries N]
//	    [-inflight 3] [-size 256] [-warmup N] [-validation] [-quiet] [-json]
//	    [-fps N] [-http ADDR]
//
// -load adds N full-screen draws per frame, before the triangle, whose
// fragment shader loops -iterations times and blends its result in with
// alpha 0, leaving the image as it was: GPU weight to measure. -zones wraps
// the load draws in N more profiler zones. -queries caps the profiler's
// timestamp queries per frame; zones over it are dropped and counted.
//
// The summary gives the device, the "frame" zone's GPU time per frame
// (p50, p95, mean; device ticks times timestampPeriod; the first -warmup
// frames left out), CPU time per frame and per recording, zones read back
// and dropped, the clock model's error bound, and the validation layer's
// counts. -json prints it as one JSON object, for scripts that compare
// runs (scripts/perfgate.sh).
//
// -frames 0 renders until interrupted (SIGINT, SIGTERM), then writes the
// traces and exits 0; -fps caps the frame rate. -http 127.0.0.1:6060
// serves the live view (package live) at http://127.0.0.1:6060/debug/framescope/
// while it renders.
//
// Open out/triangle.perfetto-trace at https://ui.perfetto.dev (Open trace
// file); out/triangle.pb.gz with go tool pprof.
package main
