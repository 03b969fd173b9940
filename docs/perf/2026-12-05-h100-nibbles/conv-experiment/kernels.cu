#include "tl.h"

TL_GLOBAL void __launch_bounds__(128, 8) v_gen8(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
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
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
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



TL_GLOBAL void __launch_bounds__(128) v_plain(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
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
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
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



TL_GLOBAL void __launch_bounds__(128, 8) v_nostream(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
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
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        tl::store_chunk<8, float, tl::half, false>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, false>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
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



TL_GLOBAL void __launch_bounds__(128, 10) v_gen10(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
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
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
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



TL_GLOBAL void __launch_bounds__(128, 8) v_globalx(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  const tl::index __x0 = v2_n * n_L + v1_l0 - 3;
  auto __xg = [&](tl::index c) -> tl::half { const tl::index p = v1_l0 - 3 + c; return (p >= 0 && p < n_L) ? t_x[__x0 + c] : tl::lit<tl::half>(0.0); };
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
            v6_acc[__l] = tl::add<float>(v6_acc[__l], tl::mul<float>(tl::cast<float, tl::half>(__xg(v4_j + v7_t)), __v0[__l]));
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
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
      }
    }
  } else if (tl::chunk_aligned<8>(t_o, __g)) {
    #pragma unroll
    for (int __k = 0; __k < 4; ++__k) {
      const int __L = (__k * 128 + TL_TID) * 8;
      if (true) {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
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



TL_GLOBAL void __launch_bounds__(128) v_fused(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, v2_n, tl::sub<tl::index>(v1_l0, ((tl::index)3))}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, b0_x_s); }
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  const tl::Region __g = {{1, n_N, n_L, n_F}, {0, v2_n, v1_l0, v0_f0}};
  const int __mode = tl::chunk_aligned<8>(t_o, __g) ? (tl::tile_inside<1, 1, 128, 32>(__g) ? 0 : 1) : 2;
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
      {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__mode == 0) {
          tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else if (__mode == 1) {
          if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else {
          const bool __row = __g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2];
          const tl::index __gc = __g.off[3] + __c2;
          tl::store_chunk_tail<8, float, tl::half>(b2_o_f + __k * 8, t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + __gc), __row, __gc, __g.dims[3]);
        }
      }
    }
  }
}



TL_GLOBAL void __launch_bounds__(128, 8) v_fused8(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, v2_n, tl::sub<tl::index>(v1_l0, ((tl::index)3))}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, b0_x_s); }
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  const tl::Region __g = {{1, n_N, n_L, n_F}, {0, v2_n, v1_l0, v0_f0}};
  const int __mode = tl::chunk_aligned<8>(t_o, __g) ? (tl::tile_inside<1, 1, 128, 32>(__g) ? 0 : 1) : 2;
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
      {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__mode == 0) {
          tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else if (__mode == 1) {
          if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else {
          const bool __row = __g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2];
          const tl::index __gc = __g.off[3] + __c2;
          tl::store_chunk_tail<8, float, tl::half>(b2_o_f + __k * 8, t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + __gc), __row, __gc, __g.dims[3]);
        }
      }
    }
  }
}



TL_GLOBAL void __launch_bounds__(128, 12) v_fused12(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, v2_n, tl::sub<tl::index>(v1_l0, ((tl::index)3))}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, b0_x_s); }
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  const tl::Region __g = {{1, n_N, n_L, n_F}, {0, v2_n, v1_l0, v0_f0}};
  const int __mode = tl::chunk_aligned<8>(t_o, __g) ? (tl::tile_inside<1, 1, 128, 32>(__g) ? 0 : 1) : 2;
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
      {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__mode == 0) {
          tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else if (__mode == 1) {
          if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else {
          const bool __row = __g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2];
          const tl::index __gc = __g.off[3] + __c2;
          tl::store_chunk_tail<8, float, tl::half>(b2_o_f + __k * 8, t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + __gc), __row, __gc, __g.dims[3]);
        }
      }
    }
  }
}



TL_GLOBAL void __launch_bounds__(128, 16) v_fused16(const tl::half* __restrict__ t_x, const tl::half* __restrict__ t_w, tl::half* __restrict__ t_o, tl::index n_N, tl::index n_L, tl::index n_KW, tl::index n_F) {
  extern __shared__ __attribute__((aligned(16))) unsigned char tl_smem[];
  constexpr tl::index k_BL = 128;
  constexpr tl::index k_BF = 32;
  constexpr tl::index k_THREADS = 128;
  tl::index v0_f0 = tl::mul<tl::index>(TL_BID_X, k_BF);
  tl::index v1_l0 = tl::mul<tl::index>(TL_BID_Y, k_BL);
  tl::index v2_n = TL_BID_Z;
  tl::half* b0_x_s = (tl::half*)(tl_smem + 0);
  float* b1_w_s = (float*)(tl_smem + 272);
  float b2_o_f[32];
  { tl::Region __g = {{1, 1, n_N, n_L}, {0, 0, v2_n, tl::sub<tl::index>(v1_l0, ((tl::index)3))}}; tl::copy_g2s<tl::half, tl::half, 1, 1, 1, 134, 128, false, false, true>(t_x, __g, b0_x_s); }
  { tl::Region __g = {{1, 1, n_KW, n_F}, {0, 0, ((tl::index)0), v0_f0}}; tl::copy_g2s<tl::half, float, 1, 1, 7, 32, 128, false, false, true>(t_w, __g, b1_w_s); }
  tl::sync();
  const tl::Region __g = {{1, n_N, n_L, n_F}, {0, v2_n, v1_l0, v0_f0}};
  const int __mode = tl::chunk_aligned<8>(t_o, __g) ? (tl::tile_inside<1, 1, 128, 32>(__g) ? 0 : 1) : 2;
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
      {
        const tl::index __c0 = (tl::index)((__L / 4096) % 1);
        const tl::index __c1 = (tl::index)((__L / 32) % 128);
        const tl::index __c2 = (tl::index)((__L / 1) % 32);
        if (__mode == 0) {
          tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else if (__mode == 1) {
          if (__g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2] && (__g.off[3] + __c2) >= 0 && (__g.off[3] + __c2) < __g.dims[3]) tl::store_chunk<8, float, tl::half, true>(b2_o_f + __k * 8, t_o + ((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + (__g.off[3] + __c2));
        } else {
          const bool __row = __g.off[0] >= 0 && __g.off[0] < __g.dims[0] && (__g.off[1] + __c0) >= 0 && (__g.off[1] + __c0) < __g.dims[1] && (__g.off[2] + __c1) >= 0 && (__g.off[2] + __c1) < __g.dims[2];
          const tl::index __gc = __g.off[3] + __c2;
          tl::store_chunk_tail<8, float, tl::half>(b2_o_f + __k * 8, t_o + (((((0) * __g.dims[0] + __g.off[0]) * __g.dims[1] + (__g.off[1] + __c0)) * __g.dims[2] + (__g.off[2] + __c1)) * __g.dims[3] + __gc), __row, __gc, __g.dims[3]);
        }
      }
    }
  }
}

