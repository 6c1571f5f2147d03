"""Summarises overhead.jsonl (from overhead.sh) into the tables docs/ keeps.

The measure is the p50 over a run's frames of the command buffer's GPU time
(cmd_gpu_ms: raw timestamps around everything recorded, the profiler's
readback included); the table gives the median of the repetitions.
"""
import json
import statistics
import sys

STAGES = ["top-bottom", "top-top", "bottom-bottom", "all-all"]
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
dev = runs[0]["run"].get("device", "?")
for case in ["loaded", "backtoback"]:
    rs = [r for r in runs if r["case"] == case]
    if not rs:
        continue
    by = {}
    for r in rs:
        by.setdefault((r["stages"], r["mode"]), []).append(r["run"]["cmd_gpu_ms"]["p50"])
    first = rs[0]["run"]
    reps = len({r["rep"] for r in rs})
    print(f"device: {dev}; {case}: -load {first['load']} -iterations {first['iterations']}; "
          f"command buffer GPU time, p50 over {first['cmd_gpu_ms']['n']} frames, median of {reps} runs")
    print(f"{'stages':14} {'(a) none':>10} {'(b) raw':>10} {'(c) zones':>10} "
          f"{'(b)-(a)':>9} {'(c)-(a)':>9} {'per raw write':>13} {'per zone write':>14} {'(c)-(b)':>9} {'% of (a)':>9}")
    for st in STAGES:
        if (st, "none") not in by:
            continue
        a = statistics.median(by[(st, "none")])
        b = statistics.median(by[(st, "raw")])
        c = statistics.median(by[(st, "zones")])
        print(f"{st:14} {a:8.4f}ms {b:8.4f}ms {c:8.4f}ms {(b-a)*1e3:7.2f}us {(c-a)*1e3:7.2f}us "
              f"{(b-a)/512*1e6:11.1f}ns {(c-a)/512*1e6:12.1f}ns {(c-b)*1e3:7.2f}us {(c-b)/a*100:8.3f}%")
    print("all runs, p50 ms (a | b | c):")
    for st in STAGES:
        if (st, "none") in by:
            print(f"  {st:14}", " | ".join(" ".join(f"{v:.4f}" for v in by[(st, m)]) for m in ["none", "raw", "zones"]))
    print()
