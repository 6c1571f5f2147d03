#!/usr/bin/env bash
# The evaluation of framescope history check on the GPU machine (issue
# 37): scripts/history-corpus.sh's runs of the demo at the perfgate's
# settings (-load 10 -iterations 175: about 2 ms of GPU time a frame on
# an H100, 0.0113 ms an iteration, so 177, 179 and 184 are about +1%,
# +2% and +5%), then TestHistoryEvaluation on them. Built here first:
#   go build -ldflags=-s\ -w -o .gpubin/ ./examples/triangle &&
#   go test -c -o .gpubin/framescope.test ./cmd/framescope
# Results in $OUT: history-eval.txt.
set -eu
. scripts/gpu/setup.sh
export TRIANGLE=$PWD/.gpubin/triangle
export COMMON="-frames 300 -warmup 30 -quiet" BASE="-load 10 -iterations 175"
export STEPS="step+01%=-iterations 177;step+02%=-iterations 179;step+05%=-iterations 184"
export WORK_BASE="-pipeline-stats" WORK_STEP="-pipeline-stats -load 11"
N=${N:-60} M=${M:-20} bash scripts/history-corpus.sh /tmp/hc
cd cmd/framescope
FRAMESCOPE_HISTORY_CORPUS=/tmp/hc FRAMESCOPE_HISTORY_EVAL="$out/history-eval.txt" \
	../../.gpubin/framescope.test -test.run TestHistoryEvaluation -test.v > "$out/history-eval-log.txt" 2>&1 || true
cat "$out/history-eval.txt" 2>/dev/null || tail -20 "$out/history-eval-log.txt"
