#!/usr/bin/env bash
# What profiling costs the GPU (issue 7); runs on the GPU machine, or on
# lavapipe with nothing set up (VK_DRIVER_FILES left as it is).
#
# Every run times each command buffer whole with -cmdgpu: a raw timestamp
# pair around everything it records, the profiler's own readback copy
# included, so that the library's work outside its zones is counted too.
# For each begin/end stage choice, three interleaved repetitions of:
#   (a) no extra zones, (b) -rawzones 256 (256 raw vkCmdWriteTimestamp
#   pairs without the library: the floor), (c) -zones 256,
# first at a load that gives frames of about TARGET_MS (default 2.0) ms,
# then back to back with no draws (-load 0), where a timestamp's own cost
# shows. Binaries come prebuilt in .gpubin; results go to $OUT.
set -u
out=${OUT:-/tmp/out}
mkdir -p "$out"
tri=".gpubin/overhead -quiet -json -cmdgpu -out /tmp/tri"
target_ms=${TARGET_MS:-2.0}
load=${LOAD:-10}
# Scale the fragment loop so that a frame with no extra zones takes about
# target_ms: the probe runs at 256 iterations.
probe=$($tri -frames 120 -warmup 20 -load "$load" -iterations 256 | tr -d '\n')
iters=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(max(1, round(256*float(sys.argv[2])/d["cmd_gpu_ms"]["p50"])))' "$probe" "$target_ms")
check=$($tri -frames 120 -warmup 20 -load "$load" -iterations "$iters" | tr -d '\n')
printf 'target %s ms: -load %s -iterations %s\nprobe at 256 iterations: %s\ncheck: %s\n' \
  "$target_ms" "$load" "$iters" "$probe" "$check" > "$out/overhead-setup.txt"
: > "$out/overhead.jsonl"
for case in loaded backtoback; do
  if [ "$case" = loaded ]; then args="-load $load -iterations $iters"; else args="-load 0"; fi
  for rep in 1 2 3; do
    for st in top-bottom top-top bottom-bottom all-all; do
      for mode in none raw zones; do
        extra=""
        [ "$mode" = raw ] && extra="-rawzones 256"
        [ "$mode" = zones ] && extra="-zones 256"
        line=$($tri -frames 300 -warmup 30 $args -stages "$st" $extra | tr -d '\n')
        echo "{\"case\":\"$case\",\"rep\":$rep,\"stages\":\"$st\",\"mode\":\"$mode\",\"run\":$line}" >> "$out/overhead.jsonl"
      done
    done
  done
done
python3 scripts/gpu/overhead_table.py "$out/overhead.jsonl" | tee "$out/overhead-table.txt"
