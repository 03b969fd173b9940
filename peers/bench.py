#!/usr/bin/env python3
"""PyTorch, torch.compile and Triton peers of the ten tilelang-rs tutorials, checked and timed
side by side.

For every tutorial (01-10) and variant this script runs a PyTorch version (idiomatic eager
ops), torch.compile of that version (mode max-autotune-no-cudagraphs, fullgraph, static
shapes; see measure_compiled) and a Triton version (kernels written here, below), at the
tutorial sizes and at large
sizes far past the H200's 50 MB L2. Each one is first checked against a float64 reference
computed on the GPU from the same (rounded) inputs, with the output poisoned with NaN
beforehand, then timed with triton.testing.do_bench (L2 flushed between repetitions, median
reported with min/max/p20/p80). It also measures host-side launch overhead (eager and CUDA
graph replay). Results go to JSON; see peers/README.md for the method and the fields.

    python3 peers/bench.py --out peers/results.json            # everything
    python3 peers/bench.py --only 08 --sizes tutorial --seed 1  # one chapter, one size set

torch and triton are imported inside main(), so `--help` works without them.
Exit status: 0 if every check passed, 1 if any failed or errored, 2 if nothing could run.
"""

import argparse
import datetime
import importlib.util
import os
import json
import math
import platform
import statistics
import subprocess
import sys
import time
import traceback
import types

# Bound by _import_gpu_libs() in main(); the Triton kernels below look `tl` up in this
# module's globals when they are compiled.
torch = None
F = None
triton = None
tl = None
K = None  # namespace of the Triton kernels, bound by _define_kernels()

CHAPTERS = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10"]


def _load_examples():
    """peers/examples.py (the examples crate's peers), loaded by path under a name of its own
    so that no installed package called `examples` can stand in for it. Needs no torch."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples.py")
    spec = importlib.util.spec_from_file_location("tilelang_peers_examples", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


EX = _load_examples()
# --only names of the examples: `ex` selects them all.
EXAMPLES = [f"ex:{n}" for n in EX.NAMES]

# The implementations (--impls): PyTorch eager, our Triton kernels, and torch.compile of the
# PyTorch eager implementation.
IMPLS = ["pytorch", "triton", "torch_compile"]
# PyTorch library kernels recorded under names of their own (so the report can tell them
# apart: it shows them in its vendor column, by name): attention's SDPA backends. Each runs
# when its family (PyTorch eager) or its own name is in --impls.
IMPL_FAMILY = {"sdpa_flash": "pytorch", "sdpa_cudnn": "pytorch"}

# torch.compile's mode: max-autotune (inductor benchmarks its kernel configs and, for GEMMs,
# its Triton templates against cuBLAS) without CUDA graphs, since every other implementation is
# timed as plain launches. The default mode is used only when this one fails to compile; each
# record says which mode ran.
COMPILE_MODE = "max-autotune-no-cudagraphs"
COMPILE_FALLBACK_MODE = "default"

# Problem sizes. "tutorial": the tutorials' own sizes (shared/seed-notes.md). "large": working
# sets far past the 50 MB L2 of an H200 (listed with their footprints in peers/README.md).
SIZES = {
    "01": {"tutorial": dict(n=524_288), "large": dict(n=256 << 20)},
    "02": {"tutorial": dict(n=4_194_304), "large": dict(n=256 << 20)},
    "03": {"tutorial": dict(m=8192, n=4096), "large": dict(m=32768, n=16384)},
    "04": {"tutorial": dict(m=8192, n=4096), "large": dict(m=16384, n=16384)},
    "05": {"tutorial": dict(m=4096, n=16384), "large": dict(m=16384, n=16384)},
    "06": {"tutorial": dict(m=4096, n=16384), "large": dict(m=16384, n=16384)},
    "07": {"tutorial": dict(m=256, n=16384), "large": dict(m=4096, n=16384)},
    "08": {"tutorial": dict(m=4096, n=4096, k=4096), "large": dict(m=8192, n=8192, k=8192)},
    "09": {"tutorial": dict(sn=64, sl=1024, mn=16, ml=256, f=32, kw=7),
           "large": dict(sn=8192, sl=32768, mn=1024, ml=8192, f=32, kw=7)},
    "10": {"tutorial": dict(m=4096, n=4096, k=4096), "large": dict(m=8192, n=8192, k=8192)},
}

# Tolerances: an element passes when |got - want| <= atol + rtol*|want| and, where the tutorial
# had a tolerance ("cap"), also <= cap_atol + cap_rtol*|want|, so we are never looser than the
# tutorial. The values mirror the Rust side (kernels/src/ch*.rs); see peers/README.md.
TOL_EXACT = dict(atol=0.0, rtol=0.0)
TOL_F16_ELEMENTWISE = dict(atol=1e-6, rtol=2.0 ** -10, cap=(1e-2, 0.0))
TOL_ROW_SUM = dict(atol=0.0, rtol=1e-4)
TOL_SOFTMAX = dict(atol=1e-36, rtol=5e-5, cap=(1e-4, 0.0))

GEMM_CAP = (1.0, 0.0)    # tutorial 08: atol 1.0
W4A16_CAP = (0.5, 0.1)   # tutorial 10: atol 0.5, rtol 0.1
CONV_CAP = (1e-2, 0.0)   # tutorial 09: atol 1e-2

COMPARE_CHUNK = 1 << 26  # elements per chunk when comparing (bounds the f64 temporaries)


# --------------------------------------------------------------------------------------------
# Triton kernels (written for this script; simple and correct first)
# --------------------------------------------------------------------------------------------

def _define_kernels():
    """Defines the Triton kernels once torch/triton are imported (keeps --help import-free)."""

    # 01: copy. One program per BLOCK elements; int64 offsets so 2^31+ elements would work.
    # ANCHOR: triton_copy
    @triton.jit
    def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)
    # ANCHOR_END: triton_copy

    # ANCHOR: triton_add
    # 02: C = A + B in f16 (one correctly rounded f16 add per element).
    @triton.jit
    def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(a + offs, mask=mask)
        y = tl.load(b + offs, mask=mask)
        tl.store(c + offs, x + y, mask=mask)
    # ANCHOR_END: triton_add

    # ANCHOR: triton_mul_relu
    # 02: C = max(0, A*B), fused in registers. The f32 product of two f16 values is exact, so
    # rounding it to f16 once gives the correctly rounded f16 product.
    @triton.jit
    def mul_relu_kernel(a, b, c, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(a + offs, mask=mask).to(tl.float32)
        y = tl.load(b + offs, mask=mask).to(tl.float32)
        tl.store(c + offs, tl.maximum(x * y, 0.0).to(tl.float16), mask=mask)
    # ANCHOR_END: triton_mul_relu

    # ANCHOR: triton_outer_add
    # 03: C[i, j] = A[i] + B[j]; a 2-D grid of BM x BN tiles (axis 0 over columns).
    @triton.jit
    def outer_add_kernel(a, b, c, M, N, BM: tl.constexpr, BN: tl.constexpr):
        rows = tl.program_id(1) * BM + tl.arange(0, BM)
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        x = tl.load(a + rows, mask=rows < M, other=0.0)
        y = tl.load(b + cols, mask=cols < N, other=0.0)
        offs = rows[:, None].to(tl.int64) * N + cols[None, :]
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(c + offs, x[:, None] + y[None, :], mask=mask)
    # ANCHOR_END: triton_outer_add

    # ANCHOR: triton_broadcast_relu
    # 04 forward: C = relu(A * B[None, :]) in f16.
    @triton.jit
    def bcast_relu_fwd_kernel(a, b, c, M, N, BM: tl.constexpr, BN: tl.constexpr):
        rows = tl.program_id(1) * BM + tl.arange(0, BM)
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        offs = rows[:, None].to(tl.int64) * N + cols[None, :]
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(a + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(b + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(c + offs, tl.maximum(x * w[None, :], 0.0).to(tl.float16), mask=mask)

    # 04 backward: dA = dC * B[None, :] * 1[A*B > 0]. The mask tests the forward's product as
    # the forward rounds it (to f16), as the Rust kernel and the reference do.
    @triton.jit
    def bcast_relu_bwd_kernel(a, b, dc, da, M, N, BM: tl.constexpr, BN: tl.constexpr):
        rows = tl.program_id(1) * BM + tl.arange(0, BM)
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        offs = rows[:, None].to(tl.int64) * N + cols[None, :]
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(a + offs, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(dc + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(b + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
        fwd = (x * w).to(tl.float16)
        grad = tl.where(fwd > 0, g * w, 0.0)
        tl.store(da + offs, grad.to(tl.float16), mask=mask)
    # ANCHOR_END: triton_broadcast_relu

    # ANCHOR: triton_row_sum
    # 05: out[i] = sum_j A[i, j]. One program per row; BLOCK f32 lanes accumulate the row in
    # column chunks, then one tree reduction.
    @triton.jit
    def row_sum_kernel(a, out, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = a + row.to(tl.int64) * n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(base + cols, mask=cols < n_cols, other=0.0)
        tl.store(out + row, tl.sum(acc, axis=0))
    # ANCHOR_END: triton_row_sum

    # ANCHOR: triton_softmax
    # 06 3-pass: row max, then sum of exp(x - max), then write exp(x - max) / sum.
    @triton.jit
    def softmax_3pass_kernel(x, y, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        xr = x + row * n_cols
        yr = y + row * n_cols
        mx = tl.full([BLOCK], -float("inf"), tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mx = tl.maximum(mx, tl.load(xr + cols, mask=cols < n_cols, other=-float("inf")))
        m = tl.max(mx, axis=0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(xr + cols, mask=cols < n_cols, other=-float("inf"))
            acc += tl.exp(v - m)
        s = tl.sum(acc, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(xr + cols, mask=cols < n_cols, other=0.0)
            tl.store(yr + cols, tl.exp(v - m) / s, mask=cols < n_cols)

    # 06 online: each lane keeps a running max m and a sum s of exp(x - m), rescaling s by
    # exp(m_old - m_new) when its max grows; the lanes are merged the same way, then one
    # write pass. A lane that has only seen padding (-inf) is shifted by 0 instead of its
    # max, so no (-inf) - (-inf) = NaN can arise.
    @triton.jit
    def softmax_online_kernel(x, y, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        xr = x + row * n_cols
        yr = y + row * n_cols
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(xr + cols, mask=cols < n_cols, other=-float("inf"))
            m_new = tl.maximum(m, v)
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - shift) + tl.exp(v - shift)
            m = m_new
        row_max = tl.max(m, axis=0)
        row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            v = tl.load(xr + cols, mask=cols < n_cols, other=0.0)
            tl.store(yr + cols, tl.exp(v - row_max) / row_sum, mask=cols < n_cols)
    # ANCHOR_END: triton_softmax

    # ANCHOR: triton_flash
    # 07 3-pass: S = Q*K element-wise (recomputed in each pass, never stored), row softmax of
    # S, times V.
    @triton.jit
    def flash_3pass_kernel(q, k, v, o, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        qr = q + row * n_cols
        kr = k + row * n_cols
        mx = tl.full([BLOCK], -float("inf"), tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            inb = cols < n_cols
            sc = tl.load(qr + cols, mask=inb, other=0.0) * tl.load(kr + cols, mask=inb, other=0.0)
            mx = tl.maximum(mx, tl.where(inb, sc, -float("inf")))
        m = tl.max(mx, axis=0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            inb = cols < n_cols
            sc = tl.load(qr + cols, mask=inb, other=0.0) * tl.load(kr + cols, mask=inb, other=0.0)
            acc += tl.where(inb, tl.exp(sc - m), 0.0)
        s = tl.sum(acc, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            inb = cols < n_cols
            sc = tl.load(qr + cols, mask=inb, other=0.0) * tl.load(kr + cols, mask=inb, other=0.0)
            vv = tl.load(v + row * n_cols + cols, mask=inb, other=0.0)
            tl.store(o + row * n_cols + cols, tl.exp(sc - m) / s * vv, mask=inb)

    # 07 2-pass: the online softmax of 06 over S = Q*K, then one write pass.
    @triton.jit
    def flash_2pass_kernel(q, k, v, o, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        qr = q + row * n_cols
        kr = k + row * n_cols
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            inb = cols < n_cols
            sc = tl.load(qr + cols, mask=inb, other=0.0) * tl.load(kr + cols, mask=inb, other=0.0)
            sc = tl.where(inb, sc, -float("inf"))
            m_new = tl.maximum(m, sc)
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - shift) + tl.exp(sc - shift)
            m = m_new
        row_max = tl.max(m, axis=0)
        row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            inb = cols < n_cols
            sc = tl.load(qr + cols, mask=inb, other=0.0) * tl.load(kr + cols, mask=inb, other=0.0)
            vv = tl.load(v + row * n_cols + cols, mask=inb, other=0.0)
            tl.store(o + row * n_cols + cols, tl.exp(sc - row_max) / row_sum * vv, mask=inb)
    # ANCHOR_END: triton_flash

    # ANCHOR: triton_gemm
    # 08: C = A.B, row-major f16 A [M, K], B [K, N], f32 accumulation in tl.dot (tensor cores),
    # C stored as f16. One program per BM x BN tile of C. Programs are numbered down a band of
    # GROUP_M tile-rows before moving one tile-column right, so programs running at the same
    # time share A rows and B columns in L2.
    @triton.jit
    def gemm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        band = pid // (GROUP_M * tiles_n)
        first_m = band * GROUP_M
        band_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        in_band = pid - band * (GROUP_M * tiles_n)
        tile_m = first_m + in_band % band_rows
        tile_n = in_band // band_rows
        rows = tile_m * BM + tl.arange(0, BM)
        cols = tile_n * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        a_ptrs = a + rows[:, None] * K + ks[None, :]
        b_ptrs = b + ks[:, None] * N + cols[None, :]
        row_ok = rows[:, None] < M
        col_ok = cols[None, :] < N
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            if EVEN_K:
                at = tl.load(a_ptrs, mask=row_ok, other=0.0)
                bt = tl.load(b_ptrs, mask=col_ok, other=0.0)
            else:
                k_ok = (k0 + ks) < K
                at = tl.load(a_ptrs, mask=row_ok & k_ok[None, :], other=0.0)
                bt = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok, other=0.0)
            acc = tl.dot(at, bt, acc)
            a_ptrs += BK
            b_ptrs += BK * N
        c_ptrs = c + rows[:, None] * N + cols[None, :]
        tl.store(c_ptrs, acc.to(tl.float16), mask=row_ok & col_ok)
    # ANCHOR_END: triton_gemm

    # ANCHOR: triton_w4a16
    # 10: W4A16. Bp [K, N/2] u8 holds B[k, 2j] = (p & 0xF) - 8 and B[k, 2j+1] = (p >> 4) - 8.
    # Same tiling as gemm_kernel, BN = 2*BNP output columns per tile. Each K step loads a
    # packed (BK, BNP) tile, unpacks its low and high nibbles into two f16 (BK, BNP) tiles (the
    # even and the odd columns of B), interleaves them (join puts them side by side in a new
    # minor dimension, reshape flattens that into columns 2j, 2j+1) and runs one tl.dot.
    # (Measured on the H200: 20-25% faster than two half-width dots with the interleave left
    # to the epilogue.)
    @triton.jit
    def w4a16_kernel(a, bp, c, M, N, K, BM: tl.constexpr, BNP: tl.constexpr, BK: tl.constexpr,
                     GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
        NP = N // 2
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(NP, BNP)
        band = pid // (GROUP_M * tiles_n)
        first_m = band * GROUP_M
        band_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        in_band = pid - band * (GROUP_M * tiles_n)
        tile_m = first_m + in_band % band_rows
        tile_n = in_band // band_rows
        rows = tile_m * BM + tl.arange(0, BM)
        pcols = tile_n * BNP + tl.arange(0, BNP)
        ks = tl.arange(0, BK)
        a_ptrs = a + rows[:, None] * K + ks[None, :]
        b_ptrs = bp + ks[:, None] * NP + pcols[None, :]
        row_ok = rows[:, None] < M
        pcol_ok = pcols[None, :] < NP
        acc = tl.zeros((BM, 2 * BNP), dtype=tl.float32)
        for k0 in range(0, K, BK):
            if EVEN_K:
                at = tl.load(a_ptrs, mask=row_ok, other=0.0)
                p = tl.load(b_ptrs, mask=pcol_ok, other=0)
            else:
                k_ok = (k0 + ks) < K
                at = tl.load(a_ptrs, mask=row_ok & k_ok[None, :], other=0.0)
                # bytes past K read 0 (-> -8) but meet A = 0 there, so they add nothing
                p = tl.load(b_ptrs, mask=k_ok[:, None] & pcol_ok, other=0)
            q = p.to(tl.int32)
            b_even = ((q & 15) - 8).to(tl.float16)
            b_odd = (((q >> 4) & 15) - 8).to(tl.float16)
            bt = tl.reshape(tl.join(b_even, b_odd), (BK, 2 * BNP))
            acc = tl.dot(at, bt, acc)
            a_ptrs += BK
            b_ptrs += BK * NP
        cols = tile_n * (2 * BNP) + tl.arange(0, 2 * BNP)
        c_ptrs = c + rows[:, None] * N + cols[None, :]
        tl.store(c_ptrs, acc.to(tl.float16), mask=row_ok & (cols[None, :] < N))
    # ANCHOR_END: triton_w4a16

    # ANCHOR: triton_conv1d
    # 09 single filter: O[n, l] = sum_t X[n, l + t - KW//2] * W[t], zero padding, f32 sums.
    @triton.jit
    def conv1d_single_kernel(x, w, o, L, KW: tl.constexpr, BL: tl.constexpr):
        row = tl.program_id(1).to(tl.int64)
        ls = tl.program_id(0) * BL + tl.arange(0, BL)
        xr = x + row * L
        acc = tl.zeros([BL], dtype=tl.float32)
        for t in tl.static_range(KW):
            pos = ls + (t - KW // 2)
            xv = tl.load(xr + pos, mask=(pos >= 0) & (pos < L), other=0.0)
            acc += xv.to(tl.float32) * tl.load(w + t).to(tl.float32)
        tl.store(o + row * L + ls, acc.to(tl.float16), mask=ls < L)

    # 09 multi filter (one input channel, F outputs, channel-last):
    # O[n, l, f] = sum_t X[n, l + t - KW//2] * W[t, f]. F must be a power of two.
    @triton.jit
    def conv1d_multi_kernel(x, w, o, L, KW: tl.constexpr, F: tl.constexpr, BL: tl.constexpr):
        row = tl.program_id(1).to(tl.int64)
        ls = tl.program_id(0) * BL + tl.arange(0, BL)
        fs = tl.arange(0, F)
        xr = x + row * L
        acc = tl.zeros([BL, F], dtype=tl.float32)
        for t in tl.static_range(KW):
            pos = ls + (t - KW // 2)
            xv = tl.load(xr + pos, mask=(pos >= 0) & (pos < L), other=0.0).to(tl.float32)
            wv = tl.load(w + t * F + fs).to(tl.float32)
            acc += xv[:, None] * wv[None, :]
        offs = (row * L + ls)[:, None] * F + fs[None, :]
        mask = (ls[:, None] < L) & (fs[None, :] < F)
        tl.store(o + offs, acc.to(tl.float16), mask=mask)
    # ANCHOR_END: triton_conv1d

    # Launch overhead: a 1-element add.
    @triton.jit
    def add_one_kernel(x, y, out):
        tl.store(out, tl.load(x) + tl.load(y))

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if k.endswith("_kernel")})


# --------------------------------------------------------------------------------------------
# Harness: inputs, comparison, timing, records
# --------------------------------------------------------------------------------------------

class Ctx:
    def __init__(self, seed, warmup, rep, impls, sustain):
        self.seed = seed
        self.warmup = warmup
        self.rep = rep
        self.sustain = sustain
        self.impls = list(impls or IMPLS)
        self.records = []


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def _generator(ctx, chapter, size_set):
    """A CUDA generator seeded from (seed, chapter, size set): --only reproduces the inputs."""
    g = torch.Generator(device="cuda")
    g.manual_seed(ctx.seed * 1000 + int(chapter) * 10 + (0 if size_set == "tutorial" else 1))
    return g


def _uniform(g, shape, lo, hi, dtype):
    """Uniform in [lo, hi) drawn in f32 on the GPU, then rounded to dtype."""
    x = torch.rand(shape, generator=g, device="cuda", dtype=torch.float32)
    x.mul_(hi - lo).add_(lo)
    return x if dtype == torch.float32 else x.to(dtype)


def _bytes_rand(g, shape):
    return torch.randint(0, 256, shape, generator=g, device="cuda", dtype=torch.uint8)


def compare(got, ref, atol, rtol, cap=None):
    """Element-wise check of `got` against the float64 `ref` (chunked to bound memory).

    An element passes when |got - ref| <= atol + rtol*|ref| and, with cap = (ca, cr), also
    <= ca + cr*|ref|; a NaN fails. max_rel_err = max |got - ref| / max(|ref|, atol/rtol), the
    definition of the Rust side (kernels/src/check.rs): values below the scale where the
    absolute tolerance takes over count absolutely. normwise_rel_err = max |got - ref| /
    max |ref| (more telling for GEMMs, whose atol/rtol scale is large).
    """
    if tuple(got.shape) != tuple(ref.shape):
        raise ValueError(f"shape {tuple(got.shape)} != reference {tuple(ref.shape)}")
    g = got.reshape(-1)
    r = ref.reshape(-1)
    floor = max(atol / rtol, 1e-30) if rtol > 0 else 1e-6
    inf = float("inf")
    max_abs = torch.zeros((), dtype=torch.float64, device=r.device)
    max_rel = torch.zeros((), dtype=torch.float64, device=r.device)
    ref_max = torch.zeros((), dtype=torch.float64, device=r.device)
    n_bad = 0
    n_nan = 0
    first_bad = None
    for s in range(0, g.numel(), COMPARE_CHUNK):
        gc = g[s:s + COMPARE_CHUNK].to(torch.float64)
        rc = r[s:s + COMPARE_CHUNK]
        ra = rc.abs()
        d = torch.nan_to_num((gc - rc).abs(), nan=inf, posinf=inf)
        bound = atol + rtol * ra
        if cap is not None:
            bound = torch.minimum(bound, cap[0] + cap[1] * ra)
        bad = d > bound
        max_abs = torch.maximum(max_abs, d.max())
        max_rel = torch.maximum(max_rel, (d / ra.clamp_min(floor)).max())
        ref_max = torch.maximum(ref_max, ra.max())
        nb = int(bad.sum())
        n_nan += int(torch.isnan(gc).sum())
        if nb and first_bad is None:
            i = int(bad.nonzero()[0, 0])
            first_bad = {"index": s + i, "got": float(gc[i]), "want": float(rc[i])}
        n_bad += nb
    ref_absmax = float(ref_max)
    return {
        "max_abs_err": float(max_abs),
        "max_rel_err": float(max_rel),
        "normwise_rel_err": float(max_abs) / ref_absmax if ref_absmax > 0 else None,
        "ref_absmax": ref_absmax,
        "n_bad": n_bad,
        "n_nan": n_nan,
        "first_bad": first_bad,
        "atol": atol,
        "rtol": rtol,
        "tutorial_cap": list(cap) if cap is not None else None,
        "passed": n_bad == 0,
    }


def _quantile(sorted_times, q):
    """Linear interpolation between order statistics (as triton.testing does)."""
    pos = q * (len(sorted_times) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    t = pos - lo
    return (1 - t) * sorted_times[lo] + t * sorted_times[hi]


def bench(ctx, fn, sustain=False):
    """triton.testing.do_bench: L2 flushed (256 MB buffer written) before each repetition.

    With `sustain` (the FLOP-counted rows: the GEMMs), the warm-up and the repetitions each last
    at least ctx.sustain ms: long tensor-core work lowers the card's clocks within a few hundred
    ms (power), so those rows are timed at the clocks they sustain, as the Rust bench times them
    (TILELANG_BENCH_SUSTAIN_MS). Memory-bound rows do not depend on the SM clock.

    One call with return_mode="all" yields every repetition's time; its median is exactly what
    return_mode="median" returns (statistics.median of the same list in Triton 3.x). If this
    Triton does not know "all", fall back to return_mode="median" without the spread.
    """
    do_bench = triton.testing.do_bench
    warmup, rep = ctx.warmup, ctx.rep
    if sustain:
        warmup, rep = max(warmup, ctx.sustain), max(rep, ctx.sustain)
    window = {"warmup_ms": warmup, "rep_ms": rep}
    try:
        times = do_bench(fn, warmup=warmup, rep=rep, return_mode="all")
        times = sorted(float(t) for t in times)
    except (AssertionError, ValueError, TypeError):
        med = do_bench(fn, warmup=warmup, rep=rep, return_mode="median")
        return {"median_ms": float(med), "min_ms": None, "max_ms": None, "p20_ms": None,
                "p80_ms": None, "n_reps": None, "timing": "do_bench median", **window}
    return {
        **window,
        "median_ms": statistics.median(times),
        "min_ms": times[0],
        "max_ms": times[-1],
        "p20_ms": _quantile(times, 0.2),
        "p80_ms": _quantile(times, 0.8),
        "n_reps": len(times),
        "timing": "do_bench all",
    }


def _new_record(ctx, base):
    rec = {"record": "kernel", "config": None, "note": None}
    rec.update(base)
    rec.update(median_ms=None, min_ms=None, max_ms=None, max_abs_err=None, max_rel_err=None,
               passed=False, error=None, seed=ctx.seed)
    return rec


def _poison_free_blocks(numel):
    """Before checking an op that allocates its output: NaN-filled blocks in the caching
    allocator where that output will most likely land.

    The allocator hands out the smallest cached free block that fits, and a block freed by an
    earlier run of the same problem (the eager op's output, torch.compile's warm-up call) holds
    correct values: an implementation that left elements unwritten would pass on them. So the
    cache is emptied, then two blocks each of the output's size in f16 and in f32 (numel * 2 and
    numel * 4 bytes) are filled with 0xFF bytes (NaN in either dtype) and freed back into it.
    """
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    blocks = [torch.full((nbytes,), 0xFF, device="cuda", dtype=torch.uint8)
              for nbytes in (2 * numel, 2 * numel, 4 * numel, 4 * numel)]
    torch.cuda.synchronize()
    del blocks


def measure(ctx, base, fn, ref, tol, out=None):
    """Checks `fn` (poisoning `out` with NaN first), then times it if the check passed.

    `fn()` launches the implementation and returns its output tensor: `out` itself when the
    implementation writes into a preallocated tensor, or a tensor the op allocated (then the
    allocator's likely blocks are poisoned instead, `_poison_free_blocks`). Implementations not
    selected with --impls (neither by name nor, for IMPL_FAMILY's, by family) are skipped (no
    record).
    """
    impl = base.get("impl")
    if impl not in ctx.impls and IMPL_FAMILY.get(impl) not in ctx.impls:
        return None
    rec = _new_record(ctx, base)
    try:
        if out is not None:
            out.fill_(float("nan"))
        else:
            _poison_free_blocks(ref.numel())
        got = fn()
        torch.cuda.synchronize()
        rec.update(compare(got, ref, **tol))
        del got
        if rec["passed"]:
            rec.update(bench(ctx, fn, sustain=bool(rec.get("flops"))))
            sec = rec["median_ms"] * 1e-3
            if rec.get("bytes"):
                rec["gbps"] = rec["bytes"] / sec / 1e9
            if rec.get("flops"):
                rec["tflops"] = rec["flops"] / sec / 1e12
    except Exception as e:  # record and continue
        rec["passed"] = False
        rec["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc(file=sys.stderr)
    ctx.records.append(rec)
    _log_record(rec)
    return rec


def measure_compiled(ctx, base, fn, args, ref, tol):
    """torch.compile of `fn(*args)`, checked and timed like `measure` (impl `torch_compile`).

    `fn` is the eager implementation in functional form (it returns its output; no `out=`,
    which is not torch.compile's idiom). It is compiled with fullgraph=True (a graph break is an
    error, never a silent fall back to eager) and dynamic=False (shapes static), in
    COMPILE_MODE; only if that fails, dynamo is reset and COMPILE_FALLBACK_MODE is tried. The
    record says which mode ran (`mode`, with `mode_requested` and, after a fall back, the first
    error in `mode_error`). Compiling happens on a first call with the real inputs, outside the
    timing (its wall time goes to stderr and `compile_s`); the check and the timing then run
    with dynamo's error_on_recompile set, so a recompile would be an error, not a timed compile.
    Dynamo is reset before each compile: one compiled graph per (kernel, shape). A failure to
    compile is a record with passed false and the error(s); the run goes on.
    """
    base = {**base, "impl": "torch_compile"}
    if "torch_compile" not in ctx.impls:
        return None
    errors = []
    compiled = mode = compile_s = None
    for m in (COMPILE_MODE, COMPILE_FALLBACK_MODE):
        torch._dynamo.reset()
        try:
            c = torch.compile(fn, fullgraph=True, dynamic=False, mode=m)
            t0 = time.perf_counter()
            c(*args)
            torch.cuda.synchronize()
            compiled, mode, compile_s = c, m, time.perf_counter() - t0
            break
        except Exception as e:
            errors.append(f"torch.compile mode={m}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
            _log(f"     {base['chapter']} {base['variant']} {base['size_set']}: "
                 f"{errors[-1][:300]}")
    extra = {"mode": mode, "mode_requested": COMPILE_MODE, "compile_s": compile_s,
             "fullgraph": True, "dynamic": False}
    if errors and compiled is not None:
        extra["mode_error"] = errors[0][:4000]
    base = {**base, **extra}
    if compiled is None:
        rec = _new_record(ctx, base)
        rec["error"] = " | ".join(e[:2000] for e in errors)
        ctx.records.append(rec)
        _log_record(rec)
        return rec
    _log(f"     compiled {base['chapter']} {base['variant']} {base['size_set']} in "
         f"{compile_s:.1f} s (mode {mode})")
    with torch._dynamo.config.patch(error_on_recompile=True):
        return measure(ctx, base, lambda: compiled(*args), ref, tol)


def _log_record(rec):
    perf = ""
    if rec.get("median_ms") is not None:
        perf = f"{rec['median_ms']:.4f} ms"
        if rec.get("gbps"):
            perf += f"  {rec['gbps']:8.1f} GB/s"
        if rec.get("tflops"):
            perf += f"  {rec['tflops']:7.1f} TFLOPS"
    status = "ok  " if rec["passed"] else "FAIL"
    err = rec.get("max_rel_err")
    err = f"rel {err:.1e}" if isinstance(err, float) else ""
    extra = f"  [{rec['config']}]" if rec.get("config") else ""
    if rec.get("error"):
        extra += f"  {rec['error'][:200]}"
    _log(f"{status} {rec['chapter']} {rec['variant']:<9} {rec['impl']:<13} {rec['size_set']:<8} "
         f"{perf:<40} {err}{extra}")


def _base(chapter, variant, impl, size_set, shape, dtype, **work):
    return dict(chapter=chapter, variant=variant, impl=impl, size_set=size_set, shape=shape,
                dtype=dtype, bytes=work.get("bytes"), flops=work.get("flops"))


def _launch(kernel, grid, out, *args, **meta):
    """A closure that launches a Triton kernel and returns its output tensor."""
    def fn():
        kernel[grid](*args, **meta)
        return out
    return fn


# --------------------------------------------------------------------------------------------
# The ten tutorials
# --------------------------------------------------------------------------------------------

# ANCHOR: peers_copy
def ch01_copy(ctx, ss):
    n = SIZES["01"][ss]["n"]
    g = _generator(ctx, "01", ss)
    a = _uniform(g, (n,), -4.0, 4.0, torch.float16)
    ref = a.to(torch.float64)
    out = torch.empty_like(a)
    mk = lambda impl: _base("01", "copy", impl, ss, f"N={n}", "f16", bytes=2 * 2 * n)
    measure(ctx, {**mk("pytorch"), "note": "out.copy_(a)"}, lambda: out.copy_(a), ref, TOL_EXACT,
            out=out)
    measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(a.clone())"},
                     lambda a: a.clone(), (a,), ref, TOL_EXACT)
    BLOCK = 1024
    measure(ctx, {**mk("triton"), "config": "BLOCK=1024 num_warps=4"},
            _launch(K.copy_kernel, (triton.cdiv(n, BLOCK),), out, a, out, n, BLOCK=BLOCK,
                    num_warps=4), ref, TOL_EXACT, out=out)
# ANCHOR_END: peers_copy


# ANCHOR: peers_vector_add
def ch02_vector_add(ctx, ss):
    n = SIZES["02"][ss]["n"]
    g = _generator(ctx, "02", ss)
    a = _uniform(g, (n,), -4.0, 4.0, torch.float16)
    b = _uniform(g, (n,), -4.0, 4.0, torch.float16)
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    out = torch.empty_like(a)
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    cfg = "BLOCK=1024 num_warps=4"
    mk = lambda v, impl: _base("02", v, impl, ss, f"N={n}", "f16", bytes=3 * 2 * n)

    ref = a64 + b64
    measure(ctx, {**mk("add", "pytorch"), "note": "torch.add(a, b, out=c)"},
            lambda: torch.add(a, b, out=out), ref, TOL_F16_ELEMENTWISE, out=out)
    measure_compiled(ctx, {**mk("add", "torch_compile"), "note": "torch.compile(a + b)"},
                     lambda a, b: a + b, (a, b), ref, TOL_F16_ELEMENTWISE)
    measure(ctx, {**mk("add", "triton"), "config": cfg},
            _launch(K.add_kernel, grid, out, a, b, out, n, BLOCK=BLOCK, num_warps=4),
            ref, TOL_F16_ELEMENTWISE, out=out)
    del ref

    ref = (a64 * b64).clamp_min(0.0)
    measure(ctx, {**mk("mul_relu", "pytorch"), "note": "torch.relu(a * b): two eager kernels"},
            lambda: torch.relu(a * b), ref, TOL_F16_ELEMENTWISE)
    measure_compiled(ctx, {**mk("mul_relu", "torch_compile"),
                           "note": "torch.compile(torch.relu(a * b))"},
                     lambda a, b: torch.relu(a * b), (a, b), ref, TOL_F16_ELEMENTWISE)
    measure(ctx, {**mk("mul_relu", "triton"), "config": cfg, "note": "fused, one pass"},
            _launch(K.mul_relu_kernel, grid, out, a, b, out, n, BLOCK=BLOCK, num_warps=4),
            ref, TOL_F16_ELEMENTWISE, out=out)
# ANCHOR_END: peers_vector_add


# ANCHOR: peers_outer_add
def ch03_outer_add(ctx, ss):
    m, n = SIZES["03"][ss]["m"], SIZES["03"][ss]["n"]
    g = _generator(ctx, "03", ss)
    a = _uniform(g, (m,), -4.0, 4.0, torch.float16)
    b = _uniform(g, (n,), -4.0, 4.0, torch.float16)
    ref = a.to(torch.float64)[:, None] + b.to(torch.float64)[None, :]
    out = torch.empty((m, n), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base("03", "outer_add", impl, ss, f"A[{m}] + B[{n}] -> C[{m},{n}]", "f16",
                            bytes=2 * (m + n + m * n))
    measure(ctx, {**mk("pytorch"), "note": "torch.add(a[:, None], b[None, :], out=c)"},
            lambda: torch.add(a[:, None], b[None, :], out=out), ref, TOL_F16_ELEMENTWISE, out=out)
    measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(a[:, None] + b[None, :])"},
                     lambda a, b: a[:, None] + b[None, :], (a, b), ref, TOL_F16_ELEMENTWISE)
    BM, BN = 32, 256
    measure(ctx, {**mk("triton"), "config": "BM=32 BN=256 num_warps=4"},
            _launch(K.outer_add_kernel, (triton.cdiv(n, BN), triton.cdiv(m, BM)), out,
                    a, b, out, m, n, BM=BM, BN=BN, num_warps=4),
            ref, TOL_F16_ELEMENTWISE, out=out)
# ANCHOR_END: peers_outer_add


# ANCHOR: peers_broadcast_relu
def ch04_broadcast_relu(ctx, ss):
    m, n = SIZES["04"][ss]["m"], SIZES["04"][ss]["n"]
    g = _generator(ctx, "04", ss)
    a = _uniform(g, (m, n), -4.0, 4.0, torch.float16)
    b = _uniform(g, (n,), -4.0, 4.0, torch.float16)
    dc = _uniform(g, (m, n), -4.0, 4.0, torch.float16)
    out = torch.empty_like(a)
    BM, BN = 16, 512
    grid = (triton.cdiv(n, BN), triton.cdiv(m, BM))
    cfg = "BM=16 BN=512 num_warps=8"
    shape = f"A,dC[{m},{n}] B[{n}]"

    prod = a.to(torch.float64) * b.to(torch.float64)[None, :]  # exact: f16 x f16 fits in f64
    ref = prod.clamp_min(0.0)
    mk = lambda v, impl, nb: _base("04", v, impl, ss, shape, "f16", bytes=nb)
    fwd_bytes, bwd_bytes = 2 * (2 * m * n + n), 2 * (3 * m * n + n)
    measure(ctx, {**mk("fwd", "pytorch", fwd_bytes), "note": "torch.relu(a * b)"},
            lambda: torch.relu(a * b), ref, TOL_F16_ELEMENTWISE)
    measure_compiled(ctx, {**mk("fwd", "torch_compile", fwd_bytes),
                           "note": "torch.compile(torch.relu(a * b))"},
                     lambda a, b: torch.relu(a * b), (a, b), ref, TOL_F16_ELEMENTWISE)
    measure(ctx, {**mk("fwd", "triton", fwd_bytes), "config": cfg},
            _launch(K.bcast_relu_fwd_kernel, grid, out, a, b, out, m, n, BM=BM, BN=BN,
                    num_warps=8), ref, TOL_F16_ELEMENTWISE, out=out)
    del ref
    # Mask of the forward as computed: the product rounded to f16 (one rounding of an exact
    # value), compared with 0. dC*B is exact in f64.
    mask = prod.to(torch.float16) > 0
    del prod
    ref = torch.where(mask, dc.to(torch.float64) * b.to(torch.float64)[None, :], 0.0)
    del mask
    measure(ctx, {**mk("bwd", "pytorch", bwd_bytes),
                  "note": "torch.where(a * b > 0, dc * b, 0.0)"},
            lambda: torch.where(a * b > 0, dc * b, 0.0), ref, TOL_F16_ELEMENTWISE)
    measure_compiled(ctx, {**mk("bwd", "torch_compile", bwd_bytes),
                           "note": "torch.compile(torch.where(a * b > 0, dc * b, 0.0))"},
                     lambda a, b, dc: torch.where(a * b > 0, dc * b, 0.0), (a, b, dc), ref,
                     TOL_F16_ELEMENTWISE)
    measure(ctx, {**mk("bwd", "triton", bwd_bytes), "config": cfg},
            _launch(K.bcast_relu_bwd_kernel, grid, out, a, b, dc, out, m, n, BM=BM, BN=BN,
                    num_warps=8), ref, TOL_F16_ELEMENTWISE, out=out)
# ANCHOR_END: peers_broadcast_relu


# ANCHOR: peers_row_sum
def ch05_row_sum(ctx, ss):
    m, n = SIZES["05"][ss]["m"], SIZES["05"][ss]["n"]
    g = _generator(ctx, "05", ss)
    a = _uniform(g, (m, n), 0.0, 1.0, torch.float32)  # positive: relative error is meaningful
    ref = a.to(torch.float64).sum(dim=1)
    out = torch.empty((m,), device="cuda", dtype=torch.float32)
    mk = lambda impl: _base("05", "row_sum", impl, ss, f"A[{m},{n}] -> B[{m}]", "f32",
                            bytes=4 * (m * n + m))
    measure(ctx, {**mk("pytorch"), "note": "torch.sum(a, dim=1, out=b)"},
            lambda: torch.sum(a, dim=1, out=out), ref, TOL_ROW_SUM, out=out)
    measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(torch.sum(a, dim=1))"},
                     lambda a: torch.sum(a, dim=1), (a,), ref, TOL_ROW_SUM)
    BLOCK = 2048
    measure(ctx, {**mk("triton"), "config": "BLOCK=2048 num_warps=8"},
            _launch(K.row_sum_kernel, (m,), out, a, out, n, BLOCK=BLOCK, num_warps=8),
            ref, TOL_ROW_SUM, out=out)
# ANCHOR_END: peers_row_sum


# ANCHOR: peers_softmax
def ch06_softmax(ctx, ss):
    m, n = SIZES["06"][ss]["m"], SIZES["06"][ss]["n"]
    g = _generator(ctx, "06", ss)
    a = _uniform(g, (m, n), -4.0, 4.0, torch.float32)
    ref = torch.softmax(a.to(torch.float64), dim=1)
    out = torch.empty_like(a)
    mk = lambda v, impl: _base("06", v, impl, ss, f"[{m},{n}]", "f32", bytes=2 * 4 * m * n)
    measure(ctx, {**mk("softmax", "pytorch"), "note": "torch.softmax(a, dim=1)"},
            lambda: torch.softmax(a, dim=1), ref, TOL_SOFTMAX)
    measure_compiled(ctx, {**mk("softmax", "torch_compile"),
                           "note": "torch.compile(torch.softmax(a, dim=1))"},
                     lambda a: torch.softmax(a, dim=1), (a,), ref, TOL_SOFTMAX)
    BLOCK = 2048
    cfg = "BLOCK=2048 num_warps=8"
    measure(ctx, {**mk("3-pass", "triton"), "config": cfg},
            _launch(K.softmax_3pass_kernel, (m,), out, a, out, n, BLOCK=BLOCK, num_warps=8),
            ref, TOL_SOFTMAX, out=out)
    measure(ctx, {**mk("online", "triton"), "config": cfg},
            _launch(K.softmax_online_kernel, (m,), out, a, out, n, BLOCK=BLOCK, num_warps=8),
            ref, TOL_SOFTMAX, out=out)
# ANCHOR_END: peers_softmax


# ANCHOR: peers_flash
def ch07_flash_attention(ctx, ss):
    m, n = SIZES["07"][ss]["m"], SIZES["07"][ss]["n"]
    g = _generator(ctx, "07", ss)
    q = _uniform(g, (m, n), -2.0, 2.0, torch.float32)
    k = _uniform(g, (m, n), -2.0, 2.0, torch.float32)
    v = _uniform(g, (m, n), -2.0, 2.0, torch.float32)
    ref = torch.softmax(q.to(torch.float64) * k.to(torch.float64), dim=1) * v.to(torch.float64)
    out = torch.empty_like(q)
    mk = lambda var, impl: _base("07", var, impl, ss, f"Q,K,V,O[{m},{n}]", "f32",
                                 bytes=4 * 4 * m * n)
    measure(ctx, {**mk("flash", "pytorch"),
                  "note": "torch.mul(torch.softmax(q * k, dim=1), v, out=o): unfused, S and P "
                          "materialised"},
            lambda: torch.mul(torch.softmax(q * k, dim=1), v, out=out), ref, TOL_SOFTMAX, out=out)
    measure_compiled(ctx, {**mk("flash", "torch_compile"),
                           "note": "torch.compile(torch.softmax(q * k, dim=1) * v)"},
                     lambda q, k, v: torch.softmax(q * k, dim=1) * v, (q, k, v), ref, TOL_SOFTMAX)
    BLOCK = 2048
    cfg = "BLOCK=2048 num_warps=8"
    measure(ctx, {**mk("3-pass", "triton"), "config": cfg},
            _launch(K.flash_3pass_kernel, (m,), out, q, k, v, out, n, BLOCK=BLOCK, num_warps=8),
            ref, TOL_SOFTMAX, out=out)
    measure(ctx, {**mk("2-pass", "triton"), "config": cfg},
            _launch(K.flash_2pass_kernel, (m,), out, q, k, v, out, n, BLOCK=BLOCK, num_warps=8),
            ref, TOL_SOFTMAX, out=out)
# ANCHOR_END: peers_flash


def gemm_tolerance(a64, b64, k):
    """(atol, rtol) of the Rust side (ch08 gemm_tolerance): f32 accumulation bounded by
    K*2^-23*max_i||A[i,:]||*max_j||B[:,j]|| (Higham 3.1, u = 2^-23 also covers truncating
    adders), plus half an f16 ulp for the final rounding."""
    max_row = float((a64 * a64).sum(dim=1).max())
    max_col = float((b64 * b64).sum(dim=0).max())
    e = k * 2.0 ** -23 * math.sqrt(max_row * max_col)
    return 1.001 * e + 2.0 ** -25, 2.0 ** -11


# GEMM configs, chosen by hand for Hopper (no autotuning). Shared memory per stage is
# (BM*BK + BK*BN) * 2 bytes; all fit the H200's 227 KB with their stage counts.
GEMM_CONFIGS = [
    # 128x256 tile, 8 warps (two warpgroups), 3 stages: 144 KB of shared memory.
    dict(BM=128, BN=256, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
    # 128x128 tile, 4 warps (one warpgroup), 4 stages: 128 KB.
    dict(BM=128, BN=128, BK=64, GROUP_M=8, num_warps=4, num_stages=4),
    # 256x128 tile, 8 warps, 3 stages: 144 KB.
    dict(BM=256, BN=128, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
]

# W4A16 configs (BNP packed bytes = BN/2 output columns per tile), chosen from a small sweep
# on the H200 (no autotuning). Per stage: A tile BM*BK*2 bytes + packed tile BK*BNP bytes,
# plus the unpacked f16 B tile that tl.dot reads from shared memory.
W4A16_CONFIGS = [
    # 128 x 128 outputs, 4 warps (one warpgroup), 4 stages: the fastest in the sweep.
    dict(BM=128, BNP=64, BK=64, GROUP_M=8, num_warps=4, num_stages=4),
    # 128 x 128 outputs, 8 warps, 4 stages.
    dict(BM=128, BNP=64, BK=64, GROUP_M=8, num_warps=8, num_stages=4),
    # 128 x 256 outputs, 8 warps, 3 stages (the GEMM's first config).
    dict(BM=128, BNP=128, BK=64, GROUP_M=8, num_warps=8, num_stages=3),
]


def _cfg_str(cfg):
    return " ".join(f"{k}={v}" for k, v in cfg.items())


# ANCHOR: peers_gemm
def ch08_gemm(ctx, ss):
    m, n, k = (SIZES["08"][ss][x] for x in "mnk")
    g = _generator(ctx, "08", ss)
    a = _uniform(g, (m, k), -1.0, 1.0, torch.float16)
    b = _uniform(g, (k, n), -1.0, 1.0, torch.float16)
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    ref = a64 @ b64
    atol, rtol = gemm_tolerance(a64, b64, k)
    del a64, b64
    tol = dict(atol=atol, rtol=rtol, cap=GEMM_CAP)
    out = torch.empty((m, n), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base("08", "gemm", impl, ss, f"M={m} N={n} K={k}",
                            "f16 in/out, f32 accumulate", flops=2 * m * n * k)
    measure(ctx, {**mk("pytorch"),
                  "note": "torch.matmul(a, b, out=c) (cuBLAS), fp16 reduced-precision "
                          "reduction disabled"},
            lambda: torch.matmul(a, b, out=out), ref, tol, out=out)
    measure_compiled(ctx, {**mk("torch_compile"),
                           "note": "torch.compile(torch.matmul(a, b)); max-autotune picks among "
                                   "cuBLAS and inductor's Triton GEMM templates"},
                     lambda a, b: torch.matmul(a, b), (a, b), ref, tol)
    for cfg in GEMM_CONFIGS:
        meta = dict(cfg)
        grid = (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)
        meta["EVEN_K"] = k % meta["BK"] == 0
        measure(ctx, {**mk("triton"), "config": _cfg_str(cfg)},
                _launch(K.gemm_kernel, grid, out, a, b, out, m, n, k, **meta), ref, tol, out=out)
# ANCHOR_END: peers_gemm


# ANCHOR: peers_conv1d
def ch09_conv1d(ctx, ss):
    s = SIZES["09"][ss]
    kw, pad, f = s["kw"], s["kw"] // 2, s["f"]
    g = _generator(ctx, "09", ss)

    def reference(x64, w64):  # x64 [N, L], w64 [KW, F] -> [N, L, F], zero padding
        nn, ll = x64.shape
        xp = torch.nn.functional.pad(x64, (pad, pad))
        o = torch.zeros((nn, ll, w64.shape[1]), device="cuda", dtype=torch.float64)
        for t in range(kw):
            o += xp[:, t:t + ll, None] * w64[t][None, None, :]
        return o

    def tolerance(x64, w64):  # Rust ch09 conv_tolerance
        e = kw * 2.0 ** -23 * float(x64.abs().max()) * float(w64.abs().sum(dim=0).max())
        return dict(atol=1.001 * e + 2.0 ** -25, rtol=2.0 ** -11, cap=CONV_CAP)

    # Single filter: X [N, L], W [KW] -> O [N, L].
    sn, sl = s["sn"], s["sl"]
    x = _uniform(g, (sn, sl), -1.0, 1.0, torch.float16)
    w = _uniform(g, (kw,), -1.0, 1.0, torch.float16)
    x64, w64 = x.to(torch.float64), w.to(torch.float64)[:, None]
    ref = reference(x64, w64)[:, :, 0]
    tol = tolerance(x64, w64)
    del x64
    out = torch.empty((sn, sl), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base("09", "single", impl, ss, f"X[{sn},{sl}] W[{kw}] -> O[{sn},{sl}]",
                            "f16 in/out, f32 accumulate", bytes=2 * (2 * sn * sl + kw))
    w_torch = w.view(1, 1, kw)
    measure(ctx, {**mk("pytorch"), "note": f"F.conv1d(x[:, None], w[1,1,{kw}], padding={pad})"},
            lambda: F.conv1d(x[:, None, :], w_torch, padding=pad)[:, 0, :], ref, tol)
    measure_compiled(ctx, {**mk("torch_compile"),
                           "note": f"torch.compile(F.conv1d(x[:, None], w[1,1,{kw}], "
                                   f"padding={pad})[:, 0])"},
                     lambda x, w: F.conv1d(x[:, None, :], w, padding=pad)[:, 0, :],
                     (x, w_torch), ref, tol)
    BL = 1024
    measure(ctx, {**mk("triton"), "config": "BL=1024 num_warps=4"},
            _launch(K.conv1d_single_kernel, (triton.cdiv(sl, BL), sn), out, x, w, out, sl,
                    KW=kw, BL=BL, num_warps=4), ref, tol, out=out)
    del ref, out, x

    # Multi filter: X [N, L], W [KW, F] -> O [N, L, F] (channel-last).
    mn, ml = s["mn"], s["ml"]
    x = _uniform(g, (mn, ml), -1.0, 1.0, torch.float16)
    w = _uniform(g, (kw, f), -1.0, 1.0, torch.float16)
    x64, w64 = x.to(torch.float64), w.to(torch.float64)
    ref = reference(x64, w64)
    tol = tolerance(x64, w64)
    del x64, w64
    out = torch.empty((mn, ml, f), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base("09", "multi", impl, ss,
                            f"X[{mn},{ml}] W[{kw},{f}] -> O[{mn},{ml},{f}]",
                            "f16 in/out, f32 accumulate",
                            bytes=2 * (mn * ml + kw * f + mn * ml * f))
    w_torch = w.t().contiguous().view(f, 1, kw)  # conv1d weight [out_ch, in_ch, width]

    def torch_multi():
        y = F.conv1d(x[:, None, :], w_torch, padding=pad)  # [N, F, L], channel-first
        return out.copy_(y.permute(0, 2, 1))  # to the channel-last layout of the semantics

    measure(ctx, {**mk("pytorch"),
                  "note": "F.conv1d (channel-first [N,F,L]) + copy to channel-last O[N,L,F]"},
            torch_multi, ref, tol, out=out)
    # Functional: the channel-last result must be materialised (.contiguous()), as eager's
    # copy into O does; a permuted view would skip the layout change the semantics ask for.
    measure_compiled(ctx, {**mk("torch_compile"),
                           "note": "torch.compile(F.conv1d(..).permute(0, 2, 1).contiguous())"},
                     lambda x, w: F.conv1d(x[:, None, :], w, padding=pad).permute(0, 2, 1)
                     .contiguous(), (x, w_torch), ref, tol)
    BL = 128
    measure(ctx, {**mk("triton"), "config": "BL=128 num_warps=4"},
            _launch(K.conv1d_multi_kernel, (triton.cdiv(ml, BL), mn), out, x, w, out, ml,
                    KW=kw, F=f, BL=BL, num_warps=4), ref, tol, out=out)
# ANCHOR_END: peers_conv1d


# ANCHOR: peers_w4a16
def ch10_w4a16(ctx, ss):
    m, n, k = (SIZES["10"][ss][x] for x in "mnk")
    assert n % 2 == 0
    g = _generator(ctx, "10", ss)
    a = _uniform(g, (m, k), -1.0, 1.0, torch.float16)
    bp = _bytes_rand(g, (k, n // 2))
    # The format: B[k, 2j] = (p & 0xF) - 8, B[k, 2j+1] = ((p >> 4) & 0xF) - 8.
    lo = (bp & 0xF).to(torch.float64) - 8.0
    hi = ((bp >> 4) & 0xF).to(torch.float64) - 8.0
    b64 = torch.stack((lo, hi), dim=-1).reshape(k, n)
    del lo, hi
    a64 = a.to(torch.float64)
    ref = a64 @ b64
    atol, rtol = gemm_tolerance(a64, b64, k)
    del a64, b64
    tol = dict(atol=atol, rtol=rtol, cap=W4A16_CAP)
    out = torch.empty((m, n), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base("10", "w4a16", impl, ss, f"M={m} N={n} K={k}",
                            "A f16, Bp u8 [K,N/2]; f32 accumulate; C f16", flops=2 * m * n * k)

    def torch_w4a16():
        # Dequantize then matmul. For u8, p >> 4 is already (p >> 4) & 0xF.
        w = torch.stack((bp & 0xF, bp >> 4), dim=-1).view(k, n)
        w = w.to(torch.float16).sub_(8.0)
        return torch.matmul(a, w, out=out)

    measure(ctx, {**mk("pytorch"),
                  "note": "dequantize (stack nibbles, to f16, -8) then torch.matmul(out=c)"},
            torch_w4a16, ref, tol, out=out)

    def w4a16_functional(a, bp):
        w = torch.stack((bp & 0xF, bp >> 4), dim=-1).reshape(k, n)
        return torch.matmul(a, w.to(torch.float16) - 8.0)

    measure_compiled(ctx, {**mk("torch_compile"),
                           "note": "torch.compile(dequantize (stack nibbles, to f16, -8) then "
                                   "torch.matmul)"},
                     w4a16_functional, (a, bp), ref, tol)
    for cfg in W4A16_CONFIGS:
        meta = dict(cfg)
        grid = (triton.cdiv(m, meta["BM"]) * triton.cdiv(n // 2, meta["BNP"]),)
        meta["EVEN_K"] = k % meta["BK"] == 0
        measure(ctx, {**mk("triton"), "config": _cfg_str(cfg)},
                _launch(K.w4a16_kernel, grid, out, a, bp, out, m, n, k, **meta),
                ref, tol, out=out)
# ANCHOR_END: peers_w4a16


CHAPTER_FNS = {
    "01": ch01_copy, "02": ch02_vector_add, "03": ch03_outer_add, "04": ch04_broadcast_relu,
    "05": ch05_row_sum, "06": ch06_softmax, "07": ch07_flash_attention, "08": ch08_gemm,
    "09": ch09_conv1d, "10": ch10_w4a16,
}


# --------------------------------------------------------------------------------------------
# Launch overhead
# --------------------------------------------------------------------------------------------

def _host_us_per_call(step, calls, trials):
    """Host wall time of `calls` back-to-back step() plus one synchronize, in µs per call."""
    out = []
    for _ in range(trials):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return out


def _capture(fn, count):
    """A CUDA graph of `count` back-to-back fn() (warmed up on a side stream first)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(count):
            fn()
    torch.cuda.synchronize()
    return graph


def launch_overhead(ctx, calls=10000, trials=7, batch=100):
    x = torch.full((1,), 1.5, device="cuda", dtype=torch.float32)
    y = torch.full((1,), 2.25, device="cuda", dtype=torch.float32)
    out = torch.empty((1,), device="cuda", dtype=torch.float32)
    impls = {
        "pytorch": lambda: torch.add(x, y, out=out),
        "triton": lambda: K.add_one_kernel[(1,)](x, y, out),
    }
    compiled_add = None
    if "torch_compile" in ctx.impls:
        # torch.compile's per-call cost (guards, wrapper) on the same add, eager variant only.
        def add_into(x, y, out):
            return out.copy_(x + y)

        torch._dynamo.reset()
        compiled_add = torch.compile(add_into, fullgraph=True, dynamic=False, mode=COMPILE_MODE)
        impls["torch_compile"] = lambda: compiled_add(x, y, out)
    for impl, fn in impls.items():
        if impl not in ctx.impls:
            continue
        variants = [
            ("eager", "N back-to-back launches, then synchronize", lambda: (fn, 1)),
            ("graph_replay", "CUDA graph of 1 launch, replayed N times",
             lambda: (_capture(fn, 1).replay, 1)),
            (f"graph_x{batch}", f"CUDA graph of {batch} launches, replayed; per kernel",
             lambda: (_capture(fn, batch).replay, batch)),
        ]
        if impl == "torch_compile":
            variants = variants[:1]
        for variant, note, make in variants:
            rec = {"record": "launch", "chapter": "launch", "variant": variant, "impl": impl,
                   "size_set": "tiny", "shape": "1 element", "dtype": "f32", "note": note,
                   "config": None, "bytes": None, "flops": None, "median_ms": None,
                   "passed": False, "error": None, "seed": ctx.seed}
            if impl == "torch_compile":
                rec.update(mode=COMPILE_MODE, fullgraph=True, dynamic=False,
                           note=note + "; torch.compile(out.copy_(x + y))")
            try:
                fn()  # compile / warm
                torch.cuda.synchronize()
                step, per = make()
                out.fill_(float("nan"))
                step()
                torch.cuda.synchronize()
                got = float(out[0])
                rec["passed"] = got == 3.75
                if not rec["passed"]:
                    rec["error"] = f"1.5 + 2.25 gave {got}"
                n_calls = max(1, calls // per)
                _host_us_per_call(step, max(1, n_calls // 10), 1)  # warm-up trial
                us = [t / per for t in _host_us_per_call(step, n_calls, trials)]
                rec.update(us_per_launch=statistics.median(us), min_us=min(us), max_us=max(us),
                           launches_per_trial=n_calls * per, trials=trials)
            except Exception as e:
                rec["passed"] = False
                rec["error"] = f"{type(e).__name__}: {e}"
                traceback.print_exc(file=sys.stderr)
            ctx.records.append(rec)
            status = "ok  " if rec["passed"] else "FAIL"
            us = rec.get("us_per_launch")
            _log(f"{status} launch {variant:<12} {impl:<8} "
                 f"{(f'{us:.2f} us/launch' if us is not None else '')} {rec['error'] or ''}")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def _import_gpu_libs():
    global torch, F, triton, tl
    import torch as _torch
    import torch._dynamo  # noqa: F401  (torch.compile's frontend and its config)
    import torch._inductor.config  # noqa: F401
    import torch.nn.functional as _F
    import triton as _triton
    import triton.language as _tl
    import triton.testing  # noqa: F401  (do_bench)
    torch, F, triton, tl = _torch, _F, _triton, _tl


def _configure_compile():
    """Dynamo and inductor settings for the torch_compile records; returns them for the header.

    * Recompiles never happen inside a timing (measure_compiled resets dynamo before each
      compile and times under error_on_recompile); the cache limits are raised anyway, so
      that no limit can send a frame back to eager, and automatic dynamic shapes are off (with
      dynamic=False every shape is compiled static).
    * suppress_errors off: a compile error is raised (and recorded), never run eagerly instead.
    * inductor's emulate_precision_casts on: eager PyTorch rounds every f16 op's result to f16,
      and the semantics here are eager's (04's backward tests the forward's product *as rounded
      to f16* against 0); a fused kernel would otherwise keep the intermediates in f32 and
      compute a different function on the few elements where rounding decides.
    """
    dyn = torch._dynamo.config
    ind = torch._inductor.config
    settings = {}

    def put(mod, prefix, name, value):
        if hasattr(mod, name):
            setattr(mod, name, value)
            settings[f"{prefix}.{name}"] = value

    for name in ("recompile_limit", "cache_size_limit"):
        put(dyn, "torch._dynamo.config", name, 64)
    for name in ("accumulated_recompile_limit", "accumulated_cache_size_limit"):
        put(dyn, "torch._dynamo.config", name, 4096)
    put(dyn, "torch._dynamo.config", "automatic_dynamic_shapes", False)
    put(dyn, "torch._dynamo.config", "suppress_errors", False)
    put(ind, "torch._inductor.config", "emulate_precision_casts", True)
    return {"mode": COMPILE_MODE, "fallback_mode": COMPILE_FALLBACK_MODE, "fullgraph": True,
            "dynamic": False, "compiled": "the eager implementation in functional form, "
            "compiled once per (kernel, shape) before timing", "settings": settings}


def _driver_version():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 else None
    except Exception:
        return None


def _header(ctx, args, chapters, size_sets):
    props = torch.cuda.get_device_properties(0)
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "record": "header",
        "gpu": torch.cuda.get_device_name(0),
        "driver": _driver_version(),
        "cuda_runtime": torch.version.cuda,
        "cudnn": cudnn,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "host": platform.node(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv,
        "seed": ctx.seed,
        "chapters": chapters,
        "size_sets": size_sets,
        "sizes": {**{c: {s: SIZES[c][s] for s in size_sets} for c in chapters if c in SIZES},
                  **{c: {s: EX.SIZES[c[3:]][s] for s in size_sets}
                     for c in chapters if c in EXAMPLES}},
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory,
        "timing": (f"triton.testing.do_bench(fn, warmup={ctx.warmup}, rep={ctx.rep}, "
                   "return_mode='all'); median/min/max/p20/p80 over its repetitions; "
                   "do_bench clears L2 by writing a 256 MB buffer before each repetition; "
                   f"FLOP-counted rows: warmup and rep at least {ctx.sustain} ms (sustained "
                   "clocks)"),
        "sustain_ms": ctx.sustain,
        "bytes_and_flops": "bytes: each input read once + each output written once; "
                           "flops: 2*M*N*K",
        "impls": ctx.impls,
        "torch_compile": ctx.compile_settings,
        "settings": {
            "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
                torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
            "torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        },
    }


def _json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def _parse_only(text):
    if not text:
        return CHAPTERS + EXAMPLES + ["launch"]
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        if part.startswith("ex:"):
            part = part[3:]
        if part == "launch":
            out.append("launch")
        elif part.isdigit() and 1 <= int(part) <= 10:
            out.append(f"{int(part):02d}")
        elif part in ("ex", "examples"):
            out.extend(EXAMPLES)
        elif part in EX.NAMES:
            out.append(f"ex:{part}")
        else:
            raise argparse.ArgumentTypeError(
                f"--only: unknown chapter {part!r} (01-10, launch, ex, {', '.join(EX.NAMES)})")
    return list(dict.fromkeys(out))


def _parse_impls(text):
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace(".", "_").replace("-", "_")
        part = {"torch": "pytorch", "eager": "pytorch", "compile": "torch_compile",
                "inductor": "torch_compile"}.get(part, part)
        if part not in IMPLS and part not in IMPL_FAMILY:
            raise argparse.ArgumentTypeError(
                f"--impls: unknown implementation {part!r} ({', '.join(IMPLS + list(IMPL_FAMILY))})")
        if part not in out:
            out.append(part)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check and time PyTorch (eager and torch.compile) and Triton versions of "
                    "the ten tilelang-rs tutorials (see peers/README.md).")
    ap.add_argument("--only", type=_parse_only, default=None,
                    help="comma-separated chapters, e.g. '08' or '01,02,launch'; 'ex' for the "
                         "examples crate's kernels, or some of them by name ("
                         + ", ".join(EX.NAMES) + ") (default: all, plus launch overhead)")
    ap.add_argument("--impls", type=_parse_impls, default=list(IMPLS),
                    help="comma-separated implementations: pytorch, triton, torch_compile "
                         "(default: all three; torch_compile's compiles take most of the run's "
                         "time, so it may be run on its own); pytorch includes "
                         + ", ".join(IMPL_FAMILY) + ", which may also be named alone")
    ap.add_argument("--sizes", choices=["tutorial", "large", "all"], default="all",
                    help="size sets to run (default: all)")
    ap.add_argument("--seed", type=int, default=None,
                    help="random seed (default: derived from the clock; printed and recorded)")
    ap.add_argument("--out", default=None, help="JSON output path (default: stdout)")
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warmup, ms (default 25)")
    ap.add_argument("--rep", type=int, default=100, help="do_bench rep, ms (default 100)")
    ap.add_argument("--sustain", type=int, default=500,
                    help="FLOP-counted rows: do_bench warmup and rep at least this, ms "
                         "(default 500; sustained clocks)")
    args = ap.parse_args(argv)
    global K

    chapters = args.only or (CHAPTERS + EXAMPLES + ["launch"])
    size_sets = ["tutorial", "large"] if args.sizes == "all" else [args.sizes]
    seed = args.seed if args.seed is not None else int(time.time_ns() % 1_000_000_007)
    ctx = Ctx(seed, args.warmup, args.rep, args.impls, args.sustain)
    ctx.compile_settings = None
    _log(f"seed = {seed}  (replay with --seed {seed})")

    records = []
    try:
        _import_gpu_libs()
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device visible to torch")
        K = _define_kernels()
        # The semantics say f32 accumulation: keep cuBLAS from reducing f16 GEMMs in f16.
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        if "torch_compile" in ctx.impls:
            ctx.compile_settings = _configure_compile()
        header = _header(ctx, args, chapters, size_sets)
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        header = {"record": "header", "error": f"{type(e).__name__}: {e}", "seed": seed,
                  "argv": sys.argv}
        _write([header], args.out)
        return 2
    _log(f"{header['gpu']}, driver {header['driver']}, torch {header['torch']}, "
         f"triton {header['triton']}")

    if "launch" in chapters:
        launch_overhead(ctx)
    for ch in chapters:
        if ch == "launch":
            continue
        for ss in size_sets:
            try:
                if ch in EXAMPLES:
                    EX.run(sys.modules[__name__], ctx, ch[3:], ss)
                else:
                    CHAPTER_FNS[ch](ctx, ss)
            except Exception as e:  # setup failed (e.g. out of memory): record, go on
                traceback.print_exc(file=sys.stderr)
                chapter, variant = (EX.CHAPTER, ch[3:]) if ch in EXAMPLES else (ch, "*")
                ctx.records.append({"record": "kernel", "chapter": chapter, "variant": variant,
                                    "impl": "*", "size_set": ss, "passed": False,
                                    "error": f"{type(e).__name__}: {e}", "seed": seed})
                _log(f"FAIL {ch} {ss}: {type(e).__name__}: {e}")
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    records = [header] + ctx.records
    _write(records, args.out)
    failed = [r for r in ctx.records if not r.get("passed")]
    _log(f"{len(ctx.records)} records, {len(failed)} failed; seed {seed}")
    return 1 if failed else 0


def _write(records, path):
    text = json.dumps(_json_safe(records), indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    sys.exit(main())
