// tl_copy.h: copies between global memory, shared memory and registers: 16-byte vector
// moves, chunks of register fragments, swizzled shared tiles, asynchronous copies (cp.async)
// and the cooperative tile copies.
#pragma once

#include "tl_scalar.h"

namespace tl {
// ---- tile copies --------------------------------------------------------------------------------
// Every region is padded to rank 4 (leading extents 1). A global region is the tensor's dims
// and the tile's element offset; the tile's shape T0..T3 is static. Out-of-bounds reads give 0;
// out-of-bounds writes are skipped. Consecutive threads take consecutive elements of the
// innermost dimension (coalesced). When the tensor rows, the offset and the pointer allow it,
// rows move in 16-byte vectors, with an element-wise path for vectors that straddle an edge.
struct Region {
  index dims[4];
  index off[4];
};
// 16 bytes, moved with one instruction by `ld128` / `st128`.
struct alignas(16) vec16 {
  unsigned int x, y, z, w;
};
// One 128-bit load. On NVIDIA through CUDA's uint4, a vector type: NVVM keeps its accesses
// whole, where it splits the struct's into 32- and 64-bit ones wherever it cannot prove the
// alignment the callers have established (by a run-time test). Inline PTX would keep them whole
// too, but a memory clobber serialises a copy loop's loads behind its stores. (SHARED: the
// pointer is in shared memory; the generic access resolves that.)
//
// POL is an L2 eviction hint for global loads (lowering pass `reuse`): 0 none, 1 evict-last
// (the block reads these lines again), 2 evict-first (its last read of them). NVIDIA only,
// read-only tensors only (the PTX has no memory clobber: nothing in the kernel writes them);
// a hint changes what the L2 keeps, never a value. AMD ignores it.
#if defined(TL_NVIDIA)
template <int POL>
TL_DEVICE unsigned long long l2_policy() {
  unsigned long long p;
  if constexpr (POL == 1) {
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  } else {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  }
  return p;
}
#endif
template <bool SHARED = false, bool NC = false, int POL = 0>
TL_DEVICE vec16 ld128(const void* p) {
#if defined(TL_NVIDIA)
  uint4 u;
  if constexpr (POL != 0 && NC && !SHARED) {
    asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
        : "l"(p), "l"(l2_policy<POL>()));
  } else if constexpr (NC && !SHARED) {
    u = __ldg((const uint4*)p);  // read-only for the whole kernel: the non-coherent path
  } else {
    u = *(const uint4*)p;
  }
  vec16 v;
  v.x = u.x;
  v.y = u.y;
  v.z = u.z;
  v.w = u.w;
  return v;
#else
  return *(const vec16*)p;
#endif
}

// Chunks of N consecutive elements between global memory and a thread's registers (the chunked
// layout of register fragments; N is 16 bytes of the kernel's widest copied element, at most 8),
// in vectors of N elements. The caller checks `chunk_aligned` once for the region: then every
// chunk starts on a vector boundary and lies entirely inside or entirely outside each row.
// (Tested per chunk instead, the copies of ch03/ch04 ran 10-30% slower on the H200: two 4-D
// bounds tests per chunk.)
template <int N, class G>
TL_DEVICE bool chunk_aligned(const G* p, const Region& r) {
  constexpr int A = N * (int)sizeof(G) >= 16 ? 16 : N * (int)sizeof(G);
  return (uint64_t)p % A == 0 && r.dims[3] % N == 0 && r.off[3] % N == 0;
}
// Whether a tile of extents D0..D3 at the region's offset lies wholly inside the tensor: the
// copies then move every chunk with no test of its own (one test for the block, not one per
// chunk: ch04's backward pass executed 3.7x Triton's instructions with a 4-D test per chunk).
template <int D0, int D1, int D2, int D3>
TL_DEVICE bool tile_inside(const Region& r) {
  return r.off[0] >= 0 && r.off[0] + D0 <= r.dims[0] && r.off[1] >= 0 &&
         r.off[1] + D1 <= r.dims[1] && r.off[2] >= 0 && r.off[2] + D2 <= r.dims[2] &&
         r.off[3] >= 0 && r.off[3] + D3 <= r.dims[3];
}
// How many consecutive iterations of a loop, from the current one and at most `limit`, keep a
// tile of extents D0..D3 wholly inside the tensor when its region's offset moves by S0..S3
// (each >= 0) per iteration: 0 when the tile is not inside now. A loop whose copies move this
// way runs that many iterations with no tests in its copies (lower/interior.rs).
template <int D0, int D1, int D2, int D3, int S0, int S1, int S2, int S3>
TL_DEVICE index iterations_inside(const Region& r, index limit) {
  if (!tile_inside<D0, D1, D2, D3>(r) || limit <= 0) return 0;
  const int d[4] = {D0, D1, D2, D3}, s[4] = {S0, S1, S2, S3};
  index n = limit;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (s[i] > 0) {
      const index k = (r.dims[i] - d[i] - r.off[i]) / s[i] + 1;
      n = k < n ? k : n;
    }
  }
  return n;
}
// The 16 bytes of elements r[0..16/sizeof(G)) as four words, assembled with shifts: going
// through memcpy instead lets NVVM split the 128-bit store into four 32-bit ones.
template <class G>
TL_DEVICE vec16 pack16(const G* r) {
  unsigned int w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (sizeof(G) == 2) {
      w[i] = (unsigned int)__builtin_bit_cast(unsigned short, r[2 * i]) |
             ((unsigned int)__builtin_bit_cast(unsigned short, r[2 * i + 1]) << 16);
    } else if constexpr (sizeof(G) == 4) {
      w[i] = __builtin_bit_cast(unsigned int, r[i]);
    } else if constexpr (sizeof(G) == 1) {
      w[i] = (unsigned int)__builtin_bit_cast(unsigned char, r[4 * i]) |
             ((unsigned int)__builtin_bit_cast(unsigned char, r[4 * i + 1]) << 8) |
             ((unsigned int)__builtin_bit_cast(unsigned char, r[4 * i + 2]) << 16) |
             ((unsigned int)__builtin_bit_cast(unsigned char, r[4 * i + 3]) << 24);
    } else {
      static_assert(sizeof(G) == 8, "16-byte packs of 1, 2, 4 or 8-byte elements");
      const unsigned long long d = __builtin_bit_cast(unsigned long long, r[i / 2]);
      w[i] = (unsigned int)(i % 2 == 0 ? d : d >> 32);
    }
  }
  vec16 v;
  v.x = w[0];
  v.y = w[1];
  v.z = w[2];
  v.w = w[3];
  return v;
}
// One 128-bit store (as `ld128`, through uint4 on NVIDIA). STREAM: evict-first (`__stcs`,
// st.global.cs), for write-once outputs in global memory.
template <bool STREAM = false, bool SHARED = false>
TL_DEVICE void st128(void* p, const vec16& v) {
#if defined(TL_NVIDIA)
  const uint4 u = make_uint4(v.x, v.y, v.z, v.w);
  if constexpr (STREAM && !SHARED) {
    __stcs((uint4*)p, u);
  } else {
    *(uint4*)p = u;
  }
#else
  *(vec16*)p = v;
#endif
}
// Vector accesses of chunk-wise `parallel` loops: lane l of a chunk of N lanes at element p + l.
// The caller tests `vec_aligned` per chunk and otherwise moves the lanes one by one. STREAM marks
// a write-once output, stored with an evict-first hint on NVIDIA (st.global.cs); plainly
// elsewhere. SHARED: p is in shared memory.
template <int N, class T>
TL_DEVICE bool vec_aligned(const T* p) {
  constexpr int A = N * (int)sizeof(T) >= 16 ? 16 : N * (int)sizeof(T);
  return (uint64_t)p % A == 0;
}
template <bool SHARED, int N, bool NC, class T>
TL_DEVICE void vload(const T* p, T* r) {
  constexpr int B = N * (int)sizeof(T);
  static_assert(B % 16 == 0 || B == 8 || B == 4 || B == 2 || B == 1,
                "vector of 1, 2, 4, 8 or a multiple of 16 bytes");
  if constexpr (B % 16 == 0) {
#pragma unroll
    for (int i = 0; i < B / 16; ++i) {
      const vec16 v = ld128<SHARED, NC>((const vec16*)p + i);
      __builtin_memcpy((char*)r + 16 * i, &v, 16);
    }
  } else if constexpr (B == 8) {
    const uint64_t v = *(const uint64_t*)p;
    __builtin_memcpy(r, &v, 8);
  } else if constexpr (B == 4) {
    const uint32_t v = *(const uint32_t*)p;
    __builtin_memcpy(r, &v, 4);
  } else if constexpr (B == 2) {
    const uint16_t v = *(const uint16_t*)p;
    __builtin_memcpy(r, &v, 2);
  } else {
    r[0] = p[0];
  }
}
template <bool STREAM, bool SHARED, int N, class T>
TL_DEVICE void vstore(T* p, const T* r) {
  constexpr int B = N * (int)sizeof(T);
  static_assert(B % 16 == 0 || B == 8 || B == 4 || B == 2 || B == 1,
                "vector of 1, 2, 4, 8 or a multiple of 16 bytes");
  if constexpr (B % 16 == 0) {
#pragma unroll
    for (int i = 0; i < B / 16; ++i)
      st128<STREAM, SHARED>((vec16*)p + i, pack16(r + i * 16 / (int)sizeof(T)));
  } else if constexpr (B == 8) {
    uint64_t v;
    __builtin_memcpy(&v, r, 8);
    *(uint64_t*)p = v;
  } else if constexpr (B == 4) {
    uint32_t v;
    __builtin_memcpy(&v, r, 4);
    *(uint32_t*)p = v;
  } else if constexpr (B == 2) {
    uint16_t v;
    __builtin_memcpy(&v, r, 2);
    *(uint16_t*)p = v;
  } else {
    p[0] = r[0];
  }
}

template <int N, class G, bool SHARED = false, bool NC = false, int POL = 0>
TL_DEVICE void chunk_bytes_in(const G* __restrict__ g, G* tmp) {
  constexpr int B = N * (int)sizeof(G);
  if constexpr (B >= 16) {
    static_assert(B % 16 == 0, "chunks of whole 16-byte vectors");
#pragma unroll
    for (int i = 0; i < B / 16; ++i) {
      const vec16 v = ld128<SHARED, NC, POL>((const vec16*)g + i);
      __builtin_memcpy((char*)tmp + 16 * i, &v, 16);
    }
  } else {
    vload<SHARED, N, false>(g, tmp);
  }
}
template <int N, class G, class R, bool NC = false, int POL = 0>
TL_DEVICE void load_chunk(const G* __restrict__ g, R* r) {
  G tmp[N];
  chunk_bytes_in<N, G, false, NC, POL>(g, tmp);
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = cast<R, G>(tmp[i]);
}
// The element-wise form of a chunk copy, for tensors `chunk_aligned` refuses: element v of the
// chunk is column gc + v of a row (inside the tensor when `row`), and only columns in
// [0, cols) are read (others give 0) or written. The bounds are two small integers per chunk,
// not a 64-bit test per element: this path is cold, but its registers count everywhere, so
// 2-byte elements are packed in pairs as a vector load leaves them (unpacked, one register
// each, they had set ch04's backward pass at 96 registers where the vector path needs 60).
template <int N>
TL_DEVICE void chunk_span(bool row, index gc, index cols, int& lo, int& hi) {
  const index a = -gc, b = cols - gc;
  lo = a <= 0 ? 0 : a >= N ? N : (int)a;
  hi = !row || b <= 0 ? 0 : b >= N ? N : (int)b;
}
template <int N, class G, class R>
TL_DEVICE void load_chunk_tail(const G* __restrict__ g, bool row, index gc, index cols, R* r) {
  int lo, hi;
  chunk_span<N>(row, gc, cols, lo, hi);
  if constexpr (sizeof(R) == 2 && N == 8) {
    R t[8];
#pragma unroll
    for (int v = 0; v < 8; ++v) t[v] = v >= lo && v < hi ? cast<R, G>(g[v]) : lit<R>(0.0);
    const vec16 p = pack16(t);
    __builtin_memcpy(r, &p, 16);
  } else {
#pragma unroll
    for (int v = 0; v < N; ++v) r[v] = v >= lo && v < hi ? cast<R, G>(g[v]) : lit<R>(0.0);
  }
}
template <int N, class R, class G>
TL_DEVICE void store_chunk_tail(const R* r, G* __restrict__ g, bool row, index gc, index cols) {
  int lo, hi;
  chunk_span<N>(row, gc, cols, lo, hi);
#pragma unroll
  for (int v = 0; v < N; ++v)
    if (v >= lo && v < hi) g[v] = cast<G, R>(r[v]);
}
template <int N, class R, class G, bool STREAM = false>
TL_DEVICE void store_chunk(const R* r, G* __restrict__ g) {
  G tmp[N];
#pragma unroll
  for (int i = 0; i < N; ++i) tmp[i] = cast<G, R>(r[i]);
  vstore<STREAM, false, N>(g, tmp);
}

// A chunk between a shared tile and a chunked fragment's registers, in 16-byte accesses. With
// 32 bytes a lane (8 elements of 4 bytes), a quarter-warp's eight lanes sit 32 bytes apart, so
// the halves of their chunks are taken in an order that alternates with the lane's quad: in one
// order lanes l and l + 4 would hit the same banks (2-way), alternating they cover the 32 banks
// once. (The lowering now picks 4-element chunks for 4-byte fragments; the alternation stays
// for chunks that are two vectors.)
template <int N, class S, class R>
TL_DEVICE void lds_chunk(const S* s, R* r) {
  S tmp[N];
  if constexpr (N * sizeof(S) == 32) {
    const bool swap = (TL_TID >> 2) & 1;
    const vec16 a = ld128<true>((const vec16*)s + (swap ? 1 : 0));
    const vec16 b = ld128<true>((const vec16*)s + (swap ? 0 : 1));
    const vec16 lo = swap ? b : a, hi = swap ? a : b;
    __builtin_memcpy(tmp, &lo, 16);
    __builtin_memcpy(tmp + N / 2, &hi, 16);
  } else {
    chunk_bytes_in<N, S, true>(s, tmp);
  }
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = cast<R, S>(tmp[i]);
}
template <int N, class R, class S>
TL_DEVICE void sts_chunk(const R* r, S* s) {
  S tmp[N];
#pragma unroll
  for (int i = 0; i < N; ++i) tmp[i] = cast<S, R>(r[i]);
  if constexpr (N * sizeof(S) == 32) {
    const bool swap = (TL_TID >> 2) & 1;
    const vec16 lo = pack16(tmp), hi = pack16(tmp + N / 2);
    st128<false, true>((vec16*)s + (swap ? 1 : 0), swap ? hi : lo);
    st128<false, true>((vec16*)s + (swap ? 0 : 1), swap ? lo : hi);
  } else {
    vstore<false, true, N>(s, tmp);
  }
}

// Swizzled shared tiles. A 16-bit tile whose rows are CHUNKS 16-byte chunks (a power of two)
// may be stored with chunk c of row r at chunk swz(r, c) of that row: an XOR with bits of the
// row index divided by DIV, so that rows DIV apart at one logical chunk fall in distinct banks,
// while the chunks of one row stay a permutation (a copy's 16-byte stores stay conflict-free).
// DIV = 1 serves ldmatrix (8 consecutive rows per phase); a loop whose lanes read a column
// (a transpose) meets rows further apart, and the emitter picks the DIV its bank model finds
// cheapest. The emitter swizzles a shared buffer only when every access to it indexes it
// through `sidx`: copies from global memory into it, matrix-unit gemms, element accesses.
// BEGIN swizzle
#ifndef TL_SWIZZLE
#define TL_SWIZZLE TL_DEVICE constexpr
#endif
template <int CHUNKS, int DIV = 1>
TL_SWIZZLE int swz(int row, int c) {
  static_assert(CHUNKS >= 1 && (CHUNKS & (CHUNKS - 1)) == 0, "chunks per row: a power of two");
  static_assert(DIV >= 1 && (DIV & (DIV - 1)) == 0, "the row step: a power of two");
  constexpr int PER_LINE = CHUNKS >= 8 ? 1 : 8 / CHUNKS;  // rows per 128-byte bank line
  constexpr int SPAN = CHUNKS >= 8 ? 8 : CHUNKS;
  return c ^ ((row / (PER_LINE * DIV)) % SPAN);
}
// `SW = ATOMS`: the layout Hopper's wgmma reads through a shared-memory descriptor (and TMA
// writes with its 128-, 64- or 32-byte swizzle): the columns split into atoms of 64 (fewer when
// the tile is narrower), each atom stored as its own ROWS × 64 row-major block, one after the
// other, with DIV = 1 inside. Within an atom this is `swz` with DIV = 1, which is the
// hardware's XOR of address bits [4, 7) with bits [7, 10) (128-byte rows), of [4, 6) with
// [7, 9) (64-byte rows) or of bit 4 with bit 7 (32-byte rows), given an atom that starts on a
// multiple of 1024 bytes.
constexpr int ATOMS = -1;
// The element offset of (row, col) in a tile of ROWS × COLS 16-bit elements: SW = 0 plain,
// ATOMS as above, else swizzled with DIV = SW. (ROWS matters only to ATOMS.)
template <int SW, int COLS, int ROWS = 0>
TL_SWIZZLE int sidx(int row, int col) {
  if constexpr (SW == ATOMS && COLS > 64) {
    static_assert(COLS % 64 == 0 && ROWS > 0, "ATOMS: whole 64-column atoms, ROWS given");
    return (col / 64) * (ROWS * 64) + row * 64 + swz<8, 1>(row, col % 64 / 8) * 8 + col % 8;
  } else if constexpr (SW == ATOMS) {
    return row * COLS + swz<COLS / 8, 1>(row, col / 8) * 8 + col % 8;
  } else if constexpr (SW != 0) {
    return row * COLS + swz<COLS / 8, SW>(row, col / 8) * 8 + col % 8;
  } else {
    return row * COLS + col;
  }
}
// END swizzle

// For a tile wholly inside its tensor (`tile_inside`): the tensor offset of the tile's first
// row at column `col`, and the offset of the tile's row `row` from its first row. One index a
// block and one a row, where `row_inside` tests and forms a row index for every chunk.
TL_DEVICE index tile_first(const Region& r, index col) {
  return ((r.off[0] * r.dims[1] + r.off[1]) * r.dims[2] + r.off[2]) * r.dims[3] + col;
}
template <int T0, int T1, int T2>
TL_DEVICE index tile_row(const Region& r, int row) {
  const int i2 = row % T2, i1 = (row / T2) % T1, i0 = row / (T1 * T2);
  const index plane = T0 * T1 == 1 ? (index)0 : ((index)i0 * r.dims[1] + i1) * r.dims[2];
  return (plane + i2) * r.dims[3];
}

template <int T0, int T1, int T2>
TL_DEVICE bool row_inside(const Region& r, int row, index& grow) {
  const int i2 = row % T2, i1 = (row / T2) % T1, i0 = row / (T1 * T2);
  const index g0 = r.off[0] + i0, g1 = r.off[1] + i1, g2 = r.off[2] + i2;
  grow = (g0 * r.dims[1] + g1) * r.dims[2] + g2;
  return g0 >= 0 && g0 < r.dims[0] && g1 >= 0 && g1 < r.dims[1] && g2 >= 0 && g2 < r.dims[2];
}

// Asynchronous copies (NVIDIA sm_80+): 16 bytes global -> shared without registers, grouped by
// commit; `cp_async_wait<N>` waits until at most N of this thread's groups are pending. A
// barrier is still needed before other threads read what they wrote.
#if defined(TL_NVIDIA)
// The 32-bit shared-memory address PTX's `.shared` operands take, of a generic pointer into it.
TL_DEVICE uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
TL_DEVICE void cp_async16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
               :
               : "r"(smem_addr(smem)), "l"(gmem)
               : "memory");
}
TL_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
TL_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
#elif defined(TL_HOST)
// Host emulation (tl_host.h): a copy runs when a wait covers its group, not before.
TL_DEVICE uint32_t smem_addr(const void* p) { return tl_host::smem_offset(p); }
TL_DEVICE void cp_async16(void* smem, const void* gmem) {
  tl_host::detail::cp_async.open.push_back([smem, gmem] { __builtin_memcpy(smem, gmem, 16); });
}
TL_DEVICE void cp_async_commit() { tl_host::detail::cp_async.commit(); }
template <int N>
TL_DEVICE void cp_async_wait() {
  tl_host::detail::cp_async.wait(N);
}
#endif

// One 16-byte move of `copy_g2s`'s chunk `e` (row `e / VPR`, column `(e % VPR) * VEC` of the
// tile) from `src`: converting, asynchronous (cp.async) or plain.
template <class S, class D, int T3, int ROWS, int VPR, int VEC, int SW, bool ASYNC, bool NC>
TL_DEVICE void g2s_move(int e, const S* __restrict__ src, D* __restrict__ s) {
  D* dst = s + sidx<SW, T3, ROWS>(e / VPR, (e % VPR) * VEC);
  if constexpr (!__is_same(S, D)) {
    S tmp[VEC];
    D out[VEC];
    const vec16 v = ld128<false, NC>(src);
    __builtin_memcpy(tmp, &v, 16);
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = cast<D>(tmp[i]);
    vstore<false, true, VEC>(dst, out);
  } else {
#if defined(TL_NVIDIA) || defined(TL_HOST)
    if constexpr (ASYNC) cp_async16(dst, src);
    else st128<false, true>(dst, ld128<false, NC>(src));
#else
    st128<false, true>(dst, ld128<false, NC>(src));
#endif
  }
}

// The elements of an aligned vector that fall in a window's tile row, the vector's first
// element being column `c0` of the row (negative before the window's first column).
template <int T3, int VEC, class S, class D>
TL_DEVICE void window_put(const S* tmp, int c0, D* row) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    const int c = c0 + v;
    if (c >= 0 && c < T3) row[c] = cast<D>(tmp[v]);
  }
}

// ASYNC: full 16-byte vectors move with cp.async (the caller commits and waits); the elements
// at the edges are stored directly, which the same barrier publishes.
// SW: the tile's swizzle (`sidx`; 0 = plain, `true` = 1).
template <class S, class D, int T0, int T1, int T2, int T3, int THREADS, int SW = 0,
          bool ASYNC = false, bool NC = false>
TL_DEVICE void copy_g2s(const S* __restrict__ g, const Region& r, D* __restrict__ s) {
  static_assert(!SW || (sizeof(D) == 2 && T3 % 8 == 0), "swizzled tiles: 16-bit, whole chunks");
  constexpr int ROWS = T0 * T1 * T2;
  // 16 bytes of the global type per access; a converting copy (not swizzled, not
  // asynchronous: cp.async cannot convert) stores the converted vector to shared memory.
  constexpr int VEC = 16 / (int)sizeof(S);
  constexpr bool SAME = __is_same(S, D);
  if constexpr (VEC > 1 && T3 % VEC == 0 && (SAME || !SW) && VEC * sizeof(D) % 4 == 0) {
    if ((uint64_t)g % 16 == 0 && r.dims[3] % VEC == 0 && r.off[3] % VEC == 0) {
      constexpr int VPR = T3 / VEC;
      // The whole tile inside the tensor (every block but the edge ones): one test for the
      // block instead of a 4-D bounds test and a row address per chunk: each chunk is the
      // tile's first element plus its row's offset, and the loop has a constant trip count
      // that the compiler unrolls. Not for cp.async stages (the GEMMs'): there nvcc hoists
      // the unrolled addresses out of the K loop (gemm_tiled t128x128x32s3: 123 -> 161
      // registers, one block a multiprocessor fewer).
      if (!ASYNC && tile_inside<T0, T1, T2, T3>(r)) {
        const S* first = g + tile_first(r, r.off[3]);
        constexpr int TOTAL = ROWS * VPR;
#pragma unroll 16
        for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; ++k) {
          const int e = k * THREADS + TL_TID;
          if (TOTAL % THREADS != 0 && e >= TOTAL) break;
          g2s_move<S, D, T3, ROWS, VPR, VEC, SW, ASYNC, NC>(
              e, first + tile_row<T0, T1, T2>(r, e / VPR) + (e % VPR) * VEC, s);
        }
        return;
      }
      for (int e = TL_TID; e < ROWS * VPR; e += THREADS) {
        const int row = e / VPR, c = (e % VPR) * VEC;
        index grow;
        const bool in_row = row_inside<T0, T1, T2>(r, row, grow);
        const index gc = r.off[3] + c;
        D* dst = s + sidx<SW, T3, ROWS>(row, c);
        if (in_row && gc >= 0 && gc + VEC <= r.dims[3]) {
          g2s_move<S, D, T3, ROWS, VPR, VEC, SW, ASYNC, NC>(e, g + grow * r.dims[3] + gc, s);
        } else {
          for (int v = 0; v < VEC; ++v) {
            const bool in = in_row && gc + v >= 0 && gc + v < r.dims[3];
            dst[v] = in ? cast<D>(g[grow * r.dims[3] + gc + v]) : lit<D>(0.0);
          }
        }
      }
      return;
    }
  }
  // A window whose first column is not on a vector boundary (a convolution's halo at
  // `l0 - 3`): the aligned vectors covering it are loaded whole and their elements stored
  // shifted into the tile; vectors across the tensor's edge load element by element.
  if constexpr (VEC > 1 && !SW) {
    if ((uint64_t)g % 16 == 0 && r.dims[3] % VEC == 0) {
      const index base = r.off[3] >= 0 ? r.off[3] / VEC * VEC : -((VEC - 1 - r.off[3]) / VEC * VEC);
      const int lead = (int)(r.off[3] - base);
      constexpr int VPR = T3 / VEC + 2;
      // The window inside the tensor: so is every aligned vector covering it (the tensor's
      // rows are whole vectors), and one test serves the block, as in the path above.
      if (tile_inside<T0, T1, T2, T3>(r)) {
        const S* first = g + tile_first(r, base);
        constexpr int TOTAL = ROWS * VPR;
#pragma unroll 4
        for (int k = 0; k < (TOTAL + THREADS - 1) / THREADS; ++k) {
          const int e = k * THREADS + TL_TID;
          if (TOTAL % THREADS != 0 && e >= TOTAL) break;
          const int row = e / VPR, c0 = (e % VPR) * VEC - lead;
          if (c0 >= T3) continue;
          const vec16 v = ld128<false, NC>(first + tile_row<T0, T1, T2>(r, row) + (e % VPR) * VEC);
          S tmp[VEC];
          __builtin_memcpy(tmp, &v, 16);
          window_put<T3, VEC>(tmp, c0, s + row * T3);
        }
        return;
      }
      for (int e = TL_TID; e < ROWS * VPR; e += THREADS) {
        const int row = e / VPR, c0 = (e % VPR) * VEC - lead;
        if (c0 >= T3) continue;
        index grow;
        const bool in_row = row_inside<T0, T1, T2>(r, row, grow);
        const index gc = base + (e % VPR) * VEC;
        S tmp[VEC];
        if (in_row && gc >= 0 && gc + VEC <= r.dims[3]) {
          const vec16 v = ld128<false, NC>(g + grow * r.dims[3] + gc);
          __builtin_memcpy(tmp, &v, 16);
        } else {
#pragma unroll
          for (int v = 0; v < VEC; ++v) {
            const bool in = in_row && gc + v >= 0 && gc + v < r.dims[3];
            tmp[v] = in ? g[grow * r.dims[3] + gc + v] : lit<S>(0.0);
          }
        }
        window_put<T3, VEC>(tmp, c0, s + row * T3);
      }
      return;
    }
  }
  for (int e = TL_TID; e < ROWS * T3; e += THREADS) {
    const int row = e / T3, c = e % T3;
    index grow;
    const bool in_row = row_inside<T0, T1, T2>(r, row, grow);
    const index gc = r.off[3] + c;
    const bool in = in_row && gc >= 0 && gc < r.dims[3];
    // (`e` itself when not swizzled: recomputing it from row and column costs registers.)
    s[SW ? sidx<SW, T3, ROWS>(row, c) : e] = in ? cast<D>(g[grow * r.dims[3] + gc]) : lit<D>(0.0);
  }
}

template <class S, class D, int T0, int T1, int T2, int T3, int THREADS, bool STREAM = false>
TL_DEVICE void copy_s2g(const S* __restrict__ s, D* __restrict__ g, const Region& r) {
  constexpr int ROWS = T0 * T1 * T2;
  // 16 bytes of the global type per access (a converting copy loads and converts first).
  constexpr int VEC = 16 / (int)sizeof(D);
  if constexpr (VEC > 1 && T3 % VEC == 0 && VEC * sizeof(S) % 4 == 0) {
    if ((uint64_t)g % 16 == 0 && r.dims[3] % VEC == 0 && r.off[3] % VEC == 0) {
      constexpr int VPR = T3 / VEC;
      for (int e = TL_TID; e < ROWS * VPR; e += THREADS) {
        const int row = e / VPR, c = (e % VPR) * VEC;
        index grow;
        const bool in_row = row_inside<T0, T1, T2>(r, row, grow);
        const index gc = r.off[3] + c;
        const S* src = s + row * T3 + c;
        if (in_row && gc >= 0 && gc + VEC <= r.dims[3]) {
          if constexpr (__is_same(S, D)) {
            st128<STREAM>(g + grow * r.dims[3] + gc, ld128<true>(src));
          } else {
            S tmp[VEC];
            D out[VEC];
            vload<true, VEC, false>(src, tmp);
#pragma unroll
            for (int i = 0; i < VEC; ++i) out[i] = cast<D>(tmp[i]);
            vstore<STREAM, false, VEC>(g + grow * r.dims[3] + gc, out);
          }
        } else if (in_row) {
          for (int v = 0; v < VEC; ++v)
            if (gc + v >= 0 && gc + v < r.dims[3]) g[grow * r.dims[3] + gc + v] = cast<D>(src[v]);
        }
      }
      return;
    }
  }
  for (int e = TL_TID; e < ROWS * T3; e += THREADS) {
    const int row = e / T3, c = e % T3;
    index grow;
    const bool in_row = row_inside<T0, T1, T2>(r, row, grow);
    const index gc = r.off[3] + c;
    if (in_row && gc >= 0 && gc < r.dims[3]) g[grow * r.dims[3] + gc] = cast<D>(s[e]);
  }
}

// Shared to shared (same shape), converting.
template <class S, class D, int N, int THREADS>
TL_DEVICE void copy_s2s(const S* __restrict__ s, D* __restrict__ d) {
  for (int e = TL_TID; e < N; e += THREADS) d[e] = cast<D>(s[e]);
}

template <class T, int N, int THREADS>
TL_DEVICE void fill_shared(T* s, T v) {
  for (int e = TL_TID; e < N; e += THREADS) s[e] = v;
}
}  // namespace tl
