#!/usr/bin/env bash
# For each begin/end stage choice the demo offers: whether zones still nest
# (extra GPU lanes: 0 means every zone recorded nested came out nested) and
# whether a zone still contains its work (the "draw" zone, one triangle,
# and the "load" zone around the load draws), p50 over the frames.
# Usage: scripts/stages.sh [overhead flags...]; binaries in .gpubin
# (go build -o .gpubin/ ./cmd/framescope ./internal/cmd/overhead).
# Runs on lavapipe here, or on the GPU machine after its set-up.
set -eu
bin=${BIN:-.gpubin}
args=${*:--frames 40 -load 3 -iterations 64 -zones 16}
printf '%-14s %12s %12s %12s %s\n' stages 'draw p50' 'load p50' 'frame p50' 'extra GPU lanes'
for st in top-bottom top-top bottom-bottom all-all; do
	dir=$(mktemp -d)
	lanes=$("$bin/overhead" -quiet -json -out "$dir" -stages "$st" $args |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["gpu_extra_lanes"])')
	"$bin/framescope" stats --json "$dir/triangle.perfetto-trace" | python3 -c '
import json, sys
st, lanes = sys.argv[1], sys.argv[2]
z = {r["zone"]: r["p50_ns"] for r in json.load(sys.stdin)["zones"] if r["kind"] == "gpu"}
us = lambda k: "%10.1fus" % (z.get(k, 0) / 1e3)
print("%-14s %12s %12s %12s %s" % (st, us("draw"), us("load"), us("frame"), lanes))' "$st" "$lanes"
	rm -rf "$dir"
done
echo "overhead $args"
