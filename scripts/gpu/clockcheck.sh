#!/usr/bin/env bash
# Runs on the GPU machine (see docs/clockcheck-h100.md): the clock measurements
# of issue 3 and the Vulkan tests on a real GPU. Binaries come prebuilt in
# .gpubin (go build -o .gpubin/ ./cmd/framescope; go test -c for the test
# binaries); the Vulkan loader comes as .gl/*.deb. Results go to $OUT.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
out=${OUT:-/tmp/out}
mkdir -p "$out"
secs=${CLOCK_SECONDS:-300}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv
  uname -r
} > "$out/machine.txt" 2>&1
.gpubin/framescope devices > "$out/devices.txt" 2>&1
.gpubin/framescope devices -json > "$out/devices.json" 2>&1
timeout $((secs + 60)) .gpubin/framescope clockcheck -seconds "$secs" > "$out/clockcheck.txt" 2>&1
echo "clockcheck rc=$?" >> "$out/summary.txt"
for t in vk querypool profiler; do
  timeout 120 .gpubin/$t.test -test.count=1 -test.v > "$out/test-$t.txt" 2>&1
  echo "$t tests: rc=$?" >> "$out/summary.txt"
done
timeout 120 .gpubin/profiler.test -test.run '^$' -test.bench 'ZoneVsRaw|Collect' -test.benchtime 1s -test.count 3 \
  > "$out/bench-profiler.txt" 2>&1
# The families with fewer than 64 valid bits (one wraps every 4.3 s on an H200).
for fam in $(python3 -c 'import json,sys
for d in json.load(open(sys.argv[1]))[:1]:
    for f in d["Families"]:
        if 0 < f["TimestampValidBits"] < 64: print(f["Index"])' "$out/devices.json" 2>/dev/null); do
  timeout 100 .gpubin/framescope clockcheck -seconds 30 -queue "$fam" > "$out/clockcheck-family$fam.txt" 2>&1
done
timeout 100 .gpubin/framescope clockcheck -seconds 60 -fallback > "$out/clockcheck-fallback.txt" 2>&1
cat "$out/summary.txt"; tail -14 "$out/clockcheck.txt"
