#!/usr/bin/env bash
# Framescope's layer on the GPU machine (issue 36): testdata/lifecycle.c's
# ways with its objects under the layer, and its cost, in interleaved
# rounds: a frame of K regions filling KIB KiB each (for each of $SIZES;
# 0: no work, for the CPU cost of the marks alone), marked by nothing
# (plain), two raw timestamps (raw), debug labels (labels), and debug
# labels under the layer (layer). Built here first:
#   make layer && mkdir -p .gpubin && cp -r build/layer .gpubin/ &&
#   gcc -O2 -o .gpubin/lifecycle layer/testdata/lifecycle.c -lvulkan
# Results in $OUT: layer-36.txt. With the defaults it takes about 9
# minutes (a frame of 16 MiB regions is 82 ms on an H100): give the device
# tool its 600 s, or fewer ROUNDS.
set -u
. scripts/gpu/setup.sh
ROUNDS=${ROUNDS:-5}
N=${N:-300}
K=${K:-256}
SIZES=${SIZES-0 64 16384}
prog=.gpubin/lifecycle
fs=.gpubin/layer/framescope
log=$out/layer-36.txt
: > "$log"
for m in ${MODES:-recreate two nodestroy v10 secondary span open}; do
	echo "--- lifecycle $m 20, a frame a submission, the validation layer above" >> "$log"
	VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT \
		$fs run -layer .gpubin/layer -frame-every 1 -o /tmp/$m.pftrace -- $prog $m 20 2>&1 | grep -v '^open it' >> "$log"
	$fs stats /tmp/$m.pftrace | grep ' gpu ' >> "$log"
done
for kib in $SIZES; do
	echo "--- cost: $ROUNDS rounds of $N frames of $K regions of $kib KiB" >> "$log"
	for r in $(seq 1 "$ROUNDS"); do
		for how in plain raw labels layer; do
			if [ "$how" = layer ]; then
				line=$($fs run -layer .gpubin/layer -frame-every 1 -o /tmp/cost.pftrace -- $prog cost "$N" "$K" labels "$kib" 2>/tmp/cost.err | grep '^region')
			else
				line=$($prog cost "$N" "$K" "$how" "$kib" | grep '^region')
			fi
			echo "kib $kib round $r $how: $line" >> "$log"
		done
	done
done
echo "--- the books of the last layer run" >> "$log"
$fs stats /tmp/cost.pftrace | tail -4 >> "$log"
cat "$log"
