#!/usr/bin/env bash
# Dumps the generated device sources of every kernel and config of the tutorials
# (kernels/src) and the examples (examples/src) for every target the library compiles for
# (tilelang-emit: each source, and a hash of each occupancy request's), and prints one sha256
# per file. A refactoring of the lowering that
# must not change behaviour leaves these bytes identical: run it before and after and compare
# the sums (issue 37). The last two sums ignore indentation: equal where only the layout of
# the text changed.
#
#   bash scripts/dump-sources.sh [OUT]      (default target/sources)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/sources}"
targets=sm_80,sm_86,sm_89,sm_90,sm_90a,gfx1100,gfx1151,gfx1201,gfx90a,gfx942,gfx1030
cargo build -q -p tilelang-build --bin tilelang-emit
emit="${CARGO_TARGET_DIR:-target}/debug/tilelang-emit"
mkdir -p "$out"
for src in kernels/src examples/src; do
  "$emit" "$src" "$targets" > "$out/${src%%/*}.cu"
done
(cd "$out" && sha256sum kernels.cu examples.cu)
# The same text without indentation (and so without the occupancy requests' hashes of their
# sources): what a change to the printer's layout alone leaves identical.
for f in kernels examples; do
  sed -e 's/^[[:space:]]*//' -e 's/ ([0-9a-f]\{16\})//g' "$out/$f.cu" | sha256sum | sed "s/-\$/$f.cu, indentation aside/"
done
