#!/usr/bin/env python3
"""Compares two JSON records of our benches (`bin/bench-tutorials`, `ours.json`) row by row:
the same chapter, variant, size set, role (default / tuned / vendor) and config, `before` and
`after` medians in ms and their ratio (above 1: `after` is faster). Rows of one file only are
listed at the end. Use it for A/B runs of two bundles in one device call:

    python3 scripts/bench-diff.py base.json ours.json [--markdown] [--threshold 0.03]

Either side may be several runs, comma-separated (`base-1.json,base-2.json`: `run.sh ab` times
the two sides in alternating order, base-ours then ours-base, so that a drift of the card's clock
over the call does not favour the side that ran first). A row's time is then the median over the
runs, and the last column gives the range of the per-run ratios (run i of each side), so the
noise is there to read beside the change.
"""
import argparse
import json
import statistics


def load(paths):
    """Per row key, its median in each run (None where a run lacks the row)."""
    runs = [p for p in paths.split(",") if p]
    rows = {}
    for i, path in enumerate(runs):
        for r in json.load(open(path)):
            if r.get("record") == "header" or r.get("median_ms") is None:
                continue
            key = (r.get("chapter"), r.get("variant"), r.get("size_set"), r.get("config_role"), r.get("config"))
            rows.setdefault(key, [None] * len(runs))[i] = r["median_ms"]
    return rows


def summary(times):
    return statistics.median(t for t in times if t is not None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", help="a JSON file, or several comma-separated")
    ap.add_argument("after", help="a JSON file, or several comma-separated")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    ap.add_argument("--threshold", type=float, default=0.03, help="mark changes beyond this fraction")
    a = ap.parse_args()
    before, after = load(a.before), load(a.after)
    if a.markdown:
        print("| # | variant | size | role | config | before ms | after ms | before / after | per-run range |")
        print("|---|---|---|---|---|---:|---:|---:|---|")
    for key, ys in after.items():
        if key not in before:
            continue
        xs = before[key]
        x, y = summary(xs), summary(ys)
        ratios = [p / q for p, q in zip(xs, ys) if p is not None and q is not None]
        spread = f"{min(ratios):.3f}-{max(ratios):.3f}" if len(ratios) > 1 else ""
        mark = " ++" if y < x * (1 - a.threshold) else (" --" if y > x * (1 + a.threshold) else "")
        ch, var, size, role, cfg = (str(k) for k in key)
        if a.markdown:
            print(f"| {ch} | {var} | {size} | {role} | `{cfg}` | {x:.4f} | {y:.4f} | {x / y:.3f}{mark} | {spread} |")
        else:
            print(f"{ch:>4} {var:<22} {size:<8} {role:<8} {cfg:<18} {x:9.4f} {y:9.4f} {x / y:7.3f}{mark} {spread}".rstrip())
    for name, mine, other in (("before", before, after), ("after", after, before)):
        for key, ts in mine.items():
            if key not in other:
                print(f"only {name}: {' '.join(str(k) for k in key)} {summary(ts):.4f}")


if __name__ == "__main__":
    main()
