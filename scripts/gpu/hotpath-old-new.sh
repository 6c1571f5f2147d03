#!/usr/bin/env bash
# One GPU-machine call for issue 22: the hot-path benchmarks of this tree
# against .gpubin/old/profiler.test (scripts/gpu/build.sh OLD=<commit>),
# interleaved ROUNDS times (default 3), with any other VARIANTS built
# into .gpubin/NAME/: BENCH (default ZoneVsRaw,
# ZoneParallel, FrameCost) for 1s each, and Collect for COLLECT frames
# (default 2000: its untimed frames make a 1s benchtime run for minutes),
# and BenchmarkZonePath where the variant has querypool.test beside it.
# Then a CPU profile of this tree's Collect over PROFILE frames (0: none);
# the outside-application tests;
# the render-loop checker on SEEDS seeds (default 60) from FIRST, with the
# validation layer. Run from the repository root with .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
cat "$out/machine.txt"
bench() { # binary, -test.bench, -test.benchtime, extra flags
	(cd profiler && timeout 120 "$root/$1" -test.run '^$' -test.bench "$2" -test.benchmem -test.benchtime "$3" "${@:4}") 2>&1 | grep -E '^Benchmark'
}
for i in $(seq "${ROUNDS:-3}"); do
	for v in ${VARIANTS:-old new}; do # new: .gpubin/profiler.test; any other v: .gpubin/v/profiler.test
		b=.gpubin/profiler.test
		[ $v = new ] || b=.gpubin/$v/profiler.test
		q=${b%profiler.test}querypool.test # the zone path alone, where built
		{
			bench $b "${BENCH:-ZoneVsRaw\$|ZoneParallel|FrameCost}" 1s
			bench $b 'Collect$' "${COLLECT:-2000}x"
			[ -x "$q" ] && (cd internal/querypool && timeout 60 "$root/$q" -test.run '^$' -test.bench ZonePath -test.benchtime 1s) 2>&1 | grep -E '^Benchmark'
		} | sed "s/^/$v /"
	done
done | tee "$out/bench.txt"
if [ "${PROFILE:-0}" -gt 0 ]; then
	bench .gpubin/profiler.test 'Collect$' "${PROFILE}x" -test.cpuprofile "$out/collect-new.prof"
fi
(cd profiler && FRAMESCOPE_REQUIRE_VULKAN=1 timeout 150 "$root/.gpubin/profiler.test" -test.run 'TestApp' -test.count=1 -test.v) 2>&1 |
	grep -v '^=== RUN' > "$out/test-apps.txt"
echo "profiler TestApp*: $(grep -c -- '--- PASS' "$out/test-apps.txt") passed, $(grep -c -- '--- FAIL' "$out/test-apps.txt") failed"
if [ "${SEEDS:-60}" -gt 0 ]; then
	(cd internal/testkit/loopcheck && timeout "${LIMIT:-150}" "$root/.gpubin/internal_testkit_loopcheck.test" -test.run TestLoops -test.v -test.timeout 0 \
		-loops.tp=false -loops.seeds="${SEEDS:-60}" -loops.first="${FIRST:-1}" -loops.log) > "$out/loops-${FIRST:-1}.txt" 2>&1
	echo "loopcheck seeds ${FIRST:-1}..: rc=$?"
	grep -E 'seeds ran|replay:' "$out/loops-${FIRST:-1}.txt" | tail -5
fi
