#!/usr/bin/env bash
# The layer's frame CPU on the GPU machine, old and new layer builds and raw
# timestamps interleaved: ROUNDS rounds of layer/testdata/lifecycle.c
# cost N K labels|raw KIB (N frames of K regions, each filling KIB KiB
# of a buffer: 0, the default, no GPU work), the layer
# loaded through the environment as framescope run loads it, a frame a
# submission; and the labels without the layer (the driver's own cost of
# them). Then the layer's tests of program shapes against the new
# build ($TESTS). Built here first, into .gpubin/: layer-new/ and
# layer.test (scripts/gpu/build-layer.sh new), layer-old/ (the layer's two
# libraries and manifest of the build compared against). BUILDS names the layer builds under
# .gpubin/layer-NAME to interleave (default: old new); TESTS empty runs
# none. Results in $OUT/layer-frame-tail.txt.
set -u
. scripts/gpu/setup.sh
ROUNDS=${ROUNDS:-5}
BUILDS=${BUILDS:-old new}
N=${N:-1200}
K=${K:-256}
KIB=${KIB:-0}
TESTS=${TESTS:-'TestThreadsMakingDevices|TestLayerHoldingItsLock|TestDrawMulti|TestUnenabledLabels|TestManyRecordings|TestOwnNamesPastLabelCap|TestResetBeforeEnd|TestNeverPresents|TestFork|TestChildProcess|TestExec|TestTwoProcesses'}
prog=.gpubin/layer-new/lifecycle
log=$out/layer-frame-tail.txt
: > "$log"
under() { # under DIR: lifecycle cost under the layer in DIR
	VK_ADD_LAYER_PATH="$1${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}" VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile \
		VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile FRAMESCOPE_OUT=/tmp/cost-$(basename "$1").pftrace \
		FRAMESCOPE_FRAME_EVERY=1 $prog cost "$N" "$K" labels "$KIB" 2>/dev/null | grep -E '^(region|parts)' | tr '\n' ' '
}
echo "--- cost: $ROUNDS rounds of $N frames of $K regions of $KIB KiB" >> "$log"
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r raw: $($prog cost "$N" "$K" raw "$KIB" | grep -E '^(region|parts)' | tr '\n' ' ')" >> "$log"
	# The labels alone, without the layer: what the driver's own label
	# calls cost, which the layer passes down and cannot save.
	echo "round $r labels, no layer: $($prog cost "$N" "$K" labels "$KIB" | grep -E '^(region|parts)' | tr '\n' ' ')" >> "$log"
	for b in $BUILDS; do
		echo "round $r $b: $(under "$PWD/.gpubin/layer-$b")" >> "$log"
	done
done
for b in $BUILDS; do
	echo "--- the books of the last $b run" >> "$log"
	.gpubin/layer-new/framescope stats /tmp/cost-layer-$b.pftrace 2>&1 | tail -4 >> "$log"
done
[ -n "$TESTS" ] || { cat "$log"; exit 0; }
echo "--- tests ($TESTS) of the new build" >> "$log"
FRAMESCOPE_LAYER_BUILT=$PWD/.gpubin/layer-new FRAMESCOPE_REQUIRE_VULKAN=1 \
	timeout 400 .gpubin/layer.test -test.run "$TESTS" -test.v -test.count=1 2>&1 |
	grep -E '^(=== RUN|\s*--- |PASS|FAIL|ok)|_test.go' >> "$log"
cat "$log"
