// Command triangle is Framescope's demo: a headless Vulkan render loop,
// instrumented throughout, that writes its profile as a Perfetto trace, a
// Chrome JSON trace and a pprof profile.
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
//	    [-png FILE] [-load N] [-iterations N] [-zones N] [-rawzones N]
//	    [-stages top-bottom] [-validation] [-quiet] [-json]
//
// -load adds N full-screen draws per frame whose fragment shader loops
// -iterations times and leaves the image as it was: GPU weight to measure.
// -zones wraps the load draws in N more profiler zones, -rawzones in N pairs
// of bare vkCmdWriteTimestamp into a query pool of the demo's own, so that
// runs with one and the other compare the library's overhead with the
// hardware's. -stages picks the pipeline stages of both.
//
// Open out/triangle.perfetto-trace at https://ui.perfetto.dev (Open trace
// file). -json prints the summary as one JSON object instead of text.
package main
