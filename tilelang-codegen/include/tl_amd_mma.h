// tl_amd_mma.h: AMD's matrix units, WMMA (RDNA3, RDNA4) and MFMA (CDNA): their register
// layouts, the GEMM built on them and its host emulation.
#pragma once

#include "tl_scalar.h"

namespace tl {
// ---- AMD matrix units: WMMA (RDNA3, RDNA4) and MFMA (CDNA) --------------------------------------
// `gemm` with the f32 accumulator in a matrix-unit layout. As for mma.sync (tl_mma.h), the
// block's waves form a WM × WN grid; wave (wm, wn) owns rows [wm·M/WM, +M/WM) and columns
// [wn·N/WN, +N/WN) of the block tile, as MT × NT instruction tiles of IM × IN. Register r of a
// lane holds element q of the accumulator vector of instruction tile (mt, nt),
// r = (mt·NT + nt)·CE + q. Operands come from shared memory, A row-major (M, K) and B
// row-major (K, N), IK values of k per step. The block has exactly WM·WN waves of WAVE lanes
// (32 for WMMA, 64 for MFMA).
//
// Per-instruction register layouts. `lane` is the lane within its wave; `e` an element of the A
// or B operand vector as the builtin takes it (16-bit values: element 2v is bits [15:0] of VGPR
// v, element 2v+1 bits [31:16]); `q` an element of the f32 C/D vector (VGPR q).
//
//   RDNA3 (gfx11), v_wmma_f32_16x16x16_{f16,bf16}, wave32,
//   __builtin_amdgcn_wmma_f32_16x16x16_{f16,bf16}_w32(16 x 16-bit A, 16 x 16-bit B, 8 x f32 C):
//     A[m][k]: lane with lane % 16 == m, element e == k (all 16 k in one lane; lanes 16-31
//              hold a copy of lanes 0-15)
//     B[k][n]: lane with lane % 16 == n, element e == k (likewise replicated)
//     D[m][n]: lane n + 16·(m % 2), element q == m / 2 (rows interleave between the halves)
//   RDNA4 (gfx12), v_wmma_f32_16x16x16_{f16,bf16}, wave32, no replication,
//   __builtin_amdgcn_wmma_f32_16x16x16_{f16,bf16}_w32_gfx12(8 x 16-bit A, 8 x 16-bit B, 8 x f32 C):
//     A[m][k]: lane m + 16·((k / 4) % 2), element e == 4·(k / 8) + k % 4
//              (lanes 0-15 hold k = 0-3, 8-11; lanes 16-31 hold k = 4-7, 12-15)
//     B[k][n]: lane n + 16·((k / 4) % 2), element e == 4·(k / 8) + k % 4
//     D[m][n]: lane n + 16·(m / 8), element q == m % 8 (rows 0-7 in lanes 0-15, 8-15 in 16-31)
//   CDNA2/CDNA3 (gfx90a, gfx942), v_mfma_f32_32x32x8{f16,bf16_1k} (gfx942 spelling
//   v_mfma_f32_32x32x8_{f16,bf16}), wave64, one block,
//   __builtin_amdgcn_mfma_f32_32x32x8{f16,bf16_1k}(4 x 16-bit A, 4 x 16-bit B, 16 x f32 C,
//                                                  0, 0, 0):
//     A[m][k]: lane m + 32·(k / 4), element e == k % 4
//     B[k][n]: lane n + 32·(k / 4), element e == k % 4
//     D[m][n]: lane n + 32·((m / 4) % 2), element q == 4·(m / 8) + m % 4
//   CDNA2/CDNA3, v_mfma_f32_16x16x16{f16,bf16_1k}, wave64, one block,
//   __builtin_amdgcn_mfma_f32_16x16x16{f16,bf16_1k}(4 x 16-bit A, 4 x 16-bit B, 4 x f32 C,
//                                                   0, 0, 0):
//     A[m][k]: lane m + 16·(k / 4), element e == k % 4
//     B[k][n]: lane n + 16·(k / 4), element e == k % 4
//     D[m][n]: lane n + 16·(m / 4), element q == m % 4
//
// Source: AMD Matrix Instruction Calculator 1.3.2
// (github.com/ROCm/amd_matrix_instruction_calculator,
// `matrix_calculator.py -a RDNA3|RDNA4|CDNA2|CDNA3 -i INSTRUCTION -A|-B|-D --matrix-layout`), which
// tabulates the register layouts of AMD's ISA guides; every lane and element of the four
// instructions (f16 and bf16) was compared with it, and tests/layouts.rs keeps spot checks. The C/D
// mappings also match what others observed on hardware: RDNA3's interleaved rows on gfx1151
// (github.com/ROCm/FlyDSL/pull/485), RDNA4's 8-row halves on gfx1201
// (github.com/ROCm/legacy-rocm-build/issues/6025, github.com/warpfront/hipfire/pull/140).
// Only the m, n and C/D mappings are observable in the product: a permutation of k applied alike to
// A and B leaves A·B unchanged; the k mappings are nonetheless those documented.
//
// The index math is pure (no device state) so that tests/layouts.rs can compile the section between the
// BEGIN/END lines below for the host and check it: each accumulator element is held by exactly one
// (thread, register), and the operand addressing computes A·B under these layouts.
// BEGIN matrix layouts
#ifndef TL_LAYOUT
#define TL_LAYOUT TL_DEVICE constexpr
#endif
namespace mx {
struct rc {
  int row, col;
};

// An instruction: WAVE lanes; tile IM × IN × IK; AE operand elements and CE accumulator elements
// a lane, ROW_ELEMS of them in each row it holds, a row held by ROW_LANES lanes (an aligned
// group; tl_acc_rows.h). a_row(lane) / b_col(lane): the row of A / column of B a lane's
// operand holds; ab_k(lane, e): the k of its element e (the same for A and B); c(lane, q): the
// (row, col) of accumulator element q.
struct Wmma11 {
  static constexpr int WAVE = 32, IM = 16, IN = 16, IK = 16, AE = 16, CE = 8;
  static constexpr int ROW_ELEMS = 1, ROW_LANES = 16;
  TL_LAYOUT static int a_row(int lane) { return lane % 16; }
  TL_LAYOUT static int b_col(int lane) { return lane % 16; }
  TL_LAYOUT static int ab_k(int, int e) { return e; }
  TL_LAYOUT static rc c(int lane, int q) { return rc{2 * q + lane / 16, lane % 16}; }
};
struct Wmma12 {
  static constexpr int WAVE = 32, IM = 16, IN = 16, IK = 16, AE = 8, CE = 8;
  static constexpr int ROW_ELEMS = 1, ROW_LANES = 16;
  TL_LAYOUT static int a_row(int lane) { return lane % 16; }
  TL_LAYOUT static int b_col(int lane) { return lane % 16; }
  TL_LAYOUT static int ab_k(int lane, int e) { return 8 * (e / 4) + 4 * (lane / 16) + e % 4; }
  TL_LAYOUT static rc c(int lane, int q) { return rc{q + 8 * (lane / 16), lane % 16}; }
};
struct Mfma32 {
  static constexpr int WAVE = 64, IM = 32, IN = 32, IK = 8, AE = 4, CE = 16;
  static constexpr int ROW_ELEMS = 1, ROW_LANES = 32;
  TL_LAYOUT static int a_row(int lane) { return lane % 32; }
  TL_LAYOUT static int b_col(int lane) { return lane % 32; }
  TL_LAYOUT static int ab_k(int lane, int e) { return 4 * (lane / 32) + e; }
  TL_LAYOUT static rc c(int lane, int q) {
    return rc{8 * (q / 4) + 4 * (lane / 32) + q % 4, lane % 32};
  }
};
struct Mfma16 {
  static constexpr int WAVE = 64, IM = 16, IN = 16, IK = 16, AE = 4, CE = 4;
  static constexpr int ROW_ELEMS = 1, ROW_LANES = 16;
  TL_LAYOUT static int a_row(int lane) { return lane % 16; }
  TL_LAYOUT static int b_col(int lane) { return lane % 16; }
  TL_LAYOUT static int ab_k(int lane, int e) { return 4 * (lane / 16) + e; }
  TL_LAYOUT static rc c(int lane, int q) { return rc{4 * (lane / 16) + q, lane % 16}; }
};

// The block tile M × N over a WM × WN grid of waves, for instruction I (see the section comment).
template <class I, int M, int N, int WM, int WN>
struct tiling {
  static constexpr int THREADS = WM * WN * I::WAVE;
  static constexpr int TM = M / WM, TN = N / WN, MT = TM / I::IM, NT = TN / I::IN;
  static constexpr int NREG = MT * NT * I::CE;
  static_assert(MT * I::IM * WM == M, "M must split into WM waves of whole instruction tiles");
  static_assert(NT * I::IN * WN == N, "N must split into WN waves of whole instruction tiles");
  static_assert(NREG * THREADS == M * N, "each accumulator element lives in one register");
  // Index in the A tile of element e of thread tid's A operand for m-tile mt, step k0: the
  // tile row-major (M, K), or stored (K, M) when TA (`.t()`).
  template <bool TA = false>
  TL_LAYOUT static int a_index(int tid, int K, int mt, int k0, int e) {
    const int lane = tid % I::WAVE, wm = tid / I::WAVE / WN;
    const int row = wm * TM + mt * I::IM + I::a_row(lane), k = k0 + I::ab_k(lane, e);
    return TA ? k * M + row : row * K + k;
  }
  // Index in the B tile of element e of thread tid's B operand for n-tile nt, step k0: the tile
  // row-major (K, N), or stored (N, K) when TB (`.t()`; K given).
  template <bool TB = false>
  TL_LAYOUT static int b_index(int tid, int nt, int k0, int e, int K = 0) {
    const int lane = tid % I::WAVE, wn = tid / I::WAVE % WN;
    const int k = k0 + I::ab_k(lane, e), col = wn * TN + nt * I::IN + I::b_col(lane);
    return TB ? col * K + k : k * N + col;
  }
  // The (row, col) in the block tile of thread tid's accumulator register r.
  TL_LAYOUT static rc c(int tid, int r) {
    const int lane = tid % I::WAVE, wave = tid / I::WAVE, wm = wave / WN, wn = wave % WN;
    const int q = r % I::CE, t = r / I::CE, mt = t / NT, nt = t % NT;
    const rc p = I::c(lane, q);
    return rc{wm * TM + mt * I::IM + p.row, wn * TN + nt * I::IN + p.col};
  }
};
template <int IM> struct mfma_of;
template <> struct mfma_of<32> {
  typedef Mfma32 type;
};
template <> struct mfma_of<16> {
  typedef Mfma16 type;
};
}  // namespace mx
// END matrix layouts

// The (row, col) in the block tile of accumulator register r (see gemm_wmma, gemm_wmma12,
// gemm_mfma).
template <class I, int M, int N, int WM, int WN>
TL_DEVICE void mx_coord(int r, int& row, int& col) {
  const mx::rc p = mx::tiling<I, M, N, WM, WN>::c(TL_TID, r);
  row = p.row;
  col = p.col;
}
template <int M, int N, int WM, int WN>
TL_DEVICE void wmma_coord(int r, int& row, int& col) {
  mx_coord<mx::Wmma11, M, N, WM, WN>(r, row, col);
}
template <int M, int N, int WM, int WN>
TL_DEVICE void wmma12_coord(int r, int& row, int& col) {
  mx_coord<mx::Wmma12, M, N, WM, WN>(r, row, col);
}
template <int M, int N, int WM, int WN, int IM>
TL_DEVICE void mfma_coord(int r, int& row, int& col) {
  mx_coord<typename mx::mfma_of<IM>::type, M, N, WM, WN>(r, row, col);
}

#if defined(TL_AMD)
namespace mx {
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef _Float16 h8 __attribute__((ext_vector_type(8)));
typedef _Float16 h16 __attribute__((ext_vector_type(16)));
typedef short s4 __attribute__((ext_vector_type(4)));
typedef short s8 __attribute__((ext_vector_type(8)));
typedef short s16 __attribute__((ext_vector_type(16)));
typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f8 __attribute__((ext_vector_type(8)));
typedef float f16 __attribute__((ext_vector_type(16)));
// An operand element as the builtins take it: f16 as _Float16, bf16 as its bits in a short.
TL_DEVICE half raw16(half x) { return x; }
TL_DEVICE short raw16(bfloat x) { return __builtin_bit_cast(short, x); }

// The instruction for (I, element type): operand and accumulator vectors and the builtin. Each
// builtin exists only on its architectures; a body is compiled only where it is used.
template <class I, class T> struct op;
template <> struct op<Wmma11, half> {
  typedef h16 frag;
  typedef f8 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
  }
};
template <> struct op<Wmma11, bfloat> {
  typedef s16 frag;
  typedef f8 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c);
  }
};
template <> struct op<Wmma12, half> {
  typedef h8 frag;
  typedef f8 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
  }
};
template <> struct op<Wmma12, bfloat> {
  typedef s8 frag;
  typedef f8 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, c);
  }
};
template <> struct op<Mfma32, half> {
  typedef h4 frag;
  typedef f16 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
  }
};
template <> struct op<Mfma32, bfloat> {
  typedef s4 frag;
  typedef f16 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
  }
};
template <> struct op<Mfma16, half> {
  typedef h4 frag;
  typedef f4 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
  }
};
template <> struct op<Mfma16, bfloat> {
  typedef s4 frag;
  typedef f4 acc;
  TL_DEVICE static acc run(frag a, frag b, acc c) {
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  }
};

// acc (registers, in tiling<I, M, N, WM, WN>'s layout) += A (M×K, shared) · B (K×N, shared),
// each row-major or stored transposed (TA, TB: `.t()`). Every thread of the block calls it;
// the block has tiling::THREADS threads.
template <class I, class T, int M, int N, int K, int WM, int WN, bool TA, bool TB>
TL_DEVICE void gemm(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  typedef tiling<I, M, N, WM, WN> L;
  typedef op<I, T> O;
  static_assert(K % I::IK == 0, "K must be a multiple of the instruction's K");
#if defined(__HIP_DEVICE_COMPILE__)
  static_assert(I::WAVE == TL_WAVE, "the instruction's wave size is not the target's");
#endif
  const int tid = TL_TID;
  // Two k-steps unrolled, not all: fully unrolled, clang hoists every step's LDS loads and
  // runs out of registers once more than the accumulator is live (the natural attention
  // kernel at D 64 took 256 VGPRs and spilled 172 bytes a lane on gfx1100, 194 and none so;
  // a BK 64 GEMM took 140 VGPRs there, 131 so). Measured by clang's resource usage only (no
  // AMD GPU here): what it costs or gains in time is not known.
#pragma unroll 2
  for (int k0 = 0; k0 < K; k0 += I::IK) {
    typename O::frag af[L::MT], bf[L::NT];
#pragma unroll
    for (int mt = 0; mt < L::MT; ++mt)
#pragma unroll
      for (int e = 0; e < I::AE; ++e)
        af[mt][e] = raw16(a[L::template a_index<TA>(tid, K, mt, k0, e)]);
#pragma unroll
    for (int nt = 0; nt < L::NT; ++nt)
#pragma unroll
      for (int e = 0; e < I::AE; ++e)
        bf[nt][e] = raw16(b[L::template b_index<TB>(tid, nt, k0, e, K)]);
#pragma unroll
    for (int mt = 0; mt < L::MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < L::NT; ++nt) {
        float* c = acc + (mt * L::NT + nt) * I::CE;
        typename O::acc d;
#pragma unroll
        for (int q = 0; q < I::CE; ++q) d[q] = c[q];
        d = O::run(af[mt], bf[nt], d);
#pragma unroll
        for (int q = 0; q < I::CE; ++q) c[q] = d[q];
      }
  }
}
}  // namespace mx
#elif defined(TL_HOST)
namespace mx {
// Host emulation (tl_host.h): each thread computes its own accumulator elements, executing every
// instruction by the layouts above: the operand value at (i, k) is the one the lane holding it
// loads (its address from tiling::a_index / b_index), products are exact in f32 and summed in
// increasing k into the accumulator. The hardware's summation order and internal precision are
// unspecified, so results agree with a device to rounding, not bit for bit.
template <class I, class T, int M, int N, int K, int WM, int WN, bool TA, bool TB>
TL_DEVICE void gemm(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  typedef tiling<I, M, N, WM, WN> L;
  static_assert(K % I::IK == 0, "K must be a multiple of the instruction's K");
  static_assert(I::WAVE == TL_WAVE, "the instruction's wave size is not the emulated target's");
  const int tid = TL_TID, lane = tid % I::WAVE, base = tid - lane;
  // Which (lane, element) holds A(i, k) and B(k, j) of an instruction tile.
  int al[I::IM * I::IK], ae[I::IM * I::IK], bl[I::IK * I::IN], be[I::IK * I::IN];
  for (int l = 0; l < I::WAVE; ++l)
    for (int e = 0; e < I::AE; ++e) {
      const int k = I::ab_k(l, e);
      al[I::a_row(l) * I::IK + k] = l, ae[I::a_row(l) * I::IK + k] = e;
      bl[k * I::IN + I::b_col(l)] = l, be[k * I::IN + I::b_col(l)] = e;
    }
  for (int k0 = 0; k0 < K; k0 += I::IK)
    for (int mt = 0; mt < L::MT; ++mt)
      for (int nt = 0; nt < L::NT; ++nt)
        for (int q = 0; q < I::CE; ++q) {
          const rc p = I::c(lane, q);
          float d = acc[(mt * L::NT + nt) * I::CE + q];
          for (int k = 0; k < I::IK; ++k) {
            const int x = p.row * I::IK + k, y = k * I::IN + p.col;
            d += to_float(a[L::template a_index<TA>(base + al[x], K, mt, k0, ae[x])]) *
                 to_float(b[L::template b_index<TB>(base + bl[y], nt, k0, be[y], K)]);
          }
          acc[(mt * L::NT + nt) * I::CE + q] = d;
        }
}
}  // namespace mx
#endif

#if defined(TL_AMD) || defined(TL_HOST)
// RDNA3 WMMA (gfx11, wave32). TA, TB: the operands stored transposed (`.t()`), as in mx::gemm.
template <class T, int M, int N, int K, int WM, int WN, bool TA = false, bool TB = false>
TL_DEVICE void gemm_wmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<mx::Wmma11, T, M, N, K, WM, WN, TA, TB>(a, b, acc);
}
// RDNA4 WMMA (gfx12, wave32).
template <class T, int M, int N, int K, int WM, int WN, bool TA = false, bool TB = false>
TL_DEVICE void gemm_wmma12(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<mx::Wmma12, T, M, N, K, WM, WN, TA, TB>(a, b, acc);
}
// CDNA MFMA (gfx90a, gfx942, wave64): IM = 32 for 32x32x8 tiles, 16 for 16x16x16.
template <class T, int M, int N, int K, int WM, int WN, int IM, bool TA = false, bool TB = false>
TL_DEVICE void gemm_mfma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<typename mx::mfma_of<IM>::type, T, M, N, K, WM, WN, TA, TB>(a, b, acc);
}
#endif
}  // namespace tl
