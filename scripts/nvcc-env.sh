#!/usr/bin/env bash
# Installs NVIDIA's nvcc (and cuobjdump) from pip wheels pinned to CUDA 13.0 into a private
# virtual environment, then prints `export NVCC=...` lines. Use it where no CUDA toolkit is
# installed:
#
#     eval "$(bash scripts/nvcc-env.sh)"
#
# The pins matter: nvidia-nvvm must match nvcc's version (unpinned it resolves to a newer
# minor and ptxas fails), and the H200 driver used here is CUDA 13.0, so cubins come from 13.0.
set -euo pipefail
venv="${TILELANG_NVCC_VENV:-$(cd "$(dirname "$0")/.." && pwd)/target/nvcc-venv}"
if [ ! -x "$venv/bin/python3" ]; then
  python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install -q --disable-pip-version-check \
  nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
  nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 \
  nvidia-cuda-cuobjdump==13.2.51 nvidia-cuda-nvdisasm==13.2.51 >&2
nvcc="$(find "$venv" -path '*/bin/nvcc' -type f | head -n 1)"
cuobjdump="$(find "$venv" -path '*/bin/cuobjdump' -type f | head -n 1)"
[ -x "$nvcc" ] || { echo "nvcc not found in $venv" >&2; exit 1; }
# Call nvcc by its real path: through a symlink it cannot find its headers.
echo "export NVCC='$(readlink -f "$nvcc")'"
echo "export CUOBJDUMP='$(readlink -f "$cuobjdump")'"
