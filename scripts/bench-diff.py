#!/usr/bin/env python3
"""Compares two JSON records of our benches (`bin/bench-tutorials`, `ours.json`) row by row:
the same chapter, variant, size set, role (default / tuned / vendor) and config, `before` and
`after` medians in ms and their ratio (above 1: `after` is faster). Rows of one file only are
listed at the end. Use it for A/B runs of two bundles in one device call:

    python3 scripts/bench-diff.py base.json ours.json [--markdown] [--threshold 0.03]
"""
import argparse
import json


def load(path):
    rows = {}
    for r in json.load(open(path)):
        if r.get("record") == "header" or r.get("median_ms") is None:
            continue
        key = (r.get("chapter"), r.get("variant"), r.get("size_set"), r.get("config_role"), r.get("config"))
        rows[key] = r
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    ap.add_argument("--threshold", type=float, default=0.03, help="mark changes beyond this fraction")
    a = ap.parse_args()
    before, after = load(a.before), load(a.after)
    if a.markdown:
        print("| # | variant | size | role | config | before ms | after ms | before / after |")
        print("|---|---|---|---|---|---:|---:|---:|")
    for key, r in after.items():
        if key not in before:
            continue
        x, y = before[key]["median_ms"], r["median_ms"]
        mark = " ++" if y < x * (1 - a.threshold) else (" --" if y > x * (1 + a.threshold) else "")
        ch, var, size, role, cfg = (str(k) for k in key)
        if a.markdown:
            print(f"| {ch} | {var} | {size} | {role} | `{cfg}` | {x:.4f} | {y:.4f} | {x / y:.3f}{mark} |")
        else:
            print(f"{ch:>4} {var:<22} {size:<8} {role:<8} {cfg:<18} {x:9.4f} {y:9.4f} {x / y:7.3f}{mark}")
    for name, mine, other in (("before", before, after), ("after", after, before)):
        for key, r in mine.items():
            if key not in other:
                print(f"only {name}: {' '.join(str(k) for k in key)} {r['median_ms']:.4f}")


if __name__ == "__main__":
    main()
