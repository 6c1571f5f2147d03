#!/usr/bin/env bash
# One GPU-machine call: the Vulkan tests on the real GPU (validation layer
# off: the machine has none), which stage choices nest, and what
# profiling costs the GPU (overhead.sh). Run from the repository root with
# .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
.gpubin/framescope devices > "$out/devices.txt" 2>&1
root=$PWD
for dir in internal/vk internal/querypool profiler profiler/benchgpu internal/cmd/demo; do
	t=$(echo "$dir" | tr / _)
	# From the package's directory, as go test runs it (tests read files there).
	(cd "$dir" && timeout 200 "$root/.gpubin/$t.test" -test.count=1 -test.v) 2>&1 | grep -v '^=== RUN' > "$out/test-$t.txt"
	echo "$dir: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/test-$t.txt") passed, $(grep -c -- '--- FAIL' "$out/test-$t.txt") failed, $(grep -c -- '--- SKIP' "$out/test-$t.txt") skipped" | tee -a "$out/tests-summary.txt"
done
timeout 100 .gpubin/profiler.test -test.run '^$' -test.bench 'ZoneVsRaw|Collect' -test.benchtime 1s > "$out/bench-profiler.txt" 2>&1
BIN=.gpubin bash scripts/stages.sh -frames 60 -load 10 -iterations 64 -zones 64 2>&1 | tee "$out/stages.txt"
bash scripts/gpu/overhead.sh
