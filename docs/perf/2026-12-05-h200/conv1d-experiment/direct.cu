// Hand-written comparison kernels for the conv1d experiment (README.md beside this file).
#include <cuda_fp16.h>
// Triton-like: no shared memory, weights in registers, x through L1.
template <int BL, int T>
__device__ __forceinline__ void conv_direct(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ o, long long N, long long L) {
  const int c = threadIdx.x % 4, r0 = threadIdx.x / 4;
  const long long n = blockIdx.z, l0 = (long long)blockIdx.y * BL;
  float wr[7][8];
#pragma unroll
  for (int t = 0; t < 7; ++t) {
    uint4 u = __ldg(reinterpret_cast<const uint4*>(w + t * 32 + c * 8));
    const __half* h = reinterpret_cast<const __half*>(&u);
#pragma unroll
    for (int f = 0; f < 8; ++f) wr[t][f] = __half2float(h[f]);
  }
  const __half* xr = x + n * L;
#pragma unroll
  for (int k = 0; k < BL / (T / 4); ++k) {
    const long long p = l0 + r0 + k * (T / 4);
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int t = 0; t < 7; ++t) {
      const long long q = p + t - 3;
      const float xv = (q >= 0 && q < L) ? __half2float(__ldg(xr + q)) : 0.0f;
#pragma unroll
      for (int f = 0; f < 8; ++f) acc[f] += xv * wr[t][f];
    }
    if (p < L) {
      uint4 u; __half* h = reinterpret_cast<__half*>(&u);
#pragma unroll
      for (int f = 0; f < 8; ++f) h[f] = __float2half_rn(acc[f]);
      __stcs(reinterpret_cast<uint4*>(o + (n * L + p) * 32 + c * 8), u);
    }
  }
}
extern "C" __global__ void __launch_bounds__(128) direct128t128(const __half* x, const __half* w, __half* o, long long N, long long L) { conv_direct<128,128>(x, w, o, N, L); }
extern "C" __global__ void __launch_bounds__(256) direct256t256(const __half* x, const __half* w, __half* o, long long N, long long L) { conv_direct<256,256>(x, w, o, N, L); }
extern "C" __global__ void __launch_bounds__(128) direct256t128(const __half* x, const __half* w, __half* o, long long N, long long L) { conv_direct<256,128>(x, w, o, N, L); }
extern "C" __global__ void __launch_bounds__(256) direct512t256(const __half* x, const __half* w, __half* o, long long N, long long L) { conv_direct<512,256>(x, w, o, N, L); }

extern "C" __global__ void __launch_bounds__(128, 8) direct128t128b8(const __half* x, const __half* w, __half* o, long long N, long long L) { conv_direct<128,128>(x, w, o, N, L); }
