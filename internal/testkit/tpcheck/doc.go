// Package tpcheck loads trace files into Perfetto's real trace processor and
// runs SQL on them, so that tests can check what Perfetto's UI will show
// rather than what our own reader believes.
//
// Two processors are supported. The WebAssembly build of trace_processor
// v55.3 (fetched by scripts/fetch-trace-processor.sh, run by `make tp`) is
// driven by a small Node harness, tp.mjs, embedded in this package: one Node
// process per test binary serves every trace, so Node's start-up and the
// wasm compile are paid once. A trace_processor_shell binary (from
// Perfetto's releases) can stand in for it: the same harness then relays the
// same RPC to the shell's --stdiod mode.
//
// The processor is looked for, in order: the directory (or shell binary)
// named by FRAMESCOPE_TRACE_PROCESSOR, trace_processor_shell on PATH, and
// .cache/trace-processor at the module root. When none is found the test is
// skipped with the reason, unless FRAMESCOPE_REQUIRE_TP=1; when
// FRAMESCOPE_TRACE_PROCESSOR names something unusable, the test fails.
package tpcheck
