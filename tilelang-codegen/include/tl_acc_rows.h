// tl_acc_rows.h: the rows of a matrix-unit accumulator (lower/rows.rs, `Layout::AccRows`), for
// every instruction `gemm` lowers to: which rows a thread holds, where their elements sit among
// its accumulator registers, and the reductions along them, a fold of the thread's own registers
// then a butterfly over the lanes that share each row and, when a row of the tile spans several
// waves, one exchange through shared memory.
#pragma once

#include "tl_reduce.h"
#include "tl_amd_mma.h"

namespace tl {
// The index math is pure so that tests/layouts.rs compiles the section below for the host
// with the matrix layouts and checks it against their `c` for every instruction.
// BEGIN accumulator rows
namespace mx {
// NVIDIA mma.sync m16n8k16's accumulator in the form of the AMD instructions (tl_amd_mma.h):
// element q of a lane holds row lane / 4 + 8·(q / 2), column 2·(lane % 4) + q % 2 of the 16 × 8
// tile (PTX ISA, "Matrix Fragments for mma.m16n8k16"; `mma_coord` in tl_mma.h). wgmma's
// accumulator is the same a warp, one warp per 16 rows.
struct MmaSync {
  static constexpr int WAVE = 32, IM = 16, IN = 8, CE = 4, ROW_ELEMS = 2, ROW_LANES = 4;
  TL_LAYOUT static rc c(int lane, int q) { return rc{lane / 4 + 8 * (q / 2), 2 * (lane % 4) + q % 2}; }
};

// The rows of an M-row accumulator of instruction I over a WM × WN grid of waves (tiling's): a
// thread holds RPT rows of each of its MT m-tiles, row register j = mt·RPT + s, whose EPR
// elements a tile are its accumulator elements q = s·EPR .. s·EPR + EPR − 1 (EPR =
// I::ROW_ELEMS); LANES = I::ROW_LANES lanes of a wave (an aligned group) and the WN waves of a
// row of waves hold the same rows. For a tile of N columns a thread holds PER = NT·EPR
// elements of each row. (tests/layouts.rs checks these facts against `c` for every instruction.)
template <class I, int M, int WM, int WN_>
struct rows {
  static constexpr int WAVE = I::WAVE, WN = WN_, TM = M / WM, MT = TM / I::IM;
  static constexpr int EPR = I::ROW_ELEMS, RPT = I::CE / EPR, NREG = MT * RPT;
  static constexpr int LANES = I::ROW_LANES;
  // The row of the block tile that thread tid's row register j holds.
  TL_LAYOUT static int row(int tid, int j) {
    const int lane = tid % WAVE, wm = tid / WAVE / WN;
    return wm * TM + (j / RPT) * I::IM + I::c(lane, (j % RPT) * EPR).row;
  }
  // Whether thread tid is the first holder of its rows (stores that leave the registers).
  TL_LAYOUT static bool lead(int tid) { return tid % LANES == 0 && tid / WAVE % WN == 0; }
  // For an accumulator of N columns: this thread's elements a row, the accumulator register of
  // element e of row register j (in column order within the thread), and the row register of
  // accumulator register r.
  template <int N> TL_LAYOUT static int per() { return N / WN / I::IN * EPR; }
  template <int N> TL_LAYOUT static int reg(int j, int e) {
    constexpr int NT = N / WN / I::IN;
    return ((j / RPT) * NT + e / EPR) * I::CE + (j % RPT) * EPR + e % EPR;
  }
  template <int N> TL_LAYOUT static int of(int r) {
    constexpr int NT = N / WN / I::IN;
    return (r / I::CE / NT) * RPT + (r % I::CE) / EPR;
  }
};
}  // namespace mx
// END accumulator rows

// ---- reductions along an accumulator's rows -----------------------------------------------------
// R: an mx::rows; N: the accumulator's columns. As reduce_rows (tl_reduce.h): every holder of a
// row ends with the same bits (the butterfly's partners combine the same two values; the
// exchange folds the waves in one order), so the result stays replicated.

// This thread's partial of row register j: its PER elements of the row, folded as a tree.
template <class OP, class T, class R, int N>
TL_DEVICE T acc_row_part(const T* acc, int j) {
  constexpr int PER = R::template per<N>();
  T v[PER];
#pragma unroll
  for (int e = 0; e < PER; ++e) v[e] = acc[R::template reg<N>(j, e)];
  return fold_tree<OP, T, PER>(v);
}

// One iteration of a reduction carried across a loop (lower/defer.rs): each row's partial
// folded into the running value carry[j].
template <class OP, class T, class R, int N>
TL_DEVICE void fold_acc_rows(const T* acc, T* carry) {
#pragma unroll
  for (int j = 0; j < R::NREG; ++j) carry[j] = OP::apply(carry[j], acc_row_part<OP, T, R, N>(acc, j));
}

// The rows finished across threads: each partial over the LANES lanes of its row, then, when
// WN > 1, one partial a wave through `scratch` (M·WN values) and a barrier (every thread of
// the block calls it then).
template <class OP, class T, class R>
TL_DEVICE void finish_acc_rows(const T* part, T* dst, T* scratch) {
#pragma unroll
  for (int j = 0; j < R::NREG; ++j) {
    T v = part[j];
#pragma unroll
    for (int m = R::LANES / 2; m >= 1; m >>= 1) v = OP::apply(v, shfl_xor(v, m));
    dst[j] = v;
  }
  if constexpr (R::WN > 1) {
    const int tid = TL_TID, wn = tid / R::WAVE % R::WN;
    if (tid % R::LANES == 0) {
#pragma unroll
      for (int j = 0; j < R::NREG; ++j) scratch[R::row(tid, j) * R::WN + wn] = dst[j];
    }
    sync();
#pragma unroll
    for (int j = 0; j < R::NREG; ++j) {
      const T* p = scratch + R::row(tid, j) * R::WN;
      T v = p[0];
#pragma unroll
      for (int i = 1; i < R::WN; ++i) v = OP::apply(v, p[i]);
      dst[j] = v;
    }
  } else {
    (void)scratch;
  }
}

// `reduce_*(&acc, &mut dst, 1)` with `acc` in registers: the partials, then finished.
template <class OP, class T, class R, int N>
TL_DEVICE void reduce_acc_rows(const T* acc, T* dst, T* scratch) {
#pragma unroll
  for (int j = 0; j < R::NREG; ++j) dst[j] = acc_row_part<OP, T, R, N>(acc, j);
  finish_acc_rows<OP, T, R>(dst, dst, scratch);
}
}  // namespace tl
