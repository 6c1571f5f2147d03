#!/usr/bin/env bash
# The performance gate on the GPU machine (issue 13): 10 runs at each of
# two demo settings about 5% apart in GPU frame time, interleaved; then
# framescope diff on every way the acceptance asks:
#   - A[1-5] vs B[1-5] and A[6-10] vs B[6-10]: must be regressed (exit 1);
#   - A[1-10] vs B[1-10];
#   - identical splits, 5 vs 5, of A's runs and of B's: 20 seeded random
#     splits each, none may fail (exit 1).
# Run from the repository root with .gl and .gpubin carried
# (scripts/gpu/build.sh builds .gpubin here). Results in $OUT:
# perfgate-summary.txt (what to read), perfgate-runs.jsonl (the demo's
# summaries), perfgate-diffs.jsonl (every diff's JSON, one a line),
# report.md and report.html (A[1-5] vs B[1-5]).
#
# The settings: on the H100, -load 10 -iterations 175 took 1.998 ms of GPU
# time a frame and -iterations 256 took 2.916 ms (docs/measurements/overhead-h100-setup.txt):
# 0.0113 ms an iteration, so 184 iterations is about +5.1%.
set -u
. scripts/gpu/setup.sh
A_ARGS=${A_ARGS:--load 10 -iterations 175}
B_ARGS=${B_ARGS:--load 10 -iterations 184}
COMMON=${COMMON:--frames 300 -warmup 30 -quiet -json}
runs=10
work=/tmp/perfgate
rm -rf "$work"
mkdir -p "$work/A" "$work/B"
fs=.gpubin/framescope
: > "$out/perfgate-runs.jsonl"
for i in $(seq -w 1 $runs); do
	for side in A B; do
		if [ "$side" = A ]; then args=$A_ARGS; else args=$B_ARGS; fi
		# shellcheck disable=SC2086
		line=$(.gpubin/triangle $COMMON $args -out "$work/tmp" | tr -d '\n')
		mv "$work/tmp/triangle.perfetto-trace" "$work/$side/run-$i.perfetto-trace"
		echo "{\"side\":\"$side\",\"run\":$((10#$i)),\"args\":\"$args\",\"summary\":$line}" >> "$out/perfgate-runs.jsonl"
	done
done
driver=$(head -n1 "$out/perfgate-runs.jsonl" | sed -n 's/.*"driver": *"\([^"]*\)".*/\1/p')
# side DIR NAME FILES...: a directory of links to the given runs.
mkside() { local d="$work/$1"; shift; rm -rf "$d"; mkdir -p "$d"; for f in "$@"; do ln -s "$f" "$d/"; done; }
: > "$out/perfgate-diffs.jsonl"
summary="$out/perfgate-summary.txt"
{
	echo "A: $A_ARGS; B: $B_ARGS; $COMMON; driver $driver"
	python3 - "$out/perfgate-runs.jsonl" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
for side in "AB":
    v = [r["summary"]["frame_gpu_ms"]["p50"] for r in rows if r["side"] == side]
    print(f"{side}: frame GPU p50 per run (ms): " + " ".join(f"{x:.4f}" for x in v) + f"; median {statistics.median(v):.4f}")
a = statistics.median([r["summary"]["frame_gpu_ms"]["p50"] for r in rows if r["side"] == "A"])
b = statistics.median([r["summary"]["frame_gpu_ms"]["p50"] for r in rows if r["side"] == "B"])
print(f"B against A: {100*(b/a-1):+.2f}% GPU frame time")
PY
} > "$summary"
# gate NAME BASE NEW: one diff, its JSON kept, its verdict summarised.
gate() {
	local name=$1 base=$2 new=$3 j rc
	j=$($fs diff --json --driver "$driver" "$base" "$new")
	rc=$?
	echo "{\"case\":\"$name\",\"exit\":$rc,\"diff\":$(printf '%s' "$j" | tr -d '\n')}" >> "$out/perfgate-diffs.jsonl"
	printf '%-28s exit %d  %s\n' "$name" "$rc" "$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); z=[x for x in d["zones"] if x["zone"]=="frame" and x["kind"]=="gpu"]; f=z[0]["p50"] if z else {}; print(d["verdict"], "regressed:", d["regressions"], "inconclusive:", d["inconclusive"], "| gpu frame", "change %+.2f%%" % (100*(f.get("change") or 0)), "p_regressed", f.get("p_regressed"), z[0]["verdict"] if z else "")')" >> "$summary"
}
A=("$work"/A/run-*.perfetto-trace)
B=("$work"/B/run-*.perfetto-trace)
mkside a1 "${A[@]:0:5}"; mkside b1 "${B[@]:0:5}"; mkside a2 "${A[@]:5:5}"; mkside b2 "${B[@]:5:5}"
echo "--- A vs B, 5 runs a side (must be exit 1)" >> "$summary"
gate "A1-5 vs B1-5" "$work/a1" "$work/b1"
gate "A6-10 vs B6-10" "$work/a2" "$work/b2"
echo "--- A vs B, 10 runs a side" >> "$summary"
gate "A vs B (10)" "$work/A" "$work/B"
echo "--- identical splits, 5 vs 5 (none may be exit 1)" >> "$summary"
for side in A B; do
	if [ $side = A ]; then runsOf=("${A[@]}"); else runsOf=("${B[@]}"); fi
	for s in $(seq 1 20); do
		mapfile -t p < <(printf '%s\n' "${runsOf[@]}" | shuf --random-source=<(yes "$side$s"))
		mkside x "${p[@]:0:5}"; mkside y "${p[@]:5:5}"
		gate "$side split $s" "$work/x" "$work/y"
	done
done
$fs diff --markdown --driver "$driver" --html "$out/report.html" "$work/a1" "$work/b1" > "$out/report.md"
echo "--- exit codes: $(grep -c ' exit 1 ' "$summary") of exit 1 in all" >> "$summary"
cat "$summary"
