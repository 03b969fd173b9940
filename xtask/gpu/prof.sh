#!/usr/bin/env bash
# Profiles kernels of a bundle's benchmarks with Nsight Compute, on the GPU machine:
#
#   bash prof.sh CHAPTERS KERNEL_REGEX [NAME]
#
# runs bin/bench-tutorials at the large sizes for CHAPTERS (TILELANG_BENCH_ONLY, e.g. `ex` or
# `06`) under ncu and profiles launches of the kernels whose names match KERNEL_REGEX (e.g.
# `tl_transpose__t32x32`): SKIP (default 2: the check's launches) are skipped, COUNT (default 1)
# profiled, with SECTIONS (default: the `detailed` set) and clocks left as they are
# (`--clock-control none`, so counters match the benchmark's clocks). The report goes to
# $OUT/prof-NAME.txt (NAME defaults to the regex).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
[ $# -ge 2 ] || { echo "usage: bash prof.sh CHAPTERS KERNEL_REGEX [NAME]" >&2; exit 2; }
chapters="$1" regex="$2" name="${3:-$2}"
command -v ncu >/dev/null || { echo "prof.sh: ncu is not on PATH" >&2; exit 1; }
TILELANG_BENCH_ONLY="$chapters" TILELANG_BENCH_SIZES="${TILELANG_BENCH_SIZES:-large}" \
TILELANG_BENCH_MS="${TILELANG_BENCH_MS:-20}" TILELANG_TUNE_CACHE="$out/prof-tune.tsv" \
CRITERION_HOME="$out/prof-criterion" \
  ncu --clock-control none --set "${SECTIONS:-detailed}" -k "regex:$regex" \
    -s "${SKIP:-2}" -c "${COUNT:-1}" "$here/bin/bench-tutorials" --bench \
  >"$out/prof-$name.txt" 2>&1
rc=$?
rm -rf "$out/prof-criterion" "$out/prof-tune.tsv"
grep -E "^\s+(Duration|DRAM Throughput|Memory Throughput|Executed Ipc|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Executed Instructions |L1/TEX Hit|L2 Hit|Shared.*Bank|One or More Eligible)" "$out/prof-$name.txt" | head -40
echo "prof.sh: ncu exit $rc; report in $out/prof-$name.txt"
exit $rc
