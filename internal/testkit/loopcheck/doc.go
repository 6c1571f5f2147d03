// Package loopcheck is the render-loop checker: it draws render loops from
// a seed and runs each through the public API alone, on an application of
// its own, then holds what came out to what the application did.
//
//	go test ./internal/testkit/loopcheck                                 # the fixed seeds (make test)
//	go test ./internal/testkit/loopcheck -loops.seeds=2000 -timeout 0    # seeds 1-2000 (make check-loops SEEDS=2000)
//	go test ./internal/testkit/loopcheck -run TestLoops -loops.seed=162  # replay one, as a failure prints it
//
// The application makes its Vulkan in C (app.c), as an application written
// in C or through another binding would: its own instance (the validation
// layer on, synchronization checks included), its own device with a queue
// or two of every family that has timestamps, host query reset and
// calibrated timestamps when the loop enables them, a command pool per
// frame in flight, recording goroutine and queue, fences and semaphores.
// It hands the profiler its handles through profiler.WrapDevice,
// converted to vulkan-go's types (Vulkan's dispatchable handles are
// pointers: vk.Device(unsafe.Pointer(device))).
//
// A loop (Loop, drawn by Gen) sets 1 to 16 frames in flight, and now and
// then an application that waits later than it declares; 1 to 4 command
// buffers a queue and frame, recorded on 1 to 3 goroutines, with
// secondaries (named to GPU.Submit with their primary, or not); zones
// nested up to 8 deep, some begun in one command buffer and ended in a
// later one; empty frames and frames far over the query pool; split and
// merged submissions; up to five queues at once, chained by semaphores;
// stretches without Collect, and Drain; contexts, the wrapped device and
// the device itself made again mid-run; misuse (zones never ended, ended
// twice, after EndFrame, the zero Zone, command buffers never submitted,
// frames without GPU.Submit); a flight recorder's window, a small
// MaxSpans, a streaming sink, the live view read while the loop runs;
// pipeline statistics counted in every zone, with compute dispatches of
// known size (a workgroup of 64) between the zones' Begins and Ends, in
// loops that keep to what counting asks of an application (no zone across
// command buffers or left open, secondaries executed outside every zone);
// command buffers recorded once and submitted in every frame of their
// slot (GPU.Record), cached secondaries executed from fresh primaries, and
// recordings whose End never comes; a Vulkan 1.0 instance; frames waited
// for on a timeline semaphore a queue rather than fences, with the queues
// submitted last first, so that each waits for a value not yet submitted
// (wait before signal) and they complete out of the CPU's order;
// vkQueueSubmit2 and synchronization2 barriers; zones inside dynamic
// rendering instances; a second device on the same physical device, alive
// beside the first, with zones every frame; with misuse, a command buffer
// a frame slot recorded once without Record and submitted again in the
// slot's later frames (refused: its zones are held to their submission's
// start only, and the validation layer's reports expected). Every choice comes from the seed and the frame's number alone, never
// from what the library answered, so a seed replays exactly.
//
// After each loop it checks, against its own journal: the profiler's
// books (each context's and the trace's) balance with nothing open, their
// zones issued are the zones the application asked for and their CPU
// spans the spans it ended, and what they delivered is what the trace
// holds; every GPU slice is a zone the application handed out, ended and
// submitted, lies inside [its submission's CPU time, the return of the
// wait for it] within its error bound, lies inside the zone it was
// recorded in, and has the arrow from its submission's span if and only
// if its command buffer was named; with pipeline statistics, has the
// compute invocations the application dispatched inside it, nested zones
// included, and nothing else, or no counts only because its frame's
// statistics queries were spent; in a loop that lets nothing go (no
// window or span cap, waits as declared), every such zone is there and
// each cause of loss counts what the application did (Drops.Work the
// slices without counts); the trace reads
// back the same from Chrome JSON; each device alive has tracks of its own
// (no queue track holds zones of two); Perfetto's trace processor loads it
// with no error, with as many GPU slices and flows; the validation layer
// says nothing (but for an application that waits late, whose resets it
// may report); no goroutine is left. TestLoops also says what its seeds
// reached, and fails when the fixed set misses a feature the device
// allows.
//
// Bare is the same application with no profiler in it, for a profiler
// that sees a program from outside (Framescope's Vulkan layer): a loop
// drawn by Gen, less what only the library's API does, written as a
// script that bare/bare.c, built from this package's C, runs, its zones
// made debug-utils labels; Bare.Check holds the outside profiler's trace
// to what the script did (layer.TestCheckerLoopsUnderLayer).
//
// A bare loop's program has a shape too (Shape, drawn from the same
// seed): threads that make and destroy instances and devices, each with
// a labelled submission, while the loop records; children at drawn
// frames, made by fork (exiting at once, or exec'ing the program's child
// mode), system or posix_spawn, with Vulkan or without, ending with a
// drawn status; SIGINT, SIGTERM, SIGKILL or SIGQUIT at a drawn frame,
// sent by the program to itself or from outside, handled or not; more
// command buffers alive at once than a layer keeps recordings of (256);
// more distinct label names than it keeps (4,096); frames by time or
// every N submissions (the program never presents); a layer that holds a
// lock while it calls down, above or below; the layer's -work (each
// zone's pipeline statistics, which zones have them the layer's rules
// say: Drops.Work is not reckoned). Each seed takes one kind in
// turn (any ShapeKinds seeds in a row draw them all) and others now and
// then. What the shape makes a profiler lose is reckoned too: a name's
// count may fall short by the executions of recordings it may refuse,
// each counted no_frame; past 4,096 names, each name is all there or all
// "(other labels)", which holds exactly the executions of those that are
// not; a program a signal ends is held to its trace up to the last whole
// batch (Bare.CheckCut).
package loopcheck
