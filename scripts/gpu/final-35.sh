#!/usr/bin/env bash
# Issue 35's closing call on the GPU machine: the profiler's tests of the
# issue (validation layer from .gl/vl/), the hot path against the code
# before the issue (hotpath-35.sh, 3 interleaved rounds), and the
# render-loop checker on SEEDS seeds (default 200, 0: none) from FIRST
# (default 9501). LOOPS_ONLY=1 runs the checker alone. Run from the repository root with .gl and .gpubin carried.
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
if [ -z "${LOOPS_ONLY:-}" ]; then
(cd profiler && timeout 120 "$root/.gpubin/profiler.test" -test.count=1 -test.v \
	-test.run 'TestRecording|TestResubmitted|TestApp|TestTwo|TestGPUDoesNotWait|TestCalibrationError|TestWrapHost|TestCollectAllocates|TestBeginResult') 2>&1 |
	grep -v '^=== RUN' > "$out/tests-35.txt"
echo "profiler: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/tests-35.txt") passed, $(grep -c -- '--- FAIL' "$out/tests-35.txt") failed"
ROUNDS=3 bash scripts/gpu/hotpath-35.sh > /dev/null 2>&1
echo "hot path: $(wc -l < "$out/hotpath-35.txt") lines"
fi
[ "${SEEDS:-200}" = 0 ] && exit 0
first=${FIRST:-9501}
(cd internal/testkit/loopcheck && timeout "${LIMIT:-330}" "$root/.gpubin/internal_testkit_loopcheck.test" -test.run TestLoops -test.v -test.timeout 0 \
	-loops.tp=false -loops.seeds="${SEEDS:-200}" -loops.first="$first" -loops.log) > "$out/loops-$first.txt" 2>&1
echo "loopcheck seeds $first..: rc=$?"
grep -E 'seeds ran|replay:' "$out/loops-$first.txt" | tail -8
