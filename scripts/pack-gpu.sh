#!/usr/bin/env bash
# Packs a GPU bundle (`cargo xtask gpu-bundle`, plus `scripts/ab-base.sh`'s base/) into one
# gzip archive, target/gpu-bundle.tgz: the bundle's binaries embed every object of every target
# (92 MiB with sm_90 and sm_90a), and cubins compress about 3.5×, so the archive travels where
# the folder would exceed a transfer cap (the device tool here: 64 MiB). On the GPU machine:
#
#     tar -xzf target/gpu-bundle.tgz && bash .gpu/run.sh check
set -euo pipefail
root="$(git rev-parse --show-toplevel)"
bundle="$(cd "$root" && realpath -m "${1:-.gpu}")"
[ -f "$bundle/run.sh" ] || { echo "pack-gpu: no bundle in $bundle (run cargo xtask gpu-bundle first)" >&2; exit 1; }
out="$root/target/gpu-bundle.tgz"
mkdir -p "$root/target"
tar -czf "$out.tmp" -C "$(dirname "$bundle")" "$(basename "$bundle")"
mv "$out.tmp" "$out"
echo "pack-gpu: $out is $(du -m "$out" | cut -f1) MiB ($(du -sm "$bundle" | cut -f1) MiB unpacked); carry target/gpu-bundle.tgz and run there: tar -xzf target/gpu-bundle.tgz && bash $(basename "$bundle")/run.sh" >&2
