#!/usr/bin/env bash
# One GPU-machine call for issue 23 (pipeline statistics), everything in
# $out/work.tgz and a summary on stdout:
# - the known workload's exact counts and each reason without counts, with
#   the validation layer where .gl/vl has it (TestWorkKnownWorkload,
#   TestWorkMissingReasons, TestWorkRefused);
# - the statistics' determinism: RUNS identical demo runs;
# - framescope diff on single demo runs: -load 2 against -load 2, and
#   -load 2 against -load 3;
# - a -pipeline-stats -render-stages demo trace, for the trace processor;
# - the render-loop checker's loops from FIRST (SEEDS of them);
# - the cost of statistics, on and off, and of the zone path and Collect
#   against the code before the issue (.gpubin/base/profiler.test),
#   interleaved, ROUNDS rounds.
# Run from the repository root with .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
w=/tmp/work23 && rm -rf $w && mkdir -p $w
(cd internal/cmd/demo && timeout 120 "$root/.gpubin/internal_cmd_demo.test" -test.run 'TestWorkKnownWorkload' -test.count=1 -test.v) > $w/test-demo.txt 2>&1
echo "TestWorkKnownWorkload: rc=$?, $(grep -c -- '--- PASS' $w/test-demo.txt) passed, $(grep -c -- '--- FAIL' $w/test-demo.txt) failed"
(cd profiler && timeout 120 "$root/.gpubin/profiler.test" -test.run 'TestWork' -test.count=1 -test.v) > $w/test-profiler.txt 2>&1
echo "profiler TestWork*: rc=$?, $(grep -c -- '--- PASS' $w/test-profiler.txt) passed, $(grep -c -- '--- FAIL' $w/test-profiler.txt) failed"
for i in $(seq 1 "${RUNS:-10}"); do
	timeout 60 .gpubin/triangle -frames 300 -pipeline-stats -load 2 -json -quiet -out /tmp/det$i > $w/determinism-$i.json 2>&1 || echo "run $i failed"
done
for r in a b; do timeout 60 .gpubin/triangle -frames 120 -pipeline-stats -load 2 -quiet -out $w/load2$r > /dev/null 2>&1; done
timeout 60 .gpubin/triangle -frames 120 -pipeline-stats -load 3 -quiet -out $w/load3 > /dev/null 2>&1
rm -f $w/load*/triangle.json $w/load*/triangle.pb.gz
.gpubin/framescope diff $w/load2a $w/load2b > $w/diff-same.txt 2>&1; echo "diff load 2 vs load 2: exit $?"
.gpubin/framescope diff $w/load2a $w/load3 > $w/diff-load.txt 2>&1; echo "diff load 2 vs load 3: exit $?"
.gpubin/framescope diff --markdown $w/load2a $w/load3 > $w/diff-load.md 2>&1
grep -E "REGRESSED|fragment_shader" $w/diff-load.txt | head -8
timeout 60 .gpubin/triangle -frames 30 -pipeline-stats -render-stages -quiet -out $w/stages > /dev/null 2>&1; echo "render stages run: rc=$?"
rm -f $w/stages/triangle.json
(cd internal/testkit/loopcheck && timeout "${LIMIT:-150}" "$root/.gpubin/internal_testkit_loopcheck.test" -test.run TestLoops \
	-loops.seeds="${SEEDS:-20}" -loops.first="${FIRST:-1811}" -loops.tp=false -loops.log -test.v -test.timeout 0) > $w/loops.txt 2>&1
echo "loops: rc=$?: $(grep -E 'seeds ran' $w/loops.txt | sed 's/;.*//')"
for i in $(seq 1 "${ROUNDS:-3}"); do
	for v in base new; do
		b=.gpubin/profiler.test
		[ $v = base ] && b=.gpubin/base/profiler.test
		bench='ZoneVsRaw$|^BenchmarkCollect$'
		[ $v = new ] && bench='ZoneVsRaw$|^BenchmarkCollect$|ZoneWork|CollectWork'
		(cd profiler && timeout 120 "$root/$b" -test.run '^$' -test.bench "$bench" -test.benchmem -test.benchtime 3000x) 2>&1 |
			grep -E '^Benchmark' | sed "s/^/round $i $v /"
	done
done > $w/bench.txt
cat $w/bench.txt | awk '{printf "%s %s %s", $1,$2,$3; for(i=4;i<=NF;i++) if ($i ~ /zone\/raw$|ns\/zone$|collect\/floor|on-flat|off\/raw|rawstatquery/) printf " %s %s", $(i-1), $i; print ""}'
cp $out/machine.txt $w/
tar czf $out/work.tgz -C /tmp work23
