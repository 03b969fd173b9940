#!/usr/bin/env bash
# Runs the GPU checks of a bundle made by `cargo xtask gpu-bundle`, on the GPU machine.
# Every kernel, variant and config is checked against float64 references at odd sizes (the
# kernels' test suite on the GPU), the tutorials run at their sizes, the GEMMs again without
# TMA (TILELANG_TMA=off) and on 2 persistent blocks (TILELANG_PERSISTENT_BLOCKS=2: every block
# walks several tiles), and the test suite runs again under compute-sanitizer memcheck and
# racecheck (synccheck for the GEMMs). Beside the checks, the token fuzzer runs 1,000,000
# mutants of a fresh seed range on the remaining cores. Logs go to $OUT (else <bundle>/out).
#
#   bash run.sh [all|check|sanitize]     (default all; the phases fit separate 10-minute calls)
#   bash run.sh bench|bench-ours|bench-peers|bench-compile|one-call
#   bash run.sh ab        (after `bash scripts/ab-base.sh REV` here: ours at REV and now)
#   bash run.sh difftest|difftest-sanitize   (generated kernels against the CPU semantics: DIFF_OFFSET, DIFF_N)
#
# `bench` runs our benchmarks (bin/bench-tutorials: every kernel, default and autotuned
# configs, cuBLAS, cuBLASLt, cuDNN, the copy ceiling, launch latency eager and as graph
# replays; $OUT/ours.json, criterion's data in $OUT/criterion, the tune cache in
# $OUT/tune.tsv) and the peers (peers/bench.py: PyTorch eager and Triton, $OUT/peers.json;
# torch.compile of the eager code, $OUT/peers-compile.json), makes the table and chart
# ($OUT/perf.md, $OUT/perf.svg, with bin/report = `cargo xtask report`) and prints a one-line
# summary. `bench-ours` / `bench-peers` / `bench-compile` run one part only (torch.compile's
# max-autotune compiles take minutes, so they are a part of their own; PEERS_ONLY passes
# `--only` to the peers, e.g. PEERS_ONLY=01,02,03 to split a part further); then, on the
# development machine:
#   cargo xtask report $OUT/ours.json $OUT/peers.json $OUT/peers-compile.json --out docs/perf/current/<gpu>
# TILELANG_BENCH_SIZES, _ONLY, _MS, _SUSTAIN_MS and _FLUSH_MB pass through (see benches/README.md).
# `one-call` is the above for a lender of short calls (the device tool: 10 minutes a call, a
# few files back): ours, the peers, torch.compile of the examples, then the checks, each given
# what is left of TILELANG_CALL_S (default 575 s) and each a run of its own phase into $OUT,
# with $OUT/results.tgz (everything in $OUT) rewritten after every part so a kill loses at most
# the part it hit; $OUT/one-call.txt says how each part ended and when.
# `ab` times our kernels in one call with the bench binary of another commit
# (base/bench-tutorials, from scripts/ab-base.sh) and with this bundle's, TILELANG_AB_ROUNDS
# rounds (default 2) in alternating order, into $OUT/ab/{base,ours}-<round>.json (a folder of
# its own: a bench-ours run's $OUT/ours.json stays), and prints them side by side
# (bench-diff.py: medians over the rounds, and the per-round ratios' range): an A/B of a
# lowering change on one machine in one session. Set TILELANG_BENCH_ONLY to the chapters it
# touches.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/out}"
mkdir -p "$out"
phase="${1:-all}"
if [ "$phase" = one-call ]; then
  t0=$SECONDS budget="${TILELANG_CALL_S:-575}" status=0
  summary="$out/one-call.txt"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | tee "$summary"
  for part in bench-ours:240 bench-peers:90 bench-compile:200 check:150; do
    name="${part%%:*}" cap="${part##*:}" left=$((budget - SECONDS + t0))
    [ "$left" -lt "$cap" ] && cap="$left"
    if [ "$cap" -lt 10 ]; then echo "$name: not run, no time left" | tee -a "$summary"; status=1; continue; fi
    only=()
    [ "$name" = bench-compile ] && only=(env "PEERS_ONLY=${PEERS_ONLY:-ex}")
    OUT="$out" timeout "$cap" ${only[@]+"${only[@]}"} bash "$0" "$name" > "$out/one-call-$name.log" 2>&1
    rc=$?
    echo "$name: exit $rc at $((SECONDS - t0)) s$([ $rc -eq 124 ] && echo " (killed after $cap s)")" | tee -a "$summary"
    [ $rc -eq 0 ] || status=1
    part_tgz="$(mktemp)"
    tar -czf "$part_tgz" --exclude=./results.tgz -C "$out" . && chmod 644 "$part_tgz" && mv "$part_tgz" "$out/results.tgz"
  done
  grep -h "^bench summary\|^overall" "$out"/gpu-bench-ours.log "$out"/gpu-bench-peers.log "$out"/gpu-bench-compile.log "$out"/gpu-check.log 2>/dev/null
  exit $status
fi
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
fuzz_pid=""
if { [ "$phase" = all ] || [ "$phase" = check ]; } && [ -x "$here/bin/fuzz" ]; then
  # The token fuzzer (issue 38): FUZZ_N (default 1,000,000) mutants of a seed range no run
  # has had (this second's: mutant i of FUZZ_OFFSET = seconds since 1970 x 10^6), on the
  # cores the GPU checks leave, under its memory cap; replay a failure with the FUZZ_SEED it
  # prints. Waited for at the end of the phase.
  fuzz_off=$(( $(date +%s) * 1000000 ))
  fuzz_threads=$(( $(nproc) > 6 ? $(nproc) - 4 : 2 ))
  echo "=== token fuzzer in the background: FUZZ_OFFSET=$fuzz_off FUZZ_N=${FUZZ_N:-1000000} FUZZ_THREADS=$fuzz_threads, log $out/gpu-fuzz.log" | tee -a "$log"
  ( FUZZ_OFFSET=$fuzz_off FUZZ_N="${FUZZ_N:-1000000}" FUZZ_THREADS=$fuzz_threads FUZZ_KERNELS_SRC="$here/kernels-src" \
      "$here/bin/fuzz" mutants_never_panic --nocapture > "$out/gpu-fuzz.log" 2>&1 ) &
  fuzz_pid=$!
fi
if [ "$phase" = all ] || [ "$phase" = check ]; then
  step "runtime tests on the GPU" "$here/bin/rt-cuda-tests" --ignored --test-threads=1
  step "tests on the GPU (every kernel and config, odd sizes)" "$here/bin/kernels-tests" --test-threads=1
  step "examples' tests on the GPU (every kernel and config, odd sizes)" "$here/bin/examples-tests" --test-threads=1
  step "tutorials at tutorial size, every config" "$here/bin/tutorials" --scale tutorial --all-configs
  # sm_90a objects run their TMA entry where the tensors allow it: the GEMMs once more with
  # the plain entries only, so both are checked whatever the sizes.
  step "GEMM tests with TILELANG_TMA=off (plain entries)" env TILELANG_TMA=off "$here/bin/kernels-tests" --test-threads=1 gemm
  step "examples' GEMM tests with TILELANG_TMA=off" env TILELANG_TMA=off "$here/bin/examples-tests" --test-threads=1 gemm
  # Persistent TMA entries on 2 blocks: each walks several tiles even at the tests' sizes.
  step "GEMM tests on 2 persistent blocks" env TILELANG_PERSISTENT_BLOCKS=2 "$here/bin/kernels-tests" --test-threads=1 gemm
  step "examples' GEMM tests on 2 persistent blocks" env TILELANG_PERSISTENT_BLOCKS=2 "$here/bin/examples-tests" --test-threads=1 gemm
fi
if [ "$phase" = all ] || [ "$phase" = sanitize ]; then
  step "compute-sanitizer memcheck" compute-sanitizer --tool memcheck --error-exitcode 1 "$here/bin/kernels-tests" --test-threads=1
  step "compute-sanitizer racecheck" compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 "$here/bin/kernels-tests" --test-threads=1
  step "compute-sanitizer memcheck (examples)" compute-sanitizer --tool memcheck --error-exitcode 1 "$here/bin/examples-tests" --test-threads=1
  step "compute-sanitizer racecheck (examples)" compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 "$here/bin/examples-tests" --test-threads=1
  # Barriers, mbarriers and wgmma's warpgroup-wide instructions in the GEMMs.
  step "compute-sanitizer synccheck (GEMMs)" compute-sanitizer --tool synccheck --error-exitcode 1 "$here/bin/kernels-tests" --test-threads=1 gemm
  step "compute-sanitizer synccheck (examples' GEMMs)" compute-sanitizer --tool synccheck --error-exitcode 1 "$here/bin/examples-tests" --test-threads=1 gemm
fi
# Generated kernels (issue 38, tilelang-difftest): DIFF_N kernels from DIFF_OFFSET, compiled
# here by nvcc for sm_90 and sm_90a (cubins in DIFF_DIR, outside $OUT; the next chunk compiles
# while this one runs, its SASS scanned for known ptxas miscompilations), every config run at
# four shapes against the IR evaluator in four processes, bit for bit; `difftest-sanitize` runs
# the sm_90a entries of DIFF_N kernels under memcheck and racecheck.
dt_dir="${DIFF_DIR:-/tmp/difftest}"
if [ "$phase" = difftest ]; then
  step "generated kernels from ${DIFF_OFFSET:-0}: the evaluator against sm_90 and sm_90a" \
    "$here/bin/difftest" gpu --dir "$dt_dir/check" --offset "${DIFF_OFFSET:-0}" --n "${DIFF_N:-5000}" --deadline "${DIFF_DEADLINE_S:-480}"
fi
if [ "$phase" = difftest-sanitize ]; then
  # DIFF_N kernels (default 1000) compiled for sm_90a, then run under each tool in DIFF_PROCS
  # processes (default 8) of a sub-range each (1,000 kernels: about 2 + 1.5 minutes on an H100).
  dt_off="${DIFF_OFFSET:-0}" dt_n="${DIFF_N:-1000}" dt_procs="${DIFF_PROCS:-8}"
  step "generated kernels: compile for sm_90a" "$here/bin/difftest" compile --archs sm_90a --dir "$dt_dir/san" --offset "$dt_off" --n "$dt_n"
  dt_step=$(( (dt_n + dt_procs - 1) / dt_procs ))
  sanitize_ranges() {
    local tool="$1"; shift
    local pids=() o n rc=0
    for ((o = dt_off; o < dt_off + dt_n; o += dt_step)); do
      n=$(( dt_off + dt_n - o < dt_step ? dt_off + dt_n - o : dt_step ))
      compute-sanitizer --tool "$tool" "$@" --error-exitcode 1 "$here/bin/difftest" run --dir "$dt_dir/san" --offset "$o" --n "$n" > "$out/san-$tool-$o.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    cat "$out"/san-"$tool"-*.log && rm -f "$out"/san-"$tool"-*.log
    return $rc
  }
  step "generated kernels: compute-sanitizer memcheck ($dt_procs processes)" sanitize_ranges memcheck
  step "generated kernels: compute-sanitizer racecheck ($dt_procs processes)" sanitize_ranges racecheck --racecheck-report hazard
fi
case "$phase" in
  bench|bench-ours|bench-peers|bench-compile|ab)
    # The vendor libraries come from the image's Python packages (pip `nvidia-*` wheels, which
    # PyTorch's CUDA 13 wheels bring): find libcublas, libcublasLt and libcudnn (cuDNN 9, whose
    # libcudnn_*.so.9 sub-libraries sit beside it) under the `nvidia` namespace package, whatever
    # its layout (nvidia/cublas/lib for CUDA 12 wheels, nvidia/cu13/lib for CUDA 13 ones,
    # nvidia/cudnn/lib for nvidia-cudnn-cu13), and put each distinct directory on LD_LIBRARY_PATH.
    lib_dirs="$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
for name in ("libcublas.so", "libcublasLt.so", "libcudnn.so"):
    hit = ""
    for r in roots:
        hits = sorted(glob.glob(os.path.join(r, "**", name + "*"), recursive=True))
        if hits:
            hit = os.path.dirname(hits[0])
            break
    print(name + "\t" + hit)
PY
)"
    added=""
    for lib in libcublas.so libcublasLt.so libcudnn.so; do
      dir="$(printf '%s\n' "$lib_dirs" | awk -F '\t' -v l="$lib" '$1 == l { print $2 }')"
      if [ -n "$dir" ]; then
        echo "$lib: $dir" | tee -a "$log"
        case ":$added:" in
          *":$dir:"*) ;;
          *) added="${added:+$added:}$dir" ;;
        esac
      else
        echo "$lib: not found in the Python packages (pip nvidia-cublas / nvidia-cudnn-cu13); no baselines from it" | tee -a "$log"
      fi
    done
    if [ -n "$added" ]; then
      export LD_LIBRARY_PATH="$added${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "LD_LIBRARY_PATH += $added" | tee -a "$log"
    fi
    export TILELANG_COMMIT="$(cat "$here/COMMIT" 2>/dev/null)"
    export TILELANG_GPU_DRIVER="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
    ;;
esac
if [ "$phase" = bench ] || [ "$phase" = bench-ours ]; then
  export TILELANG_BENCH_JSON="$out/ours.json" TILELANG_TUNE_CACHE="$out/tune.tsv" CRITERION_HOME="$out/criterion"
  step "benches: ours (default + tuned), cuBLAS, copy ceiling, launch latency" "$here/bin/bench-tutorials" --bench
fi
if [ "$phase" = ab ]; then
  if [ ! -x "$here/base/bench-tutorials" ]; then
    echo "ab: no base/bench-tutorials in the bundle (run scripts/ab-base.sh REV before carrying it)" | tee -a "$log"
    status=1
  else
    echo "ab: base $(cat "$here/base/COMMIT" 2>/dev/null), now $(cat "$here/COMMIT" 2>/dev/null)" | tee -a "$log"
    mkdir -p "$out/ab"  # its own folder: a bench-ours run's ours.json in $out stays
    # Rounds in alternating order (base-ours, ours-base, …): a clock that drifts over the call
    # then favours neither side, as running base first every time once did (a false 0.96×).
    rounds="${TILELANG_AB_ROUNDS:-2}"
    for ((i = 1; i <= rounds; i++)); do
      order="base ours"
      [ $((i % 2)) -eq 0 ] && order="ours base"
      for side in $order; do
        exe="$here/bin/bench-tutorials"
        [ "$side" = base ] && exe="$here/base/bench-tutorials"
        TILELANG_BENCH_JSON="$out/ab/$side-$i.json" TILELANG_TUNE_CACHE="$out/ab/tune-$side.tsv" CRITERION_HOME="$out/criterion-ab" \
          step "benches ($side, round $i of $rounds)" "$exe" --bench
      done
    done
    rm -rf "$out/criterion-ab"
    runs() { for ((i = 1; i <= rounds; i++)); do [ -f "$out/ab/$1-$i.json" ] && printf '%s,' "$out/ab/$1-$i.json"; done; }
    python3 "$here/bench-diff.py" "$(runs base)" "$(runs ours)" | tee -a "$log" | sed 's/^/ab| /'
  fi
fi
peers_only=()
[ -n "${PEERS_ONLY:-}" ] && peers_only=(--only "$PEERS_ONLY")
for part in peers compile; do
  [ "$phase" = bench ] || [ "$phase" = "bench-$part" ] || continue
  if [ ! -f "$here/peers/bench.py" ]; then
    echo "peers: no peers/bench.py in the bundle" | tee -a "$log"
    status=1
    continue
  fi
  if [ "$part" = peers ]; then
    step "peers: PyTorch eager and Triton" python3 "$here/peers/bench.py" --impls pytorch,triton ${peers_only[@]+"${peers_only[@]}"} --out "$out/peers.json"
  else
    step "peers: torch.compile (max-autotune-no-cudagraphs)" python3 "$here/peers/bench.py" --impls torch_compile ${peers_only[@]+"${peers_only[@]}"} --out "$out/peers-compile.json"
  fi
done
if [ "$phase" = bench ] && [ -x "$here/bin/report" ] && [ -f "$out/ours.json" ]; then
  peers_json=()
  for f in "$out/peers.json" "$out/peers-compile.json"; do [ -f "$f" ] && peers_json+=("$f"); done
  [ ${#peers_json[@]} -gt 0 ] || peers_json=(none)
  # The table and chart (perf.md, perf.svg) beside the JSON; the table also goes to the log.
  step "report: perf.md and perf.svg" "$here/bin/report" report "$out/ours.json" "${peers_json[@]}" --out "$out"
fi
if [[ "$phase" == bench* ]]; then
  count() { if [ -f "$1" ]; then grep -Eo "$2" "$1" | wc -l; else echo 0; fi; }
  echo "bench summary: ours $(count "$out/ours.json" '"record": ?"result"') records, $(count "$out/ours.json" '"passed": ?false') failed; peers $(count "$out/peers.json" '"record": ?"(kernel|launch)"') records, $(count "$out/peers.json" '"passed": ?false') failed; torch.compile $(count "$out/peers-compile.json" '"record": ?"(kernel|launch)"') records, $(count "$out/peers-compile.json" '"passed": ?false') failed; JSON in $out" | tee -a "$log"
fi
if [ -d "$here/objects" ] && { [ "$phase" = all ] || [ "$phase" = check ]; }; then
  for f in "$here"/objects/tl_gemm_{tiled,fragment,w4a16}__*.bin; do
    n=$(cuobjdump --dump-sass "$f" 2>/dev/null | grep -c -E 'HMMA|HGMMA')
    echo "sass $(basename "$f"): $n HMMA/HGMMA instructions" | tee -a "$log"
    [ "$n" -gt 0 ] || status=1
  done
fi
if [ -n "$fuzz_pid" ]; then
  t_fuzz=$SECONDS
  wait "$fuzz_pid"
  rc=$?
  grep -h "^fuzz:" "$out/gpu-fuzz.log" | tee -a "$log"
  echo "=== token fuzzer: exit $rc (waited $((SECONDS - t_fuzz)) s after the checks)" | tee -a "$log"
  [ $rc -eq 0 ] || status=1
fi
grep -E "^(test result|[0-9]+ passed|FAIL|ERROR|=== |\| |bench summary|note: )" "$log" | tail -120
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)" | tee -a "$log"
exit $status
