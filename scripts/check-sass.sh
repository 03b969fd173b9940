#!/usr/bin/env bash
# Checks that the compiled GEMM objects use the tensor cores: their SASS must contain HMMA (or
# HGMMA) instructions. Needs CUOBJDUMP (scripts/nvcc-env.sh sets it) and a build with
# TILELANG_TARGETS=sm_90.
set -euo pipefail
cd "$(dirname "$0")/.."
cuobjdump="${CUOBJDUMP:-cuobjdump}"
shopt -s nullglob
objects=(target/*/build/kernels-*/out/tilelang/tl_gemm_{tiled,fragment,w4a16}__*.sm_90.bin)
[ ${#objects[@]} -gt 0 ] || { echo "check-sass: no sm_90 GEMM objects found (build with TILELANG_TARGETS=sm_90)"; exit 1; }
fail=0
for f in "${objects[@]}"; do
  n=$("$cuobjdump" --dump-sass "$f" | grep -c -E '\bH(G)?MMA\b' || true)
  echo "$(basename "$f"): $n HMMA/HGMMA"
  [ "$n" -gt 0 ] || fail=1
done
exit $fail
