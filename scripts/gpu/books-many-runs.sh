#!/usr/bin/env bash
# One GPU-machine call: the books of command buffers that run many times
# and code written against an earlier API, on the GPU: the profiler's
# resubmitted-pattern, simultaneous-use and zero-APIVersion tests with the
# validation layer (.gl/vl), logged (-test.v), and the render-loop
# checker's seeds FIRST.. (LOOPS of them); with .gpubin/old-profiler.test
# (the profiler's tests of an older tree, with profiler/simultaneous_test.go
# copied in), the simultaneous-use window test on the old code too. Run
# from the repository root with .gl and .gpubin carried (go test -c of
# profiler and internal/testkit/loopcheck into .gpubin/).
set -u
. scripts/gpu/setup.sh
lib=/usr/lib/x86_64-linux-gnu
[ -e $lib/libvulkan.so ] || ln -s libvulkan.so.1 $lib/libvulkan.so
root=$PWD
export FRAMESCOPE_REQUIRE_VULKAN=1
(cd profiler && timeout 300 "$root/.gpubin/profiler.test" -test.count=1 -test.v \
	-test.run 'TestResubmittedShapes|TestResubmittedWithoutRecord|TestRecordedAgainWithoutZonesNotCounted|TestSimultaneousRecordingWindow|TestAppZeroAPIVersion|TestAppVulkan10Instance|TestWrapHostResetNeedsVersion|TestRecording') 2>&1 |
	grep -v '^=== RUN' > "$out/profiler-books.txt"
echo "profiler: rc=${PIPESTATUS[0]}, $(grep -c -- '--- PASS' "$out/profiler-books.txt") passed, $(grep -c -- '--- FAIL' "$out/profiler-books.txt") failed" | tee "$out/summary.txt"
if [ -x .gpubin/old-profiler.test ]; then
	(cd profiler && timeout 120 "$root/.gpubin/old-profiler.test" -test.count=1 -test.v -test.run TestSimultaneousRecordingWindow) 2>&1 |
		grep -v '^=== RUN' > "$out/simultaneous-old.txt"
	echo "old code, simultaneous-use window: $(grep -c -- '--- FAIL: TestSimultaneousRecordingWindow/' "$out/simultaneous-old.txt") of 5 settings fail" | tee -a "$out/summary.txt"
fi
if [ -x .gpubin/internal_testkit_loopcheck.test ]; then
	(cd internal/testkit/loopcheck && timeout 240 "$root/.gpubin/internal_testkit_loopcheck.test" -test.run TestLoops -test.count=1 -loops.tp=false \
		-loops.seeds="${LOOPS:-100}" -loops.first="${FIRST:-1}" -test.v) > "$out/loops.txt" 2>&1
	echo "loopcheck seeds ${FIRST:-1}-$((${FIRST:-1} + ${LOOPS:-100} - 1)): rc=$?, $(grep -E 'seeds ran' "$out/loops.txt" | sed 's/; reached.*//')" | tee -a "$out/summary.txt"
fi
