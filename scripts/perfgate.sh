#!/usr/bin/env bash
# A CI performance gate for the demo, to copy for an application: build
# the CLI, run BASE and NEW RUNS times each, interleaved, then
# `framescope diff`. Its exit code is diff's: 0 unchanged or improved,
# 1 regressed (or a budget exceeded), 2 bad input, 3 inconclusive.
#
#   RUNS=5 BASE_ARGS="-iterations 64" NEW_ARGS="-iterations 80" scripts/perfgate.sh
#
# BASE_BIN and NEW_BIN are the two builds to compare (in CI: the target
# branch's and the pull request's); both default to the demo built from
# this checkout, so that two settings (BASE_ARGS, NEW_ARGS) stand for them.
# Results go to OUT (default out/perfgate): base/ and new/ hold one trace
# per run, report.md the Markdown (for a job summary or a pull-request
# comment), report.html the per-run plots. DIFF_FLAGS adds flags to diff.
set -u
runs=${RUNS:-5}
out=${OUT:-out/perfgate}
common=${COMMON_ARGS:--frames 300 -load 2 -size 64 -quiet}
mkdir -p "$out/bin"
rm -rf "$out/base" "$out/new"
mkdir -p "$out/base" "$out/new"
# go build, not go run: go run turns every non-zero exit code into 1.
go build -o "$out/bin/" ./cmd/framescope ./examples/triangle || exit 2
base_bin=${BASE_BIN:-$out/bin/triangle}
new_bin=${NEW_BIN:-$out/bin/triangle}
# On lavapipe, one rasterizer thread: a frame then does not wait for a
# thread that a busy neighbour has descheduled.
export LP_NUM_THREADS=${LP_NUM_THREADS:-0}
driver=""
for i in $(seq -w 1 "$runs"); do
	# Interleaved, so that a slow spell of the machine falls on both sides.
	for side in base new; do
		if [ "$side" = base ]; then bin=$base_bin; args=${BASE_ARGS:-}; else bin=$new_bin; args=${NEW_ARGS:-}; fi
		tmp="$out/tmp-$side"
		# shellcheck disable=SC2086
		summary=$("$bin" $common $args -json -out "$tmp") || { echo "perfgate: $side run $i failed" >&2; exit 2; }
		mv "$tmp/triangle.perfetto-trace" "$out/$side/run-$i.perfetto-trace"
		[ -n "$driver" ] || driver=$(printf '%s' "$summary" | sed -n 's/.*"driver": *"\([^"]*\)".*/\1/p' | head -n1)
	done
done
rm -rf "$out/tmp-base" "$out/tmp-new"
# shellcheck disable=SC2086
"$out/bin/framescope" diff --markdown --driver "$driver" --html "$out/report.html" ${DIFF_FLAGS:-} "$out/base" "$out/new" > "$out/report.md"
rc=$?
cat "$out/report.md"
exit $rc
