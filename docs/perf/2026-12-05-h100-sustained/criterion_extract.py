#!/usr/bin/env python3
"""Criterion's record of a bench-ours run, as one JSON list and a table.

    python3 criterion_extract.py CRITERION_DIR OUT.json

Each entry: criterion's group, function and size, the samples (`iters`, `times`: criterion's
iter_custom sums of device time, ns) and criterion's median and mean of the per-launch time
(ms). Used for call 6 of 2026-12-05, whose ours.json the ab step overwrote (see README.md).
"""
import glob
import json
import os
import sys

root, out = sys.argv[1], sys.argv[2]
rows = []
for f in sorted(glob.glob(os.path.join(root, "**", "new", "estimates.json"), recursive=True)):
    rel = os.path.relpath(f, root).split(os.sep)
    group, function, size = rel[0], rel[1], rel[2]
    est = json.load(open(f))
    sample = json.load(open(f.replace("estimates.json", "sample.json")))
    rows.append({
        "group": group, "function": function, "size_set": size,
        "median_ms": est["median"]["point_estimate"] / 1e6,
        "mean_ms": est["mean"]["point_estimate"] / 1e6,
        "launches": int(sum(sample["iters"])),
        "iters": sample["iters"], "times_ns": sample["times"],
    })
json.dump(rows, open(out, "w"), indent=1)
for r in rows:
    print(f"| {r['group']} | {r['function']} | {r['size_set']} | {r['median_ms']:.4f} | {r['launches']} |")
