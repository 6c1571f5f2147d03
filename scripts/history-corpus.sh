#!/usr/bin/env bash
# Real runs for the evaluation of framescope history check (issue 37;
# cmd/framescope's TestHistoryEvaluation reads them): the demo, N runs at
# a base setting and M at each step setting, interleaved so that the
# machine's slow spells fall on every setting alike, and M runs with
# pipeline statistics at each of two loads (an exact step in work).
#   scripts/history-corpus.sh DIR
#   FRAMESCOPE_HISTORY_CORPUS=DIR go test -run TestHistoryEvaluation -v ./cmd/framescope
# TRIANGLE is the demo's binary (go build -o /tmp/triangle ./examples/triangle).
# The defaults are lavapipe's (as TestDiffGateOnLavapipe's settings: 70
# and 80 iterations are about 10% and 25% more GPU time a frame than 64);
# on the GPU machine scripts/gpu/history-corpus.sh sets its own.
set -eu
out=${1:?usage: history-corpus.sh DIR}
tri=${TRIANGLE:-/tmp/triangle}
COMMON=${COMMON:--frames 240 -load 2 -size 64 -quiet}
BASE=${BASE:--iterations 64}
STEPS=${STEPS:-step+10%=-iterations 70;step+25%=-iterations 80;step+50%=-iterations 96}
WORK_BASE=${WORK_BASE:--pipeline-stats -load 2}
WORK_STEP=${WORK_STEP:--pipeline-stats -load 3}
N=${N:-60}
M=${M:-20}
export LP_NUM_THREADS=${LP_NUM_THREADS:-0} # lavapipe: one rasterizer thread (see TestDiffGateOnLavapipe)
mkdir -p "$out/base" "$out/work-base" "$out/work-step"
one() { # one DIR NAME ARGS...: a run of the demo into DIR/NAME.perfetto-trace
	local d=$1 n=$2
	shift 2
	# shellcheck disable=SC2086
	"$tri" $COMMON "$@" -out "$out/tmp" >/dev/null
	mv "$out/tmp/triangle.perfetto-trace" "$d/$n.perfetto-trace"
}
IFS=';' read -ra steps <<<"$STEPS"
for i in $(seq -w 1 "$N"); do
	# shellcheck disable=SC2086
	one "$out/base" "run-$i" $BASE
	if [ "$((10#$i))" -le "$M" ]; then
		for s in "${steps[@]}"; do
			mkdir -p "$out/${s%%=*}"
			# shellcheck disable=SC2086
			one "$out/${s%%=*}" "run-$i" $BASE ${s#*=} # the step's flags after the base's: the later ones rule
		done
		# shellcheck disable=SC2086
		one "$out/work-base" "run-$i" $BASE $WORK_BASE
		# shellcheck disable=SC2086
		one "$out/work-step" "run-$i" $BASE $WORK_STEP
	fi
done
rm -rf "$out/tmp"
