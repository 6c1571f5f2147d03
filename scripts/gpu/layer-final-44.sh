#!/usr/bin/env bash
# The layer on the GPU machine, a last look: the frame CPU and books of
# lifecycle cost (ROUNDS rounds of the new build), the never-presenting
# test, a forked child that exits at once or makes an instance, plain and
# under the layer, and the layer checker's seeds SEEDS then LOOPS from
# FIRST (until the time runs out). Built here first into .gpubin/: the
# layer-frame-tail.sh builds, with bare (internal/testkit/loopcheck) in
# layer-new. Results in $OUT/layer-final.txt.
set -u
. scripts/gpu/setup.sh
log=$out/layer-final.txt
ROUNDS=${ROUNDS:-2} BUILDS=new TESTS='TestNeverPresents' OUT=$out timeout 120 bash scripts/gpu/layer-frame-tail.sh > /dev/null 2>&1
cat "$out/layer-frame-tail.txt" > "$log"
new=$PWD/.gpubin/layer-new
for m in fork-exit fork-instance; do
	timeout 20 "$new/procs" "$m" 100 > /dev/null 2>&1
	echo "plain $m: exit $?" >> "$log"
	VK_ADD_LAYER_PATH="$new${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}" VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile \
		VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile FRAMESCOPE_OUT=/tmp/$m.pftrace \
		timeout 20 "$new/procs" "$m" 100 > /tmp/$m.out 2>&1
	echo "under the layer $m: exit $? ($(tail -2 /tmp/$m.out | tr '\n' ' '))" >> "$log"
done
export FRAMESCOPE_LAYER_BUILT=$new FRAMESCOPE_REQUIRE_VULKAN=1
cd layer
for s in ${SEEDS:-30 58 62}; do
	timeout 60 ../.gpubin/layer.test -test.run TestCheckerLoopsUnderLayer -layer.loop "$s" -test.v 2>&1 |
		grep -E '^(--- |ok|FAIL|PASS)|loops_test|  ' | cut -c1-600 | sed "s/^/seed $s: /" >> "$log"
done
timeout "${LOOPTIME:-100}" ../.gpubin/layer.test -test.v -test.run TestCheckerLoopsUnderLayer \
	-layer.loops "${LOOPS:-40}" -layer.loopfirst "${FIRST:-63}" > /tmp/loops.txt 2>&1
echo "loops from ${FIRST:-63}: exit $?" >> "$log"
grep -E '^(--- |ok|FAIL|PASS)|loops_test|every invariant' /tmp/loops.txt | cut -c1-600 | tail -30 >> "$log"
cat "$log"
