#!/usr/bin/env bash
# One GPU-machine call for the redesign (issue 14) and the live view
# (issue 15): the benchmark figures, each against its floor or peer in the
# same run, and the live view's load test. Run from the repository root
# with .gl and .gpubin carried (scripts/gpu/build.sh builds .gpubin here).
# Results in $OUT: bench-*.txt (go test -bench output, benchstat's input)
# and liveload.txt.
set -u
. scripts/gpu/setup.sh
ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libvulkan.so.1* | head -1)" /usr/lib/x86_64-linux-gnu/libvulkan.so 2>/dev/null
export FRAMESCOPE_REQUIRE_VULKAN=1
# Zone against a raw timestamp pair, Collect warm (profiler); a CPU span
# against two clock reads (timeline); bytes a span (Perfetto writer).
timeout 150 .gpubin/profiler.test -test.run '^$' -test.bench 'ZoneVsRaw|^BenchmarkCollect$' -test.benchmem -test.count 3 > "$out/bench-profiler.txt" 2>&1
timeout 60 .gpubin/timeline.test -test.run '^$' -test.bench '^Benchmark(CPUSpan|TwoClockReads)$' -test.benchmem -test.count 6 > "$out/bench-timeline.txt" 2>&1
timeout 60 .gpubin/export_perfetto.test -test.run '^$' -test.bench '^BenchmarkPerfettoWriter$' -test.benchmem -test.count 3 > "$out/bench-perfetto.txt" 2>&1
# The hot path with the live view mounted and idle, and without it.
timeout 150 .gpubin/live.test -test.run '^$' -test.bench . -test.benchmem -test.count 6 > "$out/bench-live.txt" 2>&1
# 50 viewers and 10 capture clients against the demo, alternating with no
# viewer, 10 s each.
timeout 250 .gpubin/liveload -demo .gpubin/triangle -runs ${RUNS:-5} -seconds 10 > "$out/liveload.txt" 2>&1
tail -6 "$out/liveload.txt"
