#!/usr/bin/env bash
# What a timestamp costs the device (issue 35): the demo's command buffer
# timed whole (-cmdgpu) with no draws (-load 0), with nothing extra, with
# N raw vkCmdWriteTimestamp pairs (-rawzones N) and with N zones (-zones N),
# three interleaved rounds. A pair's device cost is the growth of the
# command buffer's median GPU time over N. Runs on the GPU machine (after
# scripts/gpu/setup.sh) or on lavapipe with nothing set up; binaries from
# .gpubin (go build -o .gpubin/ ./internal/cmd/overhead).
set -u
out=${OUT:-/tmp/out}
n=${N:-64}
mkdir -p "$out"
: > "$out/tscost.jsonl"
for rep in 1 2 3; do
  for mode in none raw zones; do
    extra=""
    [ "$mode" = raw ] && extra="-rawzones $n"
    [ "$mode" = zones ] && extra="-zones $n"
    line=$(.gpubin/overhead -quiet -json -cmdgpu -out /tmp/tscost -frames 200 -warmup 20 -load 0 $extra | tr -d '\n')
    echo "{\"rep\":$rep,\"mode\":\"$mode\",\"n\":$n,\"run\":$line}" >> "$out/tscost.jsonl"
  done
done
python3 - "$out/tscost.jsonl" <<'PY' | tee "$out/tscost.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
dev = rows[0]["run"].get("device", "?")
print(f"device: {dev}")
for rep in (1, 2, 3):
    r = {x["mode"]: x for x in rows if x["rep"] == rep}
    p = {m: r[m]["run"]["cmd_gpu_ms"]["p50"] for m in r}
    n = r["raw"]["n"]
    print(f"round {rep}: command buffer p50 none {p['none']:.4f} ms, {n} raw pairs {p['raw']:.4f} ms, {n} zones {p['zones']:.4f} ms;"
          f" a raw pair {1e6*(p['raw']-p['none'])/n:.0f} ns, a zone {1e6*(p['zones']-p['none'])/n:.0f} ns of device time")
PY
