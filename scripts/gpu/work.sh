#!/usr/bin/env bash
# One GPU-machine call for issue 23 (pipeline statistics): the known
# workload's exact counts (with the validation layer where .gl/vl has it),
# the statistics' determinism over RUNS identical demo runs, two demo
# traces at -load 2 and one at -load 3 for framescope diff, and the cost
# of statistics on and off, interleaved in one binary (ROUNDS rounds).
# Run from the repository root with .gl and .gpubin carried; needs
# .gpubin/{triangle,internal_cmd_demo.test,profiler.test}.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
(cd internal/cmd/demo && timeout 120 "$root/.gpubin/internal_cmd_demo.test" -test.run 'TestWorkKnownWorkload' -test.count=1 -test.v) > "$out/test-work.txt" 2>&1
echo "TestWorkKnownWorkload: rc=$?, $(grep -c -- '--- PASS' "$out/test-work.txt") passed, $(grep -c -- '--- FAIL' "$out/test-work.txt") failed" | tee "$out/tests-summary.txt"
for i in $(seq 1 "${RUNS:-10}"); do
	timeout 60 .gpubin/triangle -frames "${FRAMES:-300}" -pipeline-stats -load 2 -json -quiet -out "/tmp/run$i" > "$out/determinism-$i.json" 2>&1
	echo "run $i: rc=$?"
done | tee -a "$out/tests-summary.txt"
for l in 2 3; do
	timeout 60 .gpubin/triangle -frames 120 -pipeline-stats -load $l -quiet -out "$out/load$l" > /dev/null 2>&1
	rm -f "$out/load$l/triangle.pb.gz"
done
cp -r /tmp/run1 "$out/load2b" && rm -f "$out/load2b/triangle.pb.gz" "$out/load2b/triangle.json"
rm -f "$out"/load?/triangle.json
for i in $(seq 1 "${ROUNDS:-3}"); do
	(cd profiler && timeout 120 "$root/.gpubin/profiler.test" -test.run '^$' -test.bench 'ZoneWork|Collect(Work)?$' -test.benchmem -test.benchtime "${BENCHTIME:-3000x}") 2>&1 |
		grep -E '^Benchmark' | sed "s/^/round $i /"
done | tee "$out/bench-work.txt"
