#!/usr/bin/env bash
# The layer's tests that need no compiler, display or trace processor, on
# the GPU machine (issue 36): lifecycles, secondaries, spanning labels,
# rendering unchanged, exits while recording, frame boundaries, and the
# drawn loops (SEEDS from FIRST). Built here first:
#   make layer && mkdir -p .gpubin/lb && cp build/layer/* .gpubin/lb/ &&
#   gcc -std=gnu11 -O2 -o .gpubin/lb/lifecycle layer/testdata/lifecycle.c -lvulkan -lpthread &&
#   gcc -std=gnu11 -O2 -o .gpubin/lb/drawn layer/testdata/drawn.c -lvulkan &&
#   gcc -std=gnu11 -O2 -o .gpubin/lb/boundary layer/testdata/boundary.c -lvulkan &&
#   go test -c -o .gpubin/layer.test ./layer
# Results in $OUT: layer-check-36.txt.
set -u
. scripts/gpu/setup.sh
SEEDS=${SEEDS:-100}
FIRST=${FIRST:-1}
export FRAMESCOPE_LAYER_BUILT=$PWD/.gpubin/lb
cd layer
../.gpubin/layer.test -test.v -test.timeout 0 \
	-test.run 'TestDrawnLoops|TestLifecycle|TestSecondaries|TestSpanning|TestRenderingUnchanged|TestExitWhile|TestFrameBoundary' \
	-layer.seeds "$SEEDS" -layer.first "$FIRST" > "$out/layer-check-36.txt" 2>&1
echo "rc=$?" >> "$out/layer-check-36.txt"
grep -E '^(---|ok|FAIL|PASS|rc=)|every invariant|layer_test' "$out/layer-check-36.txt"
