#!/usr/bin/env bash
# One GPU-machine call for issue 12: the outside-application suite
# (profiler TestApp*, validation layer off: the machine has none), the
# copyable example at every frames-in-flight setting, and the hot-path
# benchmarks of this tree against the tree before the issue (.gpubin/old/),
# interleaved. Run from the repository root with .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
# vulkan-go opens libvulkan.so, which only the -dev package provides.
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
(cd profiler && timeout 240 "$root/.gpubin/profiler.test" -test.run 'TestApp|TestOptionsBeyondLimits|TestClosedContexts' -test.count=1 -test.v) 2>&1 |
	grep -v '^=== RUN' > "$out/test-apps.txt"
echo "profiler TestApp*: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/test-apps.txt") passed, $(grep -c -- '--- FAIL' "$out/test-apps.txt") failed" | tee "$out/tests-summary.txt"
(cd internal/querypool && timeout 100 "$root/.gpubin/internal_querypool.test" -test.count=1) > "$out/test-querypool.txt" 2>&1
echo "querypool: rc=$?, $(tail -1 "$out/test-querypool.txt")" | tee -a "$out/tests-summary.txt"
(cd examples/wrap && timeout 200 "$root/.gpubin/examples_wrap.test" -test.run 'TestWrap$' -test.count=1 -test.v) 2>&1 |
	grep -v '^=== RUN' > "$out/test-wrap.txt"
echo "examples/wrap: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/test-wrap.txt") passed, $(grep -c -- '--- FAIL' "$out/test-wrap.txt") failed" | tee -a "$out/tests-summary.txt"
for f in 1 3 4 8 16; do
	timeout 60 .gpubin/wrap -frames 300 -frames-in-flight $f -out /tmp/wrap$f 2>&1 | tail -1
done | tee "$out/wrap-runs.txt"
# Old and new, interleaved, three times each: ratios within one binary's run.
for i in 1 2 3; do
	for v in old new; do
		b=.gpubin/profiler.test
		[ $v = old ] && b=.gpubin/old/profiler.test
		(cd profiler && timeout 60 "$root/$b" -test.run '^$' -test.bench 'ZoneVsRaw|^BenchmarkZone$|RawTimestampPair|Collect' -test.benchmem -test.benchtime 1s) 2>&1 |
			grep -E '^Benchmark' | sed "s/^/$v /"
	done
done | tee "$out/bench-zone.txt"
