"""Summarises overhead.jsonl (from overhead.sh) into the table docs/ keeps."""
import json
import statistics
import sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in runs:
    by.setdefault((r["stages"], r["mode"]), []).append(r["run"]["frame_gpu_ms"]["p50"])
dev = runs[0]["run"].get("device", "?")
print(f"device: {dev}; frame GPU time p50 in ms, median of {len({r['rep'] for r in runs})} runs of 270 frames")
print(f"{'stages':14} {'(a) none':>9} {'(b) raw':>9} {'(c) zones':>9} {'raw/pair':>9} {'zone/each':>9} {'(c)-(b)':>9} {'% of (a)':>9}")
for st in ["top-bottom", "top-top", "bottom-bottom", "all-all"]:
    a = statistics.median(by[(st, "none")])
    b = statistics.median(by[(st, "raw")])
    c = statistics.median(by[(st, "zones")])
    print(f"{st:14} {a:9.4f} {b:9.4f} {c:9.4f} {(b-a)/256*1e3:8.3f}us {(c-a)/256*1e3:8.3f}us "
          f"{(c-b)*1e3:7.2f}us {(c-b)/a*100:8.3f}%")
print("all runs (a, b, c per stage choice):")
for st in ["top-bottom", "top-top", "bottom-bottom", "all-all"]:
    print(f"  {st:14}", " | ".join(" ".join(f"{v:.4f}" for v in by[(st, m)]) for m in ["none", "raw", "zones"]))
