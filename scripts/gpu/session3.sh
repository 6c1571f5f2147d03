#!/usr/bin/env bash
# One GPU-machine call: per-write cost of back-to-back timestamps (no draws in
# between), one trace per stage choice (to check nesting), then
# clockcheck -seconds 300.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
out=${OUT:-/tmp/out}
mkdir -p "$out"
tri=".gpubin/triangle -quiet -json"
for rep in 1 2 3; do
  for mode in none raw zones; do
    extra=""
    [ "$mode" = raw ] && extra="-rawzones 256"
    [ "$mode" = zones ] && extra="-zones 256"
    echo "{\"rep\":$rep,\"stages\":\"top-bottom\",\"mode\":\"$mode\",\"run\":$($tri -out /tmp/t -frames 300 -warmup 30 -load 0 $extra | tr -d '\n')}" >> "$out/backtoback.jsonl"
  done
done
for st in top-bottom top-top bottom-bottom all-all; do
  $tri -out "/tmp/st-$st" -frames 60 -load 10 -zones 64 -stages "$st" > /dev/null
  cp "/tmp/st-$st/triangle.perfetto-trace" "$out/stages-$st.perfetto-trace"
done
timeout 400 .gpubin/framescope clockcheck -seconds 300 > "$out/clockcheck-300s.txt" 2>&1
tail -n 12 "$out/clockcheck-300s.txt"
