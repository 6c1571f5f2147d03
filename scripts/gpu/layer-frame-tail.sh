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
# none. Results in $OUT/layer-frame-tail.txt. HERE=1 runs it on this
# machine's own Vulkan device (lavapipe) instead.
# The build name "peer" runs the peer layer users would pick instead,
# lstalmir/VulkanProfiler (VK_LAYER_PROFILER_unified), from
# .gpubin/peer/ (its manifest and library, and in lib/ the libraries it
# needs that the GPU machine lacks), built here from its own source and
# never committed: per-draw sampling (its default, the one that times
# debug labels), a frame per submission, its trace written to a file.
set -u
if [ -n "${HERE:-}" ]; then # HERE=1: on this machine's own Vulkan (lavapipe), without the GPU machine's set-up
	out=${OUT:-/tmp/out}
	mkdir -p "$out"
else
	. scripts/gpu/setup.sh
fi
ROUNDS=${ROUNDS:-5}
BUILDS=${BUILDS:-old new}
N=${N:-1200}
K=${K:-256}
KIB=${KIB:-0}
TESTS=${TESTS-'TestThreadsMakingDevices|TestLayerHoldingItsLock|TestDrawMulti|TestUnenabledLabels|TestManyRecordings|TestOwnNamesPastLabelCap|TestResetBeforeEnd|TestNeverPresents|TestFork|TestChildProcess|TestExec|TestTwoProcesses'}
prog=.gpubin/layer-new/lifecycle
log=$out/layer-frame-tail.txt
: > "$log"
under() { # under DIR: lifecycle cost under the layer in DIR
	VK_ADD_LAYER_PATH="$1${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}" VK_INSTANCE_LAYERS=VK_LAYER_FRAMESCOPE_profile \
		VK_LOADER_LAYERS_ENABLE=VK_LAYER_FRAMESCOPE_profile FRAMESCOPE_OUT=/tmp/cost-$(basename "$1").pftrace \
		FRAMESCOPE_FRAME_EVERY=1 $prog cost "$N" "$K" labels "$KIB" 2>/dev/null | grep -E '^(region|parts)' | tr '\n' ' '
}
echo "--- cost: $ROUNDS rounds of $N frames of $K regions of $KIB KiB" >> "$log"
peer() { # lifecycle cost under the peer layer in .gpubin/peer
	local d=$PWD/.gpubin/peer
	LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" VK_ADD_LAYER_PATH="$d${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}" \
		VK_INSTANCE_LAYERS=VK_LAYER_PROFILER_unified VK_LOADER_LAYERS_ENABLE=VK_LAYER_PROFILER_unified VKPROF_output=trace \
		VKPROF_output_trace_file=/tmp/cost-peer.json VKPROF_sampling_mode=drawcall VKPROF_frame_delimiter=submit \
		VKPROF_frame_count=0 VKPROF_enable_performance_query_ext=none \
		$prog cost "$N" "$K" labels "$KIB" 2>/dev/null | grep -E '^(region|parts)' | tr '\n' ' '
}
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r raw: $($prog cost "$N" "$K" raw "$KIB" | grep -E '^(region|parts)' | tr '\n' ' ')" >> "$log"
	# The labels alone, without the layer: what the driver's own label
	# calls cost, which the layer passes down and cannot save.
	echo "round $r labels, no layer: $($prog cost "$N" "$K" labels "$KIB" | grep -E '^(region|parts)' | tr '\n' ' ')" >> "$log"
	for b in $BUILDS; do
		if [ "$b" = peer ]; then
			echo "round $r peer: $(peer)" >> "$log"
		else
			echo "round $r $b: $(under "$PWD/.gpubin/layer-$b")" >> "$log"
		fi
	done
done
ls -l /tmp/cost-*.pftrace /tmp/cost-peer.json 2>/dev/null | awk '{print "--- trace", $9, $5, "bytes"}' >> "$log"
for b in ${BUILDS/peer/}; do
	echo "--- the books of the last $b run" >> "$log"
	.gpubin/layer-new/framescope stats /tmp/cost-layer-$b.pftrace 2>&1 | tail -4 >> "$log"
done
[ -n "$TESTS" ] || { cat "$log"; exit 0; }
echo "--- tests ($TESTS) of the new build" >> "$log"
FRAMESCOPE_LAYER_BUILT=$PWD/.gpubin/layer-new FRAMESCOPE_REQUIRE_VULKAN=1 \
	timeout 400 .gpubin/layer.test -test.run "$TESTS" -test.v -test.count=1 2>&1 |
	grep -E '^(=== RUN|\s*--- |PASS|FAIL|ok)|_test.go' >> "$log"
cat "$log"
