#!/usr/bin/env bash
# Issue 35's hot-path figures: BenchmarkZoneVsRaw, BenchmarkZoneParallel
# and BenchmarkCollect of this tree (.gpubin/profiler.test) against the
# code before the issue (.gpubin/old/profiler.test, built from 0a79551),
# interleaved ROUNDS times (default 3). On the GPU machine after
# scripts/gpu/setup.sh; on lavapipe as it is. Results in $OUT.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
root=$PWD
for i in $(seq "${ROUNDS:-3}"); do
	for v in old new; do
		b=.gpubin/profiler.test
		[ $v = old ] && b=.gpubin/old/profiler.test
		(cd profiler && timeout 120 "$root/$b" -test.run '^$' -test.bench "${BENCH:-ZoneVsRaw\$|ZoneParallel/goroutines=[12]\$|Collect\$}" -test.benchmem -test.benchtime 1s) 2>&1 |
			grep -E '^Benchmark' | sed "s/^/$i $v /"
	done
done | tee "$out/hotpath-35.txt"
