#!/usr/bin/env bash
# The layer on the GPU machine, a last look, in two parts (PART, default
# tail). tail: the frame CPU of lifecycle cost, old, prev and new builds
# interleaved (ROUNDS rounds), the program-shape tests of the new build
# but fork's, and the forked child (fork-44.sh). seeds: the layer
# checker's seeds from FIRST (default 63), LOOPS of them (default 100).
# Built here first into .gpubin/ (scripts/gpu/build-layer.sh new, and the
# old and prev builds' libraries and manifests in layer-old/, layer-prev/).
# Results in $OUT/layer-final.txt.
set -u
. scripts/gpu/setup.sh
log=$out/layer-final.txt
if [ "${PART:-tail}" = tail ]; then
	ROUNDS=${ROUNDS:-5} BUILDS=${BUILDS:-old prev new} OUT=$out \
		TESTS='TestThreadsMakingDevices|TestLayerHoldingItsLock|TestDrawMulti|TestUnenabledLabels|TestManyRecordings|TestOwnNamesPastLabelCap|TestResetBeforeEnd|TestNeverPresents|TestChildProcess|TestExec|TestTwoProcesses' \
		timeout 330 bash scripts/gpu/layer-frame-tail.sh > /dev/null 2>&1
	cat "$out/layer-frame-tail.txt" > "$log"
	OUT=$out timeout 200 bash scripts/gpu/fork-44.sh > /dev/null 2>&1
	grep -E '^---|killed|exited|done|: -4|took more' "$out/fork.txt" >> "$log"
else
	export FRAMESCOPE_LAYER_BUILT=$PWD/.gpubin/layer-new FRAMESCOPE_REQUIRE_VULKAN=1
	(cd layer && timeout "${LOOPTIME:-500}" ../.gpubin/layer.test -test.v -test.run TestCheckerLoopsUnderLayer \
		-layer.loops "${LOOPS:-100}" -layer.loopfirst "${FIRST:-63}" > /tmp/loops.txt 2>&1)
	echo "loops from ${FIRST:-63}: exit $?" > "$log"
	grep -E '^(--- |ok|FAIL|PASS)|loops_test|every invariant|replays|^\s+shape' /tmp/loops.txt | cut -c1-700 | tail -40 >> "$log"
fi
cat "$log"
