#!/usr/bin/env bash
# One GPU-machine call: Vulkan tests on the real GPU, clockcheck on a 64-bit
# and the 32-bit queue family, then the overhead matrix (overhead.sh).
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
out=${OUT:-/tmp/out}
mkdir -p "$out"
for t in vk querypool profiler; do
  echo "== $t" >> "$out/tests.txt"
  timeout 120 .gpubin/$t.test -test.count=1 -test.v 2>&1 | grep -v "^=== RUN" >> "$out/tests.txt"
done
grep -E "^(--- FAIL|FAIL|ok|PASS)" "$out/tests.txt"
timeout 200 .gpubin/framescope clockcheck -seconds ${CLOCK_SECONDS:-120} > "$out/clock-family0.txt" 2>&1
timeout 100 .gpubin/framescope clockcheck -seconds 60 -queue 3 > "$out/clock-family3.txt" 2>&1
tail -3 "$out"/clock-family*.txt
bash scripts/gpu/overhead.sh
