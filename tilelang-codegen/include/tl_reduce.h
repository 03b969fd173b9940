// tl_reduce.h: reductions. `reduce` folds a shared tile along one dimension; `fold_rows` and
// `reduce_rows` fold a register tile's rows, within a thread, then across the threads of a row
// with wave shuffles and, past a wave, an exchange through shared memory. Atomic adds, for
// reductions into global memory.
#pragma once

#include "tl_scalar.h"

namespace tl {
// ---- reductions ---------------------------------------------------------------------------------
// `unit` is the identity a deferred reduction's running values start from (lower/defer.rs):
// -0.0 for float sums (x + -0.0 is x, bit for bit, for every x), -inf or the lowest integer
// for maxima.
struct Sum {
  template <class T> TL_DEVICE static T apply(T a, T b) { return add(a, b); }
  template <class T> TL_DEVICE static T unit() {
    if constexpr (is_float_like<T>::value) return narrow<T>(-0.0f);
    else return T(0);
  }
};
struct Max {
  template <class T> TL_DEVICE static T apply(T a, T b) { return max(a, b); }
  template <class T> TL_DEVICE static T unit() {
    if constexpr (is_float_like<T>::value) return narrow<T>(-__builtin_huge_valf());
    else if constexpr (T(-1) < T(0)) return T((unsigned long long)1 << (sizeof(T) * 8 - 1));
    else return T(0);
  }
};

// Reduces `src` viewed as [OUTER][LEN][INNER] along LEN into dst[OUTER][INNER].
// Each output is folded by a group of G lanes of one wave (G a power of two ≤ the wave size),
// each lane folding a strided slice in order, then the group combines with butterfly shuffles.
// Every thread of the block must call this (it contains shuffles); the caller syncs afterwards.
template <class OP, class T, int OUTER, int LEN, int INNER, int THREADS, int G>
TL_DEVICE void reduce(const T* src, T* dst) {
  constexpr int OUTS = OUTER * INNER;
  constexpr int GROUPS = THREADS / G;
  const int tid = TL_TID;
  const int lane = tid % G;
  for (int base = 0; base < OUTS; base += GROUPS) {
    const int o = base + tid / G;
    const bool active = o < OUTS;
    const int oo = active ? o / INNER : 0, oi = active ? o % INNER : 0;
    const T* s = src + (oo * LEN) * INNER + oi;
    T acc = s[0];
    if (active && lane < LEN) {
      acc = s[lane * INNER];
      for (int r = lane + G; r < LEN; r += G) acc = OP::apply(acc, s[r * INNER]);
    }
    bool has = active && lane < LEN;
#pragma unroll
    for (int m = 1; m < G; m <<= 1) {
      T other = shfl_xor(acc, m);
      bool other_has = shfl_xor((int)has, m) != 0;
      if (other_has) acc = has ? OP::apply(acc, other) : other;
      has = has || other_has;
    }
    if (active && lane == 0) dst[oo * INNER + oi] = acc;
  }
}

// Reduction of a register tile's rows into a row fragment (lower/rows.rs). Result register j
// folds source registers [j*PER, (j+1)*PER) of this thread (a tree: independent operations),
// then the WIDTH consecutive threads that share its row: a butterfly of shuffles within the
// wave and, when WIDTH spans several waves, one partial per wave through `scratch` and one
// barrier. Every thread of a group ends with the same bits (each butterfly step combines the
// same two values in both partners, and Sum and Max are commutative; the exchange folds the
// waves in one order), so the result stays replicated across the group.
// This thread's PER registers of one row, folded as a tree (independent operations).
template <class OP, class T, int PER>
TL_DEVICE T fold_tree(const T* src) {
  T v[PER];
#pragma unroll
  for (int e = 0; e < PER; ++e) v[e] = src[e];
#pragma unroll
  for (int s = 1; s < PER; s <<= 1) {
#pragma unroll
    for (int e = 0; e + s < PER; e += 2 * s) v[e] = OP::apply(v[e], v[e + s]);
  }
  return v[0];
}

// One iteration of a reduction carried across a loop (lower/defer.rs): each of this thread's
// NREG rows folds its PER registers (the tree of reduce_rows) into the running value acc[j].
// After the loop, reduce_rows<OP, T, NREG, 1, ..>(acc, ..) finishes the rows across threads.
template <class OP, class T, int NREG, int PER>
TL_DEVICE void fold_rows(const T* src, T* acc) {
#pragma unroll
  for (int j = 0; j < NREG; ++j) acc[j] = OP::apply(acc[j], fold_tree<OP, T, PER>(src + j * PER));
}

template <class OP, class T, int NREG, int PER, int WIDTH, int WAVE, int THREADS>
TL_DEVICE void reduce_rows(const T* src, T* dst, T* scratch) {
  constexpr int LANES = WIDTH < WAVE ? WIDTH : WAVE;
#pragma unroll
  for (int j = 0; j < NREG; ++j) {
    T acc = fold_tree<OP, T, PER>(src + j * PER);
#pragma unroll
    for (int m = LANES / 2; m >= 1; m >>= 1) acc = OP::apply(acc, shfl_xor(acc, m));
    dst[j] = acc;
  }
  if constexpr (WIDTH > WAVE) {
    constexpr int NW = WIDTH / WAVE, G = THREADS / WIDTH;
    const int tid = TL_TID;
    const int w = (tid % WIDTH) / WAVE, g = tid / WIDTH;
    if (tid % WAVE == 0) {
#pragma unroll
      for (int j = 0; j < NREG; ++j) scratch[(j * G + g) * NW + w] = dst[j];
    }
    sync();
#pragma unroll
    for (int j = 0; j < NREG; ++j) {
      const T* p = scratch + (j * G + g) * NW;
      T acc = p[0];
#pragma unroll
      for (int i = 1; i < NW; ++i) acc = OP::apply(acc, p[i]);
      dst[j] = acc;
    }
  } else {
    (void)scratch;
  }
}

// ---- atomics ------------------------------------------------------------------------------------
#if defined(TL_NVIDIA)
TL_DEVICE void atomic_add(float* p, float v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(double* p, double v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(int* p, int v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(unsigned int* p, unsigned int v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(half* p, half v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(bfloat* p, bfloat v) { atomicAdd(p, v); }
TL_DEVICE void atomic_add(long long* p, long long v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
#else
template <class T> TL_DEVICE void atomic_add(T* p, T v) {
  __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#endif
}  // namespace tl
