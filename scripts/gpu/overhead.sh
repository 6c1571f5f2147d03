#!/usr/bin/env bash
# Runs on the GPU machine: what profiling costs the GPU (issue 7). At a
# -load that gives frames of about 2 ms, for each begin/end stage choice:
# (a) no extra zones, (b) 256 raw vkCmdWriteTimestamp pairs without the
# library, (c) 256 Framescope zones; three interleaved repetitions.
# Binaries come prebuilt in .gpubin, the Vulkan loader as .gl/*.deb.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
out=${OUT:-/tmp/out}
mkdir -p "$out"
tri=".gpubin/triangle -quiet -json -out /tmp/tri"
target_ms=${TARGET_MS:-2.0}
probe=$($tri -frames 120 -warmup 20 -load 200)
load=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(max(10, round(200*float(sys.argv[2])/d["frame_gpu_ms"]["p50"])))' "$probe" "$target_ms")
echo "load $load for ${target_ms} ms frames (probe: $probe)" > "$out/overhead-setup.txt"
: > "$out/overhead.jsonl"
for rep in 1 2 3; do
  for st in top-bottom top-top bottom-bottom all-all; do
    for mode in none raw zones; do
      extra=""
      [ "$mode" = raw ] && extra="-rawzones 256"
      [ "$mode" = zones ] && extra="-zones 256"
      line=$($tri -frames 300 -warmup 30 -load "$load" -stages "$st" $extra | tr -d "\n")
      echo "{\"rep\":$rep,\"stages\":\"$st\",\"mode\":\"$mode\",\"run\":$line}" >> "$out/overhead.jsonl"
    done
  done
done
$tri -frames 300 -load "$load" -zones 256 -out "$out/trace" > "$out/overhead-trace-summary.json" 2>&1
rm -f "$out/trace/triangle.json" "$out/trace/triangle.pb.gz"
python3 scripts/gpu/overhead_table.py "$out/overhead.jsonl" | tee "$out/overhead-table.txt"
