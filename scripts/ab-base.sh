#!/usr/bin/env bash
# Puts the bench binary of another commit into a GPU bundle, for `bash .gpu/run.sh ab`: our
# kernels timed at REV and now, side by side in one device call (see xtask/gpu/run.sh).
#
#     cargo xtask gpu-bundle
#     bash scripts/ab-base.sh HEAD~1      # into .gpu/base/
#     # on the GPU machine, carrying target/gpu-bundle.tgz (scripts/pack-gpu.sh, run by both):
#     tar -xzf target/gpu-bundle.tgz && TILELANG_BENCH_ONLY=05 bash .gpu/run.sh ab
#
# REV is built for the NVIDIA archs of the bundle's objects (TILELANG_TARGETS, when set, must
# name the same: a base without the bundle's sm_90a objects runs the sm_90 path and times
# another schedule, as the first such A/B on 2026-12-05 did).
#
# REV is built in a worktree under target/ with its own target folder (target/ab-base), so
# the bundle's own build is left alone; device objects come from the shared content-hash
# cache (target/tilelang-cache) where REV's sources match ones compiled before. Needs what
# gpu-bundle needs (nvcc: the README's `eval "$(bash scripts/nvcc-env.sh)"`).
set -euo pipefail
rev="${1:?usage: bash scripts/ab-base.sh REV [BUNDLE]}"
root="$(git rev-parse --show-toplevel)"
bundle="$(cd "$root" && realpath -m "${2:-.gpu}")"
[ -x "$bundle/bin/bench-tutorials" ] || { echo "ab-base: no bundle in $bundle (run cargo xtask gpu-bundle first)" >&2; exit 1; }
sha="$(git -C "$root" rev-parse --verify "$rev^{commit}")"
archs="$(ls "$bundle/objects" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.bin$/\1/p' | sort -u | paste -sd, -)"
if [ -z "${TILELANG_TARGETS:-}" ]; then
  export TILELANG_TARGETS="$archs"
elif [ -n "$archs" ] && [ "$(tr ',' '\n' <<<"$TILELANG_TARGETS" | sort -u | paste -sd, -)" != "$archs" ]; then
  echo "ab-base: TILELANG_TARGETS=$TILELANG_TARGETS but the bundle's objects are for $archs: both sides must run the same archs' code (unset TILELANG_TARGETS to follow the bundle)" >&2
  exit 1
fi
echo "ab-base: targets $TILELANG_TARGETS" >&2
src="$root/target/ab-base-src"
git -C "$root" worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
git -C "$root" worktree prune
git -C "$root" worktree add --detach "$src" "$sha" >&2
trap 'git -C "$root" worktree remove --force "$src"' EXIT
echo "ab-base: building the benches at $sha" >&2
exe="$(cd "$src" && CARGO_TARGET_DIR="$root/target/ab-base" TILELANG_CACHE_DIR="$root/target/tilelang-cache" \
  cargo bench -p benches --bench tutorials --no-run --message-format=json \
  | python3 -c 'import json, sys
exe = [m["executable"] for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and m.get("executable")]
print(exe[-1] if exe else "")')"
[ -x "$exe" ] || { echo "ab-base: the build at $sha made no bench executable" >&2; exit 1; }
mkdir -p "$bundle/base"
cp "$exe" "$bundle/base/bench-tutorials"
strip "$bundle/base/bench-tutorials" 2>/dev/null || true
echo "$sha" > "$bundle/base/COMMIT"
echo "ab-base: $bundle/base/bench-tutorials is $sha" >&2
bash "$root/scripts/pack-gpu.sh" "$bundle"
