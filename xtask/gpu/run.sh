#!/usr/bin/env bash
# Runs the GPU checks of a bundle made by `cargo xtask gpu-bundle`, on the GPU machine.
# Every kernel, variant and config is checked against float64 references at odd sizes (the
# kernels' test suite on the GPU), the tutorials run at their sizes, and the test suite runs
# again under compute-sanitizer memcheck and racecheck. Logs go to $OUT (else <bundle>/out).
#
#   bash run.sh [all|check|sanitize]     (default all; the phases fit separate 10-minute calls)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
phase="${1:-all}"
log="$out/gpu-$phase.log"
status=0
step() {
  local name="$1"; shift
  echo "=== $name: $*" | tee -a "$log"
  local t0=$SECONDS
  "$@" >>"$log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$log"
  [ $rc -eq 0 ] || status=1
}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$here/COMMIT" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version 2>/dev/null | tail -1
} | tee "$log"

export TILELANG_TEST_DEVICE=gpu
if [ "$phase" = all ] || [ "$phase" = check ]; then
  step "runtime tests on the GPU" "$here/bin/rt-cuda-tests" --ignored --test-threads=1
  step "tests on the GPU (every kernel and config, odd sizes)" "$here/bin/kernels-tests" --test-threads=1
  step "tutorials at tutorial size, every config" "$here/bin/tutorials" --scale tutorial --all-configs
fi
if [ "$phase" = all ] || [ "$phase" = sanitize ]; then
  step "compute-sanitizer memcheck" compute-sanitizer --tool memcheck --error-exitcode 1 "$here/bin/kernels-tests" --test-threads=1
  step "compute-sanitizer racecheck" compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 "$here/bin/kernels-tests" --test-threads=1
fi
if [ -d "$here/objects" ] && [ "$phase" != sanitize ]; then
  for f in "$here"/objects/tl_gemm_{tiled,fragment,w4a16}__*.bin; do
    n=$(cuobjdump --dump-sass "$f" 2>/dev/null | grep -c -E 'HMMA|HGMMA')
    echo "sass $(basename "$f"): $n HMMA/HGMMA instructions" | tee -a "$log"
    [ "$n" -gt 0 ] || status=1
  done
fi
grep -E "^(test result|[0-9]+ passed|FAIL|ERROR|=== |\| )" "$log" | tail -120
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)" | tee -a "$log"
exit $status
