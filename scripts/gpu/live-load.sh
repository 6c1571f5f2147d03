#!/usr/bin/env bash
# One GPU-machine call for the live view's load test (issue 15): the
# capture stream's benchmark against its floor, the hot path with the
# handler mounted and idle, and liveload's pairs of runs of the demo with
# and without 50 viewers and 10 capture clients. Run from the repository
# root with .gl and .gpubin carried (scripts/gpu/build.sh builds .gpubin
# here). Results in $OUT: bench-live.txt and liveload.txt.
set -u
. scripts/gpu/setup.sh
ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libvulkan.so.1* | head -1)" /usr/lib/x86_64-linux-gnu/libvulkan.so 2>/dev/null
export FRAMESCOPE_REQUIRE_VULKAN=1
timeout ${BENCH_S:-120} .gpubin/live.test -test.run '^$' -test.bench "${BENCH:-.}" -test.benchmem -test.count ${COUNT:-6} -test.benchtime 300ms > "$out/bench-live.txt" 2>&1
tail -3 "$out/bench-live.txt"
timeout ${LOAD_S:-400} .gpubin/liveload -demo .gpubin/triangle -runs ${RUNS:-8} -seconds 10 > "$out/liveload.txt" 2>&1
tail -12 "$out/liveload.txt"
