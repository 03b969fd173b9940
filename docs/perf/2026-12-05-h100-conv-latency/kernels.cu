#include "tl.h"
#include <cuda_fp16.h>

// The generated l128f32w4 kernel (tilelang-emit kernels/src sm_90 conv1d_multi), its stores
// evict-first (S) or plain, and with PFD > 0 an L2 prefetch of the window PFD rows ahead.
template <bool S, int PFD>
TL_DEVICE void gen_body(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  if constexpr (PFD > 0) if (TL_TID < 4 && v2_n + PFD < n_N) {
    const tl::index s0 = v1_l0 >= 8 ? v1_l0 - 8 : 0;
    const char* p = (const char*)(t_x + (v2_n + PFD) * n_L + s0) + TL_TID * 128;
    if (p < (const char*)(t_x + n_N * n_L)) asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
  }
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, v2_n, tl::sub<tl::index>(v1_l0, ((tl::index)3))}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, b0_x_s); }
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  #pragma unroll
  for (int __k = 0; __k < 4; ++__k) {
    const unsigned __L = (__k * 128 + TL_TID) * 8;
    if (true) {
      const tl::index v3_r = (tl::index)((__L / 4096) % 1);
      const tl::index v4_j = (tl::index)((__L / 32) % 128);
      const tl::index __b = (tl::index)(((TL_TID * 8u) / 1) % 32);
      float v6_acc[8];
      #pragma unroll
      for (int __l = 0; __l < 8; ++__l) {
        const int __r = __k * 8 + __l; (void)__r;
          v6_acc[__l] = tl::lit<float>(0.0);
      }
      for (tl::index v7_t = ((tl::index)0); v7_t < ((tl::index)7); ++v7_t) {
        float __v0[8];
        tl::vload<true, 8, false>(&b1_w_s[(v7_t) * 32 + (__b + 0)], __v0);
        #pragma unroll
        for (int __l = 0; __l < 8; ++__l) {
          const int __r = __k * 8 + __l; (void)__r;
            v6_acc[__l] = tl::add<float>(v6_acc[__l], tl::mul<float>(tl::cast<float, tl::half>(b0_x_s[(v3_r) * 134 + tl::add<tl::index>(v4_j, v7_t)]), __v0[__l]));
        }
      }
      #pragma unroll
      for (int __l = 0; __l < 8; ++__l) {
        const int __r = __k * 8 + __l; (void)__r;
          b2_o_f[__r] = v6_acc[__l];
      }
    }
  }
  { tl::Region __g = {{1, n_N, n_L, n_F}, {0, v2_n, v1_l0, v0_f0}};
  if (tl::chunk_aligned<8>(t_o, __g) && tl::tile_inside<1, 1, 128, 32>(__g)) {
    {
      const int __L = TL_TID * 8;
      const tl::index __c0 = (tl::index)((__L / 4096) % 1);
      const tl::index __c1 = (tl::index)((__L / 32) % 128);
      const tl::index __c2 = (tl::index)((__L / 1) % 32);
      tl::half* const __p = t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      const tl::index __dp = (tl::index)32 * __g.dims[3];
      #pragma unroll
      for (int __k = 0; __k < 4; ++__k)
        tl::store_chunk<8, float, tl::half, S>(b2_o_f + __k * 8, __p + __k * __dp);
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, S>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        const bool __row = __g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2];
        const tl::index __gc = __g.off[3] + __c2;
        tl::store_chunk_tail<8, float, tl::half>(b2_o_f + __k * 8, t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + __gc), __row, __gc, __g.dims[3]);
      }
    }
  }
  }
}
TL_GLOBAL void __launch_bounds__(128, 8) v_gen(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { gen_body<true, 0>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_genp(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { gen_body<false, 0>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_pf8(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { gen_body<true, 8>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_pf16(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { gen_body<true, 16>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_pf32(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { gen_body<true, 32>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }


// Shared prologue of the hand variants: exactly the generated kernel's copies.
#define PROLOGUE \
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[]; \
  const tl::index f0 = (tl::index)TL_BID_X * 32, l0 = (tl::index)TL_BID_Y * 128, n = TL_BID_Z; \
  tl::half* xs = (tl::half*)(tl_smem + 0); \
  float* ws = (float*)(tl_smem + 272); \
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, n, l0 - 3}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, xs); } \
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, 0, f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, ws); } \
  tl::sync();

// Stores a row's 8 filters (16 bytes) of position `l`, filter `f`, guarded at the tensor's ends.
template <bool S = true>
TL_DEVICE void put8(tl::half* __restrict__ o, const float* a, tl::index n, tl::index l, tl::index f, tl::index L, tl::index F, bool inside) {
  tl::half* p = o + ((n * L + l) * F + f);
  if (inside) { tl::store_chunk<8, float, tl::half, S>(a, p); return; }
  if (l >= L) return;
  for (int c = 0; c < 8; ++c) if (f + c < F) p[c] = tl::cast<tl::half, float>(a[c]);
}

// The generated layout (chunk k: positions 32k + tid/4, filters 8 (tid%4)), hand-written.
template <bool S>
TL_DEVICE void simple8_body(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  PROLOGUE
  const int fg = TL_TID % 4, p = TL_TID / 4;
  const bool inside = l0 + 128 <= n_L && f0 + 32 <= n_F && (n_F % 8) == 0;
  float acc[4][8];
  #pragma unroll
  for (int k = 0; k < 4; ++k) {
    #pragma unroll
    for (int c = 0; c < 8; ++c) acc[k][c] = 0.0f;
    for (int t = 0; t < 7; ++t) {
      float wv[8]; tl::vload<true, 8, false>(&ws[t * 32 + fg * 8], wv);
      const float xv = tl::cast<float, tl::half>(xs[32 * k + p + t]);
      #pragma unroll
      for (int c = 0; c < 8; ++c) acc[k][c] = tl::add<float>(acc[k][c], tl::mul<float>(xv, wv[c]));
    }
  }
  #pragma unroll
  for (int k = 0; k < 4; ++k) put8<S>(t_o, acc[k], n, l0 + 32 * k + p, f0 + fg * 8, n_L, n_F, inside);
}

// Each thread owns 4 consecutive positions (4p .. 4p + 3) × 8 filters: the 7 taps of the 4
// positions read 10 window values, loaded once.
template <bool VEC, bool S = true>
TL_DEVICE void cons4_body(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  PROLOGUE
  const int fg = TL_TID % 4, p = TL_TID / 4, j0 = 4 * p;
  const bool inside = l0 + 128 <= n_L && f0 + 32 <= n_F && (n_F % 8) == 0;
  float xv[12];
  if constexpr (VEC) {
    #pragma unroll
    for (int i = 0; i < 3; ++i) {
      uint2 u = *(const uint2*)(xs + j0 + 4 * i);
      tl::half h[4]; __builtin_memcpy(h, &u, 8);
      #pragma unroll
      for (int q = 0; q < 4; ++q) xv[4 * i + q] = tl::cast<float, tl::half>(h[q]);
    }
  } else {
    #pragma unroll
    for (int i = 0; i < 10; ++i) xv[i] = tl::cast<float, tl::half>(xs[j0 + i]);
  }
  float acc[4][8];
  #pragma unroll
  for (int r = 0; r < 4; ++r)
    #pragma unroll
    for (int c = 0; c < 8; ++c) acc[r][c] = 0.0f;
  #pragma unroll
  for (int t = 0; t < 7; ++t) {
    float wv[8]; tl::vload<true, 8, false>(&ws[t * 32 + fg * 8], wv);
    #pragma unroll
    for (int r = 0; r < 4; ++r)
      #pragma unroll
      for (int c = 0; c < 8; ++c) acc[r][c] = tl::add<float>(acc[r][c], tl::mul<float>(xv[r + t], wv[c]));
  }
  #pragma unroll
  for (int r = 0; r < 4; ++r) put8<S>(t_o, acc[r], n, l0 + j0 + r, f0 + fg * 8, n_L, n_F, inside);
}

// Triton-like: no shared memory, no barrier. Per tap: the thread's 8 weights (16 bytes from
// global), its 4 positions' inputs (positions 32k + tid/4, as Triton's blocked layout), guarded.
template <bool S>
TL_DEVICE void tri_body(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  const tl::index f0 = (tl::index)TL_BID_X * 32, l0 = (tl::index)TL_BID_Y * 128, n = TL_BID_Z;
  const int fg = TL_TID % 4, p = TL_TID / 4;
  const bool inside = l0 + 128 <= n_L && f0 + 32 <= n_F && (n_F % 8) == 0;
  const tl::half* xr = t_x + n * n_L;
  float acc[4][8];
  #pragma unroll
  for (int k = 0; k < 4; ++k)
    #pragma unroll
    for (int c = 0; c < 8; ++c) acc[k][c] = 0.0f;
  #pragma unroll
  for (int t = 0; t < 7; ++t) {
    uint4 u = __ldg(reinterpret_cast<const uint4*>(t_w + t * n_F + f0 + fg * 8));
    const __half* h = reinterpret_cast<const __half*>(&u);
    float wv[8];
    #pragma unroll
    for (int c = 0; c < 8; ++c) wv[c] = __half2float(h[c]);
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
      const tl::index q = l0 + 32 * k + p + t - 3;
      const float xv = (q >= 0 && q < n_L) ? __half2float(xr[q]) : 0.0f;
      #pragma unroll
      for (int c = 0; c < 8; ++c) acc[k][c] = tl::add<float>(acc[k][c], tl::mul<float>(xv, wv[c]));
    }
  }
  #pragma unroll
  for (int k = 0; k < 4; ++k) put8<S>(t_o, acc[k], n, l0 + 32 * k + p, f0 + fg * 8, n_L, n_F, inside);
}
TL_GLOBAL void __launch_bounds__(128, 8) v_simple8(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { simple8_body<true>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_simple8p(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { simple8_body<false>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_cons4v(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { cons4_body<true, true>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_cons4vp(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { cons4_body<true, false>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_tri(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { tri_body<true>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }
TL_GLOBAL void __launch_bounds__(128, 8) v_trip(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) { tri_body<false>(t_x, t_w, t_o, n_N, n_L, n_KW, n_F); }


