#!/usr/bin/env bash
# One GPU-machine call: the hot-path benchmarks (a zone against its raw
# timestamp pair, Collect per zone) of this tree against an older one
# (.gpubin/old/profiler.test, scripts/gpu/build.sh OLD=<commit>),
# interleaved ROUNDS times (default 5), then the outside-application tests of
# this tree, with the validation layer (.gl/vl/). Run from the repository root with .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
for i in $(seq "${ROUNDS:-5}"); do
	for v in old new; do
		b=.gpubin/profiler.test
		[ $v = old ] && b=.gpubin/old/profiler.test
		(cd profiler && timeout 60 "$root/$b" -test.run '^$' -test.bench "${BENCH:-ZoneVsRaw|Collect}" -test.benchmem -test.benchtime 1s) 2>&1 |
			grep -E '^Benchmark' | sed "s/^/$v /"
	done
done | tee "$out/bench-old-new.txt"
(cd profiler && FRAMESCOPE_REQUIRE_VULKAN=1 timeout 200 "$root/.gpubin/profiler.test" -test.run 'TestApp' -test.count=1 -test.v) 2>&1 |
	grep -v '^=== RUN' > "$out/test-apps.txt"
echo "profiler TestApp*: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/test-apps.txt") passed, $(grep -c -- '--- FAIL' "$out/test-apps.txt") failed"
