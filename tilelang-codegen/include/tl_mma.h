// tl_mma.h: matrix products on every target's FMA units and on NVIDIA's tensor cores through
// mma.sync and ldmatrix (sm_80 on; emulated on the host), and the order in which persistent
// blocks walk a grid's tiles.
#pragma once

#include "tl_copy.h"

namespace tl {
// ---- matrix products ----------------------------------------------------------------------------
// Element (i, k) of A (M×K) and (k, j) of B (K×N) in their tiles: row-major, or stored
// transposed when the operand is marked `.t()` (TA: A stored K×M; TB: B stored N×K).
template <bool TA, int M, int K> TL_DEVICE constexpr int a_at(int i, int k) {
  return TA ? k * M + i : i * K + k;
}
template <bool TB, int K, int N> TL_DEVICE constexpr int b_at(int k, int j) {
  return TB ? j * K + k : k * N + j;
}

// The offsets of A(i, k) and B(k, j) in swizzled tiles (`sidx`) of their stored shapes. (Only
// the stored orientation's `sidx` is instantiated: the other may not be a valid tile.)
template <bool SW, bool TA, int M, int K> TL_DEVICE int sidx_a(int i, int k) {
  if constexpr (TA)
    return sidx<SW, M>(k, i);
  else
    return sidx<SW, K>(i, k);
}
template <bool SW, bool TB, int K, int N> TL_DEVICE int sidx_b(int k, int j) {
  if constexpr (TB)
    return sidx<SW, K>(j, k);
  else
    return sidx<SW, N>(k, j);
}

// FMA path: acc (M×N, owned by threads in the strided layout: element L = reg·THREADS + tid)
// += A (M×K, shared) · B (K×N, shared), in increasing k, products rounded to the acc type.
template <class A, class C, int M, int N, int K, int THREADS, int NREG, bool TA = false,
          bool TB = false>
TL_DEVICE void gemm_fma(const A* __restrict__ a, const A* __restrict__ b, C* acc) {
#pragma unroll
  for (int r = 0; r < NREG; ++r) {
    const int L = r * THREADS + TL_TID;
    if (L < M * N) {
      const int i = L / N, j = L % N;
      C x = acc[r];
      for (int k = 0; k < K; ++k)
        x = add(x, mul(cast<C>(a[a_at<TA, M, K>(i, k)]), cast<C>(b[b_at<TB, K, N>(k, j)])));
      acc[r] = x;
    }
  }
}

// FMA path with the accumulator in shared memory (when it is also read in other layouts).
template <class A, class C, int M, int N, int K, int THREADS, bool TA = false, bool TB = false>
TL_DEVICE void gemm_fma_shared(const A* __restrict__ a, const A* __restrict__ b, C* acc) {
  for (int e = TL_TID; e < M * N; e += THREADS) {
    const int i = e / N, j = e % N;
    C x = acc[e];
    for (int k = 0; k < K; ++k)
      x = add(x, mul(cast<C>(a[a_at<TA, M, K>(i, k)]), cast<C>(b[b_at<TB, K, N>(k, j)])));
    acc[e] = x;
  }
}

// Two 16-bit values as one 32-bit word, `lo` in the low half (a matrix-unit register).
template <class T> TL_DEVICE uint32_t pack2(T lo, T hi) {
  union {
    T h[2];
    uint32_t u;
  } p;
  p.h[0] = lo;
  p.h[1] = hi;
  return p.u;
}

// BEGIN register operand
// mma.sync's accumulator as the A operand of the next product (gemm_mma_rs): the accumulator
// register, in a tile laid out over KT = K / 8 column tiles, of the first of the pair that A
// operand register i (0..3) of m-tile mt and k-step kk packs. m16n8k16's A registers hold row
// g, k 2t and 2t + 1; row g + 8, the same k; row g, k 2t + 8 and 2t + 9; row g + 8, those (PTX
// ISA, "Matrix Fragments for mma.m16n8k16"): the accumulator pairs of column tiles 2·kk and
// 2·kk + 1, rows g and g + 8. (Pure: tests/layouts.rs checks it on the host.)
TL_DEVICE constexpr int mma_a_reg(int KT, int mt, int kk, int i) {
  return (mt * KT + 2 * kk + i / 2) * 4 + 2 * (i % 2);
}
// END register operand

#if defined(TL_NVIDIA)
// Tensor cores: mma.sync.m16n8k16, f16/bf16 inputs, f32 accumulators. The block's warps form a
// WM × WN grid; warp (wm, wn) owns rows [wm·M/WM, +M/WM) and columns [wn·N/WN, +N/WN) of the
// tile, as MT × NT mma tiles of 16×8. Register r of a thread holds accumulator element
// (mt, nt, q) with r = (mt·NT + nt)·4 + q, at row 16·mt + g + 8·(q / 2) and column
// 8·nt + 2·t + q % 2 of the warp's tile (g = lane / 4, t = lane % 4), as in the PTX ISA.
template <class T> struct mma_op;
template <> struct mma_op<half> {
  TL_DEVICE static void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <> struct mma_op<bfloat> {
  TL_DEVICE static void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// ldmatrix: 8×8 matrices of 16-bit values from shared memory, one 32-bit register per matrix
// per lane. Lane l supplies the address of row l % 8 of matrix l / 8 (16 contiguous bytes,
// 16-byte aligned); lane (g = l / 4, t = l % 4) receives row g, columns 2t and 2t + 1 of each
// matrix, or with `.trans` row 2t and 2t + 1 of column g (PTX ISA, "ldmatrix").
TL_DEVICE void ldmatrix_x4(uint32_t* r, const void* p) {
  const uint32_t s = smem_addr(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
TL_DEVICE void ldmatrix_x4_trans(uint32_t* r, const void* p) {
  const uint32_t s = smem_addr(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
// Two matrices: lanes 0-15 supply the addresses (the others' are ignored but must be valid).
TL_DEVICE void ldmatrix_x2(uint32_t* r, const void* p) {
  const uint32_t s = smem_addr(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(s));
}
TL_DEVICE void ldmatrix_x2_trans(uint32_t* r, const void* p) {
  const uint32_t s = smem_addr(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(s));
}

// B's k16n8 fragments of NT column tiles from column n0, k-step k0, by ldmatrix: matrix mj
// of an .x4 is (k 0-7 | 8-15) of tile nt + mj / 2, so that a lane holds the k-pairs of its
// column (the lane addresses row mi of matrix mj); read as stored when B is stored (N, K)
// (TB), else with `.trans`.
template <class T, int N, int K, int NT, bool SWB, bool TB>
TL_DEVICE void ldmatrix_b(uint32_t (*bf)[2], const T* __restrict__ b, int k0, int n0, int mi,
                          int mj) {
  const int kk = k0 + 8 * (mj % 2);
#pragma unroll
  for (int nt = 0; nt + 1 < NT; nt += 2) {
    uint32_t r[4];
    const int n = n0 + (nt + mj / 2) * 8;
    if constexpr (TB)
      ldmatrix_x4(r, b + sidx<SWB, K>(n + mi, kk));
    else
      ldmatrix_x4_trans(r, b + sidx<SWB, N>(kk + mi, n));
    bf[nt][0] = r[0];
    bf[nt][1] = r[1];
    bf[nt + 1][0] = r[2];
    bf[nt + 1][1] = r[3];
  }
  if constexpr (NT % 2 == 1) {
    const int n = n0 + (NT - 1) * 8;
    if constexpr (TB)
      ldmatrix_x2(bf[NT - 1], b + sidx<SWB, K>(n + mi, kk));
    else
      ldmatrix_x2_trans(bf[NT - 1], b + sidx<SWB, N>(kk + mi, n));
  }
}

// One k-step of 16 of gemm_mma with operands fetched by ldmatrix: A's m16k16 fragment is the
// four 8×8 matrices (rows 0-7 | 8-15) × (k 0-7 | 8-15) of the tile, in the order of the mma
// operand registers; B's k16n8 fragment is (k 0-7 | 8-15) of 8 columns, so that a lane holds the
// k-pairs of its column. An operand whose stored rows run along M or N (A row-major, B marked
// `.t()`: stored N×K) is read as stored; one whose stored rows run along K (B row-major, A
// marked `.t()`: stored K×M) with `.trans`. Needs stored rows of multiples of 8 (16 bytes).
template <class T, int M, int N, int K, int WM, int WN, bool SWA, bool SWB, bool TA, bool TB>
TL_DEVICE void gemm_mma_ldmatrix(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  constexpr int TM = M / WM, TN = N / WN, MT = TM / 16, NT = TN / 8;
  const int lane = TL_TID % 32, warp = TL_TID / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int mi = lane % 8, mj = lane / 8;  // the row this lane addresses, of matrix mj
  for (int k0 = 0; k0 < K; k0 += 16) {
    uint32_t af[MT][4];
    uint32_t bf[NT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      // matrix mj: rows + 8·(mj % 2), k + 8·(mj / 2)
      const int m0 = wm * TM + mt * 16 + 8 * (mj % 2), kk = k0 + 8 * (mj / 2);
      if constexpr (TA)
        ldmatrix_x4_trans(af[mt], a + sidx<SWA, M>(kk + mi, m0));
      else
        ldmatrix_x4(af[mt], a + sidx<SWA, K>(m0 + mi, kk));
    }
    ldmatrix_b<T, N, K, NT, SWB, TB>(bf, b, k0, wn * TN, mi, mj);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_op<T>::run(acc + (mt * NT + nt) * 4, af[mt], bf[nt]);
  }
}

// acc (the mma layout above) += A (M×K) · B (K×N), both in shared memory as the block tiles,
// row-major, or stored transposed where TA / TB (`.t()`: A stored K×M, B stored N×K); the block
// is WM·WN warps. Operands are fetched with ldmatrix when the rows allow it (16-byte rows,
// 16-byte aligned shared memory: a check uniform over the block), else element by element.
// SWA / SWB: the operand is a swizzled tile (see `swz`), of its stored shape.
template <class T, int M, int N, int K, int WM, int WN, bool SWA = false, bool SWB = false,
          bool TA = false, bool TB = false>
TL_DEVICE void gemm_mma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  constexpr int TM = M / WM, TN = N / WN, MT = TM / 16, NT = TN / 8;
  // The stored row lengths.
  constexpr int RA = TA ? M : K, RB = TB ? K : N;
  if constexpr ((SWA || SWB) && RA % 8 == 0 && RB % 8 == 0) {
    // The emitter swizzles only shared tiles at 16-byte aligned offsets, and gemm operands are
    // always shared: no check needed.
    gemm_mma_ldmatrix<T, M, N, K, WM, WN, SWA, SWB, TA, TB>(a, b, acc);
    return;
  } else if constexpr (RA % 8 == 0 && RB % 8 == 0 && sizeof(T) == 2) {
    const bool ok = __isShared(a) && __isShared(b) &&
                    ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) & 15) == 0;
    if (ok) {
      gemm_mma_ldmatrix<T, M, N, K, WM, WN, SWA, SWB, TA, TB>(a, b, acc);
      return;
    }
  }
  const int lane = TL_TID % 32, warp = TL_TID / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int g = lane / 4, t = lane % 4;
  const auto A = [&](int r, int c) { return a[sidx_a<SWA, TA, M, K>(r, c)]; };
  const auto B = [&](int r, int c) { return b[sidx_b<SWB, TB, K, N>(r, c)]; };
  for (int k0 = 0; k0 < K; k0 += 16) {
    uint32_t af[MT][4];
    uint32_t bf[NT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int r0 = wm * TM + mt * 16 + g, c0 = k0 + 2 * t;
      af[mt][0] = pack2(A(r0, c0), A(r0, c0 + 1));
      af[mt][1] = pack2(A(r0 + 8, c0), A(r0 + 8, c0 + 1));
      af[mt][2] = pack2(A(r0, c0 + 8), A(r0, c0 + 9));
      af[mt][3] = pack2(A(r0 + 8, c0 + 8), A(r0 + 8, c0 + 9));
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int r0 = k0 + 2 * t, c0 = wn * TN + nt * 8 + g;
      bf[nt][0] = pack2(B(r0, c0), B(r0 + 1, c0));
      bf[nt][1] = pack2(B(r0 + 8, c0), B(r0 + 9, c0));
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_op<T>::run(acc + (mt * NT + nt) * 4, af[mt], bf[nt]);
  }
}


// acc += A·B with A in registers (issue 39: a softmax's P feeding P·V): A (M×K, 16-bit) is
// laid out as an mma.sync accumulator of this block's WM × 1 warps over K columns, register
// (mt·KT + j)·4 + q holding row 16·mt + g + 8·(q / 2), column 8·j + 2·t + q % 2 of its warp's
// rows (KT = K / 8); B is in shared memory as for gemm_mma. For m16n8k16 the accumulator
// elements of column tiles 2·kk and 2·kk + 1 are, packed two by two, exactly the A operand
// of k-step kk (`mma_a_reg`): no shuffle, no shared memory. B by ldmatrix where its rows
// allow (as gemm_mma), else element by element.
template <class T, int M, int N, int K, int WM, int WN, bool SWB = false, bool TB = false>
TL_DEVICE void gemm_mma_rs(const T* __restrict__ p, const T* __restrict__ b, float* acc) {
  static_assert(WN == 1, "a register A needs warps that own whole rows");
  static_assert(K % 16 == 0 && sizeof(T) == 2, "a register A: 16-bit, K a multiple of 16");
  constexpr int TM = M / WM, MT = TM / 16, NT = N / 8, KT = K / 8;
  constexpr int RB = TB ? K : N;
  const int lane = TL_TID % 32;
  const int g = lane / 4, t = lane % 4;
  bool ldm = RB % 8 == 0;
  if constexpr (!SWB && RB % 8 == 0)
    ldm = __isShared(b) && (reinterpret_cast<uintptr_t>(b) & 15) == 0;
  const auto B = [&](int r, int c) { return b[sidx_b<SWB, TB, K, N>(r, c)]; };
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    const int k0 = 16 * kk;
    uint32_t af[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = mma_a_reg(KT, mt, kk, i);
        af[mt][i] = pack2(p[r], p[r + 1]);
      }
    uint32_t bf[NT][2];
    if (ldm) {
      ldmatrix_b<T, N, K, NT, SWB, TB>(bf, b, k0, 0, lane % 8, lane / 8);
    } else {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int r0 = k0 + 2 * t, c0 = nt * 8 + g;
        bf[nt][0] = pack2(B(r0, c0), B(r0 + 1, c0));
        bf[nt][1] = pack2(B(r0 + 8, c0), B(r0 + 9, c0));
      }
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_op<T>::run(acc + (mt * NT + nt) * 4, af[mt], bf[nt]);
  }
}
#endif

#if defined(TL_NVIDIA) || defined(TL_HOST)
// The (row, col) in the block tile of accumulator register r (see gemm_mma).
template <int M, int N, int WM, int WN>
TL_DEVICE void mma_coord(int r, int& row, int& col) {
  constexpr int TM = M / WM, TN = N / WN, NT = TN / 8;
  const int lane = TL_TID % 32, warp = TL_TID / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int q = r % 4, tile = r / 4, mt = tile / NT, nt = tile % NT;
  row = wm * TM + mt * 16 + lane / 4 + 8 * (q / 2);
  col = wn * TN + nt * 8 + 2 * (lane % 4) + (q % 2);
}
#endif
#if defined(TL_HOST)
// Host emulation of gemm_mma (NVIDIA sources on tl_host.h): each thread computes the
// accumulator elements mma.sync's layout gives it (`mma_coord`), exact products summed in
// increasing k in f32, the operands read where `sidx` stores them.
template <class T, int M, int N, int K, int WM, int WN, bool SWA = false, bool SWB = false,
          bool TA = false, bool TB = false>
TL_DEVICE void gemm_mma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(TL_WAVE == 32, "mma.sync: emulate NVIDIA sources with TL_WAVE=32");
  constexpr int REGS = (M / WM) * (N / WN) / 32;
  for (int r = 0; r < REGS; ++r) {
    int row, col;
    mma_coord<M, N, WM, WN>(r, row, col);
    float d = acc[r];
    for (int k = 0; k < K; ++k)
      d += to_float(a[sidx_a<SWA, TA, M, K>(row, k)]) * to_float(b[sidx_b<SWB, TB, K, N>(k, col)]);
    acc[r] = d;
  }
}
// Host emulation of gemm_mma_rs: each thread computes its accumulator elements from A(row, k),
// fetched from the quad lane whose register holds it (tl::shfl_xor), and B where `sidx`
// stores it. (It checks the layout A is held in; the packing into mma operands, `mma_a_reg`,
// tests/layouts.rs checks against the PTX ISA's fragment.)
template <class T, int M, int N, int K, int WM, int WN, bool SWB = false, bool TB = false>
TL_DEVICE void gemm_mma_rs(const T* __restrict__ p, const T* __restrict__ b, float* acc) {
  static_assert(TL_WAVE == 32, "mma.sync: emulate NVIDIA sources with TL_WAVE=32");
  static_assert(WN == 1, "a register A needs warps that own whole rows");
  constexpr int REGS = (M / WM) * N / 32, NT = N / 8, KT = K / 8;
  const int lane = TL_TID % 32, g = lane / 4;
  for (int r = 0; r < REGS; ++r) {
    int row, col;
    mma_coord<M, N, WM, WN>(r, row, col);
    const int mt = r / 4 / NT, h = r % 4 / 2;
    float d = acc[r];
    for (int k = 0; k < K; ++k) {
      const int src = 4 * g + k % 8 / 2;
      const T a = shfl_xor(p[(mt * KT + k / 8) * 4 + 2 * h + k % 2], lane ^ src);
      d += to_float(a) * to_float(b[sidx_b<SWB, TB, K, N>(k, col)]);
    }
    acc[r] = d;
  }
}
#endif

// ---- persistent blocks --------------------------------------------------------------------------
// The block indices of tile `t` (0 <= t < gx·gy·gz) of a grid walked by persistent blocks:
// planes of z one after the other; within a plane, groups of G rows (y) whose tiles go column
// (x) by column, the G rows of a column consecutive, so that consecutive tiles share the
// rows of A (y) and the columns of B (x) they read, in the L2. A bijection onto the grid.
// BEGIN raster
#ifndef TL_RASTER
#define TL_RASTER TL_DEVICE
#endif
template <int G>
TL_RASTER void raster(index t, index gx, index gy, index& bx, index& by, index& bz) {
  static_assert(G >= 1, "rows per group");
  const index plane = gx * gy, r = t % plane, span = (index)G * gx, first = r / span * G;
  const index rows = gy - first < G ? gy - first : G;
  bz = t / plane;
  by = first + r % span % rows;
  bx = r % span / rows;
}
// END raster
}  // namespace tl
