#!/usr/bin/env bash
# One GPU-machine call: the clock measurements of issue 3. clockcheck for
# CLOCK_SECONDS (300) on the first queue family, 30 s on each family with
# fewer than 64 valid timestamp bits, 60 s of the submit-and-wait fallback
# and 60 s against CLOCK_MONOTONIC_RAW. Run from the repository root with
# .gl and .gpubin carried (scripts/gpu/build.sh).
set -u
. scripts/gpu/setup.sh
secs=${CLOCK_SECONDS:-300}
.gpubin/framescope devices -json > "$out/devices.json" 2>&1
timeout $((secs + 60)) .gpubin/framescope clockcheck -seconds "$secs" > "$out/clockcheck.txt" 2>&1
echo "clockcheck rc=$?" >> "$out/summary.txt"
for fam in $(python3 -c 'import json,sys
for d in json.load(open(sys.argv[1]))[:1]:
    for f in d["Families"]:
        if 0 < f["TimestampValidBits"] < 64: print(f["Index"])' "$out/devices.json" 2>/dev/null); do
	timeout 100 .gpubin/framescope clockcheck -seconds 30 -queue "$fam" > "$out/clockcheck-family$fam.txt" 2>&1
	echo "family $fam rc=$?" >> "$out/summary.txt"
done
timeout 100 .gpubin/framescope clockcheck -seconds 60 -fallback > "$out/clockcheck-fallback.txt" 2>&1
echo "fallback rc=$?" >> "$out/summary.txt"
timeout 100 .gpubin/framescope clockcheck -seconds 60 -clock raw > "$out/clockcheck-raw.txt" 2>&1
echo "raw rc=$?" >> "$out/summary.txt"
cat "$out/summary.txt"
tail -n 12 "$out"/clockcheck*.txt
