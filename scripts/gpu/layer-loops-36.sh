#!/usr/bin/env bash
# The render-loop checker's application run bare under the layer on the
# GPU machine (issue 36): LOOPS seeds from FIRST of
# TestCheckerLoopsUnderLayer. Built here first:
#   make layer && mkdir -p .gpubin/lb && cp build/layer/* .gpubin/lb/ &&
#   gcc -std=gnu11 -Wall -O2 -Iinternal/testkit/loopcheck -o .gpubin/lb/bare internal/testkit/loopcheck/bare/bare.c \
#     internal/testkit/loopcheck/{app,submit,twin,render}.c -lvulkan -lpthread &&
#   go test -c -o .gpubin/layer.test ./layer
# Results in $OUT: layer-loops-36.txt.
set -u
. scripts/gpu/setup.sh
LOOPS=${LOOPS:-100}
FIRST=${FIRST:-1}
export FRAMESCOPE_LAYER_BUILT=$PWD/.gpubin/lb
export FRAMESCOPE_BARE_KEEP=$out
cd layer
../.gpubin/layer.test -test.v -test.timeout 0 -test.run 'TestCheckerLoopsUnderLayer' \
	-layer.loops "$LOOPS" -layer.loopfirst "$FIRST" > "$out/layer-loops-36.txt" 2>&1
echo "rc=$?" >> "$out/layer-loops-36.txt"
grep -E '^(---|ok|FAIL|PASS|rc=)|every invariant|loops_test' "$out/layer-loops-36.txt" | cut -c1-3000
