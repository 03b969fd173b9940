// tl.h: the header-only tile library that generated kernels are written against.
//
// One source compiles three ways:
//   * nvcc (NVIDIA): CUDA headers, this file maps the few HIP-dialect names we use;
//   * hipcc (AMD, ROCm present): HIP headers;
//   * clang -x hip -nogpulib -nogpuinc (AMD, no ROCm): no headers at all; the prelude below
//     supplies what device code needs from clang builtins.
// Generated code uses only what is defined here: TL_TID, TL_BID_{X,Y,Z}, tl::sync(), the tl::
// scalar operations and the tile primitives.
#pragma once

#if defined(__CUDACC__)
#define TL_NVIDIA 1
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#define TL_DEVICE __device__ __forceinline__
#define TL_GLOBAL extern "C" __global__
// The attribute's occupancy controls (lower/occupancy.rs); AMD's waves per SIMD have no
// NVIDIA form: there `min_blocks` is `__launch_bounds__`' second argument.
#define TL_MAX_REGISTERS(r) __maxnreg__(r)
#define TL_TID ((int)threadIdx.x)
#define TL_BID_X ((long long)blockIdx.x)
#define TL_BID_Y ((long long)blockIdx.y)
#define TL_BID_Z ((long long)blockIdx.z)
// The block's linear index in its grid and the grid's blocks (persistent entries walk tiles).
#define TL_BLOCK_LINEAR    \
  ((long long)blockIdx.x + \
   (long long)gridDim.x * ((long long)blockIdx.y + (long long)gridDim.y * blockIdx.z))
#define TL_BLOCKS ((long long)gridDim.x * gridDim.y * gridDim.z)
#define TL_WAVE 32
namespace tl {
typedef __half half;
typedef __nv_bfloat16 bfloat;
TL_DEVICE void sync() { __syncthreads(); }
TL_DEVICE float to_float(half x) { return __half2float(x); }
TL_DEVICE float to_float(bfloat x) { return __bfloat162float(x); }
template <class T> TL_DEVICE T from_float(float x);
template <> TL_DEVICE half from_float<half>(float x) { return __float2half_rn(x); }
template <> TL_DEVICE bfloat from_float<bfloat>(float x) { return __float2bfloat16_rn(x); }
template <class T> TL_DEVICE T from_double(double x);
template <> TL_DEVICE half from_double<half>(double x) { return __double2half(x); }
template <> TL_DEVICE bfloat from_double<bfloat>(double x) { return __double2bfloat16(x); }
template <class T> TL_DEVICE T shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
}  // namespace tl
#elif defined(__HIP__)
#define TL_AMD 1
#if !defined(TL_NO_HIP_HEADERS) && __has_include(<hip/hip_runtime.h>)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#define TL_TID ((int)threadIdx.x)
#define TL_BID_X ((long long)blockIdx.x)
#define TL_BID_Y ((long long)blockIdx.y)
#define TL_BID_Z ((long long)blockIdx.z)
#else
// No HIP headers (clang -nogpuinc): the device-side prelude from clang builtins.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define TL_TID ((int)__builtin_amdgcn_workitem_id_x())
#define TL_BID_X ((long long)__builtin_amdgcn_workgroup_id_x())
#define TL_BID_Y ((long long)__builtin_amdgcn_workgroup_id_y())
#define TL_BID_Z ((long long)__builtin_amdgcn_workgroup_id_z())
// The math the tile library needs, from LLVM intrinsics (no device libraries are linked).
__device__ inline float expf(float x) { return __builtin_expf(x); }
__device__ inline float exp2f(float x) { return __builtin_exp2f(x); }
__device__ inline float logf(float x) { return __builtin_logf(x); }
__device__ inline float sqrtf(float x) { return __builtin_sqrtf(x); }
__device__ inline float fabsf(float x) { return __builtin_fabsf(x); }
__device__ inline float fmodf(float x, float y) { return __builtin_fmodf(x, y); }
// f64 exp, exp2 and log have no instruction, and without ROCm's device libraries LLVM has no
// libcall for them ("no libcall available for fexp"): they are computed here with + and *
// only (tests/hip.rs checks them on the host against the C library: within 2 ulp).
#define TL_MATH64 __device__ inline
// BEGIN f64 math
// exp(t) for |t| <= 0.35: Taylor to t^14 (the next term is below 2^-54 relative), Horner.
TL_MATH64 double tl_m64_exp_core(double t) {
  double p = 1.1470745597729725e-11;
  p = p * t + 1.6059043836821613e-10;
  p = p * t + 2.08767569878681e-09;
  p = p * t + 2.505210838544172e-08;
  p = p * t + 2.755731922398589e-07;
  p = p * t + 2.7557319223985893e-06;
  p = p * t + 2.48015873015873e-05;
  p = p * t + 0.0001984126984126984;
  p = p * t + 0.001388888888888889;
  p = p * t + 0.008333333333333333;
  p = p * t + 0.041666666666666664;
  p = p * t + 0.16666666666666666;
  p = p * t + 0.5;
  p = p * t + 1.0;
  return p * t + 1.0;
}
// 2^k for -1022 <= k <= 1023, from the exponent bits.
TL_MATH64 double tl_m64_pow2i(long long k) {
  return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52);
}
// p · 2^k for |k| <= 1100, in two exact steps (each half keeps the factor normal); the result
// is rounded once, except where it is subnormal.
TL_MATH64 double tl_m64_scale(double p, long long k) {
  long long h = k / 2;
  return p * tl_m64_pow2i(h) * tl_m64_pow2i(k - h);
}
// ln 2 split so that k · LN2_HI is exact for |k| < 2^21 (its low 21 bits are zero).
#define TL_M64_LN2_HI 0.6931471803691238
#define TL_M64_LN2_LO 1.9082149292705877e-10
TL_MATH64 double tl_m64_exp(double x) {
  if (x != x) return x;
  if (x > 709.8) return __builtin_inf();
  if (x < -745.2) return 0.0;
  double k = __builtin_rint(x * 1.4426950408889634);
  double t = (x - k * TL_M64_LN2_HI) - k * TL_M64_LN2_LO;  // |t| <= 0.35
  return tl_m64_scale(tl_m64_exp_core(t), (long long)k);
}
TL_MATH64 double tl_m64_exp2(double x) {
  if (x != x) return x;
  if (x >= 1024.0) return __builtin_inf();
  if (x < -1075.0) return 0.0;
  double k = __builtin_rint(x);
  // x - k is exact (|x - k| <= 1/2); one rounding in the product: 0.35 ulp at most.
  return tl_m64_scale(tl_m64_exp_core((x - k) * 0.6931471805599453), (long long)k);
}
TL_MATH64 double tl_m64_log(double x) {
  if (x != x || x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_inf();
  if (x == __builtin_inf()) return x;
  long long e = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: · 2^54
    x *= 18014398509481984.0;
    e = -54;
  }
  unsigned long long b = __builtin_bit_cast(unsigned long long, x);
  e += (long long)(b >> 52) - 1023;
  double m =
      __builtin_bit_cast(double, (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) {  // [0.707, 1.414]
    m *= 0.5;
    e += 1;
  }
  // log(1 + f) = 2 atanh(s), s = f / (2 + f), |s| <= 0.172; with R = 2z/3 + 2z^2/5 + ..
  // (z = s^2, to z^10), log(1 + f) = 2s + s·R = f - s·(f - R): f is exact, the correction small.
  double f = m - 1.0, s = f / (2.0 + f), z = s * s;
  double r = 0.09523809523809523;
  r = r * z + 0.10526315789473684;
  r = r * z + 0.11764705882352941;
  r = r * z + 0.13333333333333333;
  r = r * z + 0.15384615384615385;
  r = r * z + 0.18181818181818182;
  r = r * z + 0.2222222222222222;
  r = r * z + 0.2857142857142857;
  r = r * z + 0.4;
  r = r * z + 0.6666666666666666;
  r *= z;
  double de = (double)e;
  return de * TL_M64_LN2_HI + (f - (s * (f - r) - de * TL_M64_LN2_LO));
}
// tanh: for |x| < 0.55 its Taylor series to x^39 (the next term is below 2^-56 relative),
// beyond 1 - 2 / (exp(2|x|) + 1), which cancels little there.
TL_MATH64 double tl_m64_tanh(double x) {
  double s = __builtin_fabs(x);
  if (s != s || s < 0x1p-28) return x;  // tanh(-0) is -0
  if (s >= 0.55)
    return __builtin_copysign(s > 20.0 ? 1.0 : 1.0 - 2.0 / (tl_m64_exp(2.0 * s) + 1.0), x);
  double z = x * x;
  double p = -2.859136662305254e-08;
  p = p * z + 7.054636946400968e-08;
  p = p * z + -1.7406618963571648e-07;
  p = p * z + 4.294911078273806e-07;
  p = p * z + -1.0597268320104654e-06;
  p = p * z + 2.6147711512907546e-06;
  p = p * z + -6.451689215655431e-06;
  p = p * z + 1.5918905069328964e-05;
  p = p * z + -3.927832388331683e-05;
  p = p * z + 9.691537956929451e-05;
  p = p * z + -0.00023912911424355248;
  p = p * z + 0.000590027440945586;
  p = p * z + -0.0014558343870513183;
  p = p * z + 0.003592128036572481;
  p = p * z + -0.008863235529902197;
  p = p * z + 0.021869488536155203;
  p = p * z + -0.05396825396825397;
  p = p * z + 0.13333333333333333;
  p = p * z + -0.3333333333333333;
  return x + x * z * p;
}
// erf: for |x| < 1 its Taylor series to x^39; for 1 <= |x| < 6, 1 - erfc with
// erfc(s) = exp(-s^2) / (sqrt(pi) f), f the continued fraction s + (1/2)/(s + 1/(s + (3/2)/(..)))
// evaluated backwards from enough terms (8 + 200/s^2: 1 ulp at s = 1), s^2 carried as hi + lo;
// from 6 on, erf is 1 in double.
TL_MATH64 double tl_m64_erf(double x) {
  double s = __builtin_fabs(x);
  if (s != s) return x;
  if (s < 1.0) {
    double z = x * x;
    double p = -2.3784598852774293e-19;
    p = p * z + 4.763348040515068e-18;
    p = p * z + -9.063970842808673e-17;
    p = p * z + 1.6342614095367152e-15;
    p = p * z + -2.7835162072109215e-14;
    p = p * z + 4.4632242632864775e-13;
    p = p * z + -6.7113668551641105e-12;
    p = p * z + 9.422759064650411e-11;
    p = p * z + -1.2290555301717928e-09;
    p = p * z + 1.4807192815879218e-08;
    p = p * z + -1.6365844691234924e-07;
    p = p * z + 1.6462114365889248e-06;
    p = p * z + -1.492565035840625e-05;
    p = p * z + 0.00012055332981789664;
    p = p * z + -0.0008548327023450853;
    p = p * z + 0.005223977625442188;
    p = p * z + -0.026866170645131252;
    p = p * z + 0.11283791670955126;
    p = p * z + -0.37612638903183754;
    p = p * z + 1.1283791670955126;
    return x * p;
  }
  if (s >= 6.0) return __builtin_copysign(1.0, x);
  double f = s;
  for (int k = 8 + (int)(200.0 / (s * s)); k > 0; --k) f = s + 0.5 * k / f;
  double h = s * s, l = __builtin_fma(s, s, -h);
  double erfc = tl_m64_exp(-h) * (1.0 - l) / (1.772453850905516 * f);
  return __builtin_copysign(1.0 - erfc, x);
}
// 64 bits of the little-endian 32-bit limbs p, from bit k up (p has two limbs to spare). The
// limbs are picked by comparison, not by a computed index, so that p stays in registers
// (indexed at run time it would live in scratch memory on AMD).
TL_MATH64 unsigned long long tl_m64_bits(const unsigned int* p, int k) {
  int w = k >> 5, s = k & 31;
  unsigned long long l0 = 0, l1 = 0, l2 = 0;
#pragma unroll
  for (int j = 0; j < 12; ++j) {
    l0 = j == w ? p[j] : l0;
    l1 = j == w + 1 ? p[j] : l1;
    l2 = j == w + 2 ? p[j] : l2;
  }
  unsigned long long v = l0 | (l1 << 32);
  return s ? (v >> s) | (l2 << (64 - s)) : v;
}
// x = n·pi/2 + (rh + rl) with |rh + rl| <= pi/4 (a hair more), for finite |x| > pi/4; returns
// n mod 4. Exact reduction at every magnitude (Payne and Hanek): x = m·2^E with m an integer of
// 53 bits, times 256 bits of 2/pi starting where the words stop mattering mod 4; the integer
// part mod 4 and 128 bits of fraction are read off the product.
TL_MATH64 int tl_m64_rem_pio2(double x, double* rh, double* rl) {
  // 2/pi in 32-bit words, most significant first: 1280 bits, for E up to 971.
  static constexpr unsigned int W[40] = {
      0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
      0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e,
      0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b,
      0xbdf9283b, 0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7,
      0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1,
      0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d};
  unsigned long long b = __builtin_bit_cast(unsigned long long, x) & 0x7fffffffffffffffull;
  int E = (int)(b >> 52) - 1075;
  unsigned long long m = (b & 0x000fffffffffffffull) | (1ull << 52);
  // Word i contributes m·W[i]·2^(E - 32(i + 1)): a multiple of 4 while E - 32(i + 1) >= 2.
  int i0 = E >= 2 ? (E - 2) >> 5 : 0;
  int q = 32 * (i0 + 8) - E;  // the binary point of the product, 223 <= q <= 309
  unsigned int p[12] = {0};
  unsigned int ml = (unsigned int)m, mh = (unsigned int)(m >> 32);
  unsigned long long c = 0;
  for (int j = 0; j < 8; ++j) {
    unsigned long long t = (unsigned long long)ml * W[i0 + 7 - j] + c;
    p[j] = (unsigned int)t;
    c = t >> 32;
  }
  p[8] = (unsigned int)c;
  c = 0;
  for (int j = 0; j < 8; ++j) {
    unsigned long long t = (unsigned long long)mh * W[i0 + 7 - j] + p[j + 1] + c;
    p[j + 1] = (unsigned int)t;
    c = t >> 32;
  }
  p[9] = (unsigned int)c;
  int n = (int)(tl_m64_bits(p, q) & 3);
  unsigned long long fh = tl_m64_bits(p, q - 64), fl = tl_m64_bits(p, q - 128);
  bool up = fh >> 63;  // fraction >= 1/2: the nearest multiple is n + 1, the rest 1 - fraction
  if (up) {
    n = (n + 1) & 3;
    fl = ~fl + 1;
    fh = ~fh + (fl == 0);
  }
  int lz =
      fh ? __builtin_clzll(fh) : 64 + __builtin_clzll(fl);  // never both zero: pi is irrational
  if (lz >= 64) {
    fh = fl << (lz - 64);
    fl = 0;
  } else if (lz > 0) {
    fh = (fh << lz) | (fl >> (64 - lz));
    fl <<= lz;
  }
  double hi = (double)(fh >> 11) * tl_m64_pow2i(-53 - lz);
  double lo =
      ((double)(fh & 0x7ff) * 18446744073709551616.0 + (double)fl) * tl_m64_pow2i(-128 - lz);
  // (hi + lo)·pi/2 in double-double.
  const double P1 = 1.5707963267948966, P2 = 6.123233995736766e-17;
  double r = hi * P1;
  double e = __builtin_fma(hi, P1, -r) + (hi * P2 + lo * P1);
  double h = r + e, l = e - (h - r);
  if (up) {
    h = -h;
    l = -l;
  }
  if (x < 0) {
    h = -h;
    l = -l;
    n = (4 - n) & 3;
  }
  *rh = h;
  *rl = l;
  return n;
}
// sin and cos of r + rl, |r| <= pi/4: Taylor to r^19 and r^20 (below 2^-56 relative there).
TL_MATH64 double tl_m64_sin_k(double r, double rl) {
  double z = r * r;
  double p = -8.22063524662433e-18;
  p = p * z + 2.8114572543455206e-15;
  p = p * z + -7.647163731819816e-13;
  p = p * z + 1.6059043836821613e-10;
  p = p * z + -2.505210838544172e-08;
  p = p * z + 2.7557319223985893e-06;
  p = p * z + -0.0001984126984126984;
  p = p * z + 0.008333333333333333;
  p = p * z + -0.16666666666666666;
  return r + (r * z * p + rl * (1.0 - 0.5 * z));
}
TL_MATH64 double tl_m64_cos_k(double r, double rl) {
  double z = r * r;
  double p = 4.110317623312165e-19;
  p = p * z + -1.5619206968586225e-16;
  p = p * z + 4.779477332387385e-14;
  p = p * z + -1.1470745597729725e-11;
  p = p * z + 2.08767569878681e-09;
  p = p * z + -2.755731922398589e-07;
  p = p * z + 2.48015873015873e-05;
  p = p * z + -0.001388888888888889;
  p = p * z + 0.041666666666666664;
  double h = 0.5 * z, w = 1.0 - h;
  return w + (((1.0 - w) - h) + (z * z * p - r * rl));
}
TL_MATH64 double tl_m64_sin(double x) {
  double a = __builtin_fabs(x);
  if (a < 0x1p-27) return x;
  if (a <= 0.7853981633974483) return tl_m64_sin_k(x, 0.0);
  if (!(a <= 1.7976931348623157e308)) return x - x;  // inf, NaN: NaN
  double r, rl;
  switch (tl_m64_rem_pio2(x, &r, &rl)) {
    case 0: return tl_m64_sin_k(r, rl);
    case 1: return tl_m64_cos_k(r, rl);
    case 2: return -tl_m64_sin_k(r, rl);
    default: return -tl_m64_cos_k(r, rl);
  }
}
TL_MATH64 double tl_m64_cos(double x) {
  double a = __builtin_fabs(x);
  if (a <= 0.7853981633974483) return tl_m64_cos_k(x, 0.0);
  if (!(a <= 1.7976931348623157e308)) return x - x;
  double r, rl;
  switch (tl_m64_rem_pio2(x, &r, &rl)) {
    case 0: return tl_m64_cos_k(r, rl);
    case 1: return -tl_m64_sin_k(r, rl);
    case 2: return -tl_m64_cos_k(r, rl);
    default: return tl_m64_sin_k(r, rl);
  }
}
// pow: the special cases of C99 Annex F, then exp(y·log|x|) with the sign of an odd integer y.
// y·log|x| carries log's error times |y·log|x||: within |y·log|x||·2^-52 relative, plus exp's.
TL_MATH64 double tl_m64_pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (x != x || y != y) return x + y;
  double ax = __builtin_fabs(x), ay = __builtin_fabs(y), inf = __builtin_inf();
  bool yint = __builtin_floor(y) == y;
  bool yodd = yint && ay < 9007199254740992.0 && __builtin_fmod(ay, 2.0) == 1.0;
  if (ay == inf) return ax == 1.0 ? 1.0 : ((ax < 1.0) == (y < 0.0) ? inf : 0.0);
  if (ax == 0.0) return y < 0.0 ? (yodd ? __builtin_copysign(inf, x) : inf) : (yodd ? x : 0.0);
  if (ax == inf) {
    double r = y < 0.0 ? 0.0 : inf;
    return x < 0.0 && yodd ? -r : r;
  }
  if (x < 0.0 && !yint) return __builtin_nan("");
  double r = tl_m64_exp(y * tl_m64_log(ax));
  return x < 0.0 && yodd ? -r : r;
}
// END f64 math
__device__ inline double exp(double x) { return tl_m64_exp(x); }
__device__ inline double exp2(double x) { return tl_m64_exp2(x); }
__device__ inline double log(double x) { return tl_m64_log(x); }
__device__ inline double sqrt(double x) { return __builtin_sqrt(x); }
__device__ inline double fabs(double x) { return __builtin_fabs(x); }
__device__ inline double fmod(double x, double y) { return __builtin_fmod(x, y); }
__device__ inline double tanh(double x) { return tl_m64_tanh(x); }
__device__ inline double erf(double x) { return tl_m64_erf(x); }
__device__ inline double sin(double x) { return tl_m64_sin(x); }
__device__ inline double cos(double x) { return tl_m64_cos(x); }
__device__ inline double pow(double x, double y) { return tl_m64_pow(x, y); }
__device__ inline double floor(double x) { return __builtin_floor(x); }
__device__ inline double ceil(double x) { return __builtin_ceil(x); }
__device__ inline double fma(double x, double y, double z) { return __builtin_fma(x, y, z); }
// f32 tanh, erf, sin, cos and pow have no instruction either: the f64 forms above, rounded
// once (slow on parts with little f64 throughput; hipcc with ROCm uses its device library).
__device__ inline float tanhf(float x) { return (float)tl_m64_tanh(x); }
__device__ inline float erff(float x) { return (float)tl_m64_erf(x); }
__device__ inline float sinf(float x) { return (float)tl_m64_sin(x); }
__device__ inline float cosf(float x) { return (float)tl_m64_cos(x); }
__device__ inline float powf(float x, float y) { return (float)tl_m64_pow(x, y); }
__device__ inline float floorf(float x) { return __builtin_floorf(x); }
__device__ inline float ceilf(float x) { return __builtin_ceilf(x); }
__device__ inline float fmaf(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
#endif
#define TL_DEVICE __device__ __forceinline__
#define TL_GLOBAL extern "C" __global__
#define TL_MAX_REGISTERS(r) __attribute__((amdgpu_num_vgpr(r)))
#define TL_WAVES_PER_EU(w) __attribute__((amdgpu_waves_per_eu(w)))
#if defined(__GFX9__)
#define TL_WAVE 64
#else
#define TL_WAVE 32
#endif
namespace tl {
typedef _Float16 half;
typedef __bf16 bfloat;
TL_DEVICE void sync() {
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
}
TL_DEVICE float to_float(half x) { return (float)x; }
TL_DEVICE float to_float(bfloat x) { return (float)x; }
template <class T> TL_DEVICE T from_float(float x) { return (T)x; }
template <class T> TL_DEVICE T from_double(double x) { return (T)x; }
template <class T> TL_DEVICE T shfl_xor(T v, int mask) {
  int lane = (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int src = lane ^ mask;
  static_assert(sizeof(T) <= 8, "shfl_xor: scalar types only");
  if constexpr (sizeof(T) == 8) {
    union {
      T v;
      int i[2];
    } u;
    u.v = v;
    u.i[0] = __builtin_amdgcn_ds_bpermute(src << 2, u.i[0]);
    u.i[1] = __builtin_amdgcn_ds_bpermute(src << 2, u.i[1]);
    return u.v;
  } else {
    union {
      T v;
      int i;
    } u;
    u.i = 0;
    u.v = v;
    u.i = __builtin_amdgcn_ds_bpermute(src << 2, u.i);
    return u.v;
  }
}
}  // namespace tl
#elif defined(TL_HOST_EMULATION)
// Host emulation of the device model (threads of a block as host threads), for testing the
// generated code's logic for either wave size without a GPU: see tl_host.h.
#include "tl_host.h"
#else
#error "tl.h: compile with nvcc, hipcc or clang -x hip (or with TL_HOST_EMULATION on the host)"
#endif

namespace tl {
typedef long long index;

// ---- scalar traits -------------------------------------------------------------------------
template <class T> struct is_half_like {
  static constexpr bool value = false;
};
template <> struct is_half_like<half> {
  static constexpr bool value = true;
};
template <> struct is_half_like<bfloat> {
  static constexpr bool value = true;
};
template <class T> struct is_bfloat {
  static constexpr bool value = false;
};
template <> struct is_bfloat<bfloat> {
  static constexpr bool value = true;
};
template <class T> struct is_float_like {
  static constexpr bool value = is_half_like<T>::value;
};
template <> struct is_float_like<float> {
  static constexpr bool value = true;
};
template <> struct is_float_like<double> {
  static constexpr bool value = true;
};
template <class T> struct unsigned_of {
  typedef T type;
};
template <> struct unsigned_of<int> {
  typedef unsigned int type;
};
template <> struct unsigned_of<long long> {
  typedef unsigned long long type;
};
template <class T> struct int_limits;
template <> struct int_limits<int> {
  static constexpr double lo = -2147483648.0, hi = 2147483647.0;
};
template <> struct int_limits<unsigned int> {
  static constexpr double lo = 0.0, hi = 4294967295.0;
};
template <> struct int_limits<unsigned char> {
  static constexpr double lo = 0.0, hi = 255.0;
};
template <> struct int_limits<long long> {
  static constexpr double lo = -9223372036854775808.0, hi = 9223372036854775807.0;
};

// A float-like value widened to float (or double for double).
TL_DEVICE float wide(half x) { return to_float(x); }
TL_DEVICE float wide(bfloat x) { return to_float(x); }
TL_DEVICE float wide(float x) { return x; }
TL_DEVICE double wide(double x) { return x; }
template <class T> TL_DEVICE T narrow(float x) {
  if constexpr (is_half_like<T>::value) return from_float<T>(x);
  else return (T)x;
}
template <class T> TL_DEVICE T narrow(double x) {
  if constexpr (is_half_like<T>::value) return from_double<T>(x);
  else return (T)x;
}

// A literal of type T.
template <class T> TL_DEVICE T lit(double v) {
  if constexpr (is_half_like<T>::value) return from_double<T>(v);
  else return (T)v;
}

TL_DEVICE float fmod_(float a, float b) { return fmodf(a, b); }
TL_DEVICE double fmod_(double a, double b) { return ::fmod(a, b); }

// ---- arithmetic: IEEE for floats (halves through float, one rounding per operation as on the
// CPU backend), wrapping for integers -------------------------------------------------------
// Halves on NVIDIA use the f16 instructions (HADD2/HMUL2, one lane): the same bits, since f32
// carries 24 >= 2*11 + 1 significant bits, so rounding the exact result to f32 and then to f16
// gives the correctly rounded f16 result of +, - and * (double rounding is innocuous there);
// through f32 each operation costs three instructions where the f16 one costs one.
#if defined(TL_NVIDIA)
#define TL_HALF_OP(op, a, b) \
  if constexpr (is_half_like<T>::value && !is_bfloat<T>::value) return op(a, b);
#else
#define TL_HALF_OP(op, a, b)
#endif
template <class T> TL_DEVICE T add(T a, T b) {
  TL_HALF_OP(__hadd, a, b)
  if constexpr (is_float_like<T>::value) return narrow<T>(wide(a) + wide(b));
  else return (T)((typename unsigned_of<T>::type)a + (typename unsigned_of<T>::type)b);
}
template <class T> TL_DEVICE T sub(T a, T b) {
  TL_HALF_OP(__hsub, a, b)
  if constexpr (is_float_like<T>::value) return narrow<T>(wide(a) - wide(b));
  else return (T)((typename unsigned_of<T>::type)a - (typename unsigned_of<T>::type)b);
}
template <class T> TL_DEVICE T mul(T a, T b) {
  TL_HALF_OP(__hmul, a, b)
  if constexpr (is_float_like<T>::value) return narrow<T>(wide(a) * wide(b));
  else return (T)((typename unsigned_of<T>::type)a * (typename unsigned_of<T>::type)b);
}
#undef TL_HALF_OP
// Integer division by zero is a kernel bug (the CPU backend reports it); here it yields 0.
template <class T> TL_DEVICE T div(T a, T b) {
  if constexpr (is_float_like<T>::value) return narrow<T>(wide(a) / wide(b));
  else return b == 0 ? (T)0 : (T)(a / b);
}
template <class T> TL_DEVICE T rem(T a, T b) {
  if constexpr (is_float_like<T>::value) return narrow<T>(fmod_(wide(a), wide(b)));
  else return b == 0 ? (T)0 : (T)(a % b);
}
template <class T> TL_DEVICE T neg(T a) {
  if constexpr (is_float_like<T>::value) return narrow<T>(-wide(a));
  else return (T)((typename unsigned_of<T>::type)0 - (typename unsigned_of<T>::type)a);
}
template <class T> TL_DEVICE T div_ceil(T a, T b) {
  if (b == 0) return (T)0;
  T q = a / b, r = a % b;
  return (r != 0 && ((r > 0) == (b > 0))) ? (T)(q + 1) : q;
}
template <class T> TL_DEVICE T shl(T a, T n) {
  return (T)(a << ((int)n & (int)(sizeof(T) * 8 - 1)));
}
template <class T> TL_DEVICE T shr(T a, T n) {
  return (T)(a >> ((int)n & (int)(sizeof(T) * 8 - 1)));
}

// ---- comparisons on half-like values go through float --------------------------------------
// An index bound as an int, saturated: comparing a tile coordinate (0 <= j < 2^31 - 1) with
// it gives the same answer as with the 64-bit bound.
TL_DEVICE int clamp32(index v) {
  return v > 2147483647 ? 2147483647 : v < -2147483647 ? -2147483647 : (int)v;
}
template <class T> TL_DEVICE auto cmpv(T a) {
  if constexpr (is_half_like<T>::value) return to_float(a);
  else return a;
}

// ---- casts: float → int saturates (NaN → 0), int → int wraps, everything else rounds to nearest
template <class To, class From> TL_DEVICE To cast(From x) {
  if constexpr (__is_same(To, From)) {
    return x;
  } else if constexpr (is_float_like<From>::value && is_float_like<To>::value) {
    if constexpr (sizeof(From) == 8 || sizeof(To) == 8) return narrow<To>((double)wide(x));
    else return narrow<To>(wide(x));
  } else if constexpr (is_float_like<From>::value) {
    double v = (double)wide(x);
    if (v != v) return (To)0;
    if constexpr (!__is_same(To, bool)) {
      if (v <= int_limits<To>::lo) return (To)int_limits<To>::lo;
      if (v >= int_limits<To>::hi) return (To)int_limits<To>::hi;
    }
    return (To)v;
  } else if constexpr (is_float_like<To>::value) {
    if constexpr (sizeof(From) == 8) return narrow<To>((double)x);
    else return narrow<To>((float)x);
  } else {
    return (To)x;
  }
}

// An integer x in [LO, LO + 1024) (LO in [-1024, 0]; the lowering proves the range) as a half,
// the value `cast` gives: the half whose bits are 0x6400 | (x - LO) is 1024 + (x - LO) exactly
// (halves are 1 apart in [1024, 2048)), and subtracting 1024 - LO is exact. An integer op and
// a half subtraction instead of two conversions (unpacking int4 weights, say).
template <int LO>
TL_DEVICE half small_int_to_half(int x) {
  static_assert(LO >= -1024 && LO <= 0, "LO in [-1024, 0]");
  constexpr unsigned short BIAS = 1024 - LO < 2048 ? 0x6400 + (-LO) : 0x6800;  // 1024 - LO
  const unsigned short bits = (unsigned short)(0x6400 | (x - LO));
#if defined(TL_NVIDIA)
  return __hsub(__ushort_as_half(bits), __ushort_as_half(BIAS));
#else
  return (half)(__builtin_bit_cast(half, bits) - __builtin_bit_cast(half, BIAS));
#endif
}

// PTX's byte permute: byte i of the result is byte `(sel >> 4i) & 7` of b:a (a the low word).
TL_DEVICE uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t sel) {
#if defined(TL_NVIDIA)
  return __byte_perm(a, b, sel);
#else
  const uint64_t x = (uint64_t)b << 32 | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= (uint32_t)(x >> (8 * ((sel >> (4 * i)) & 7)) & 0xFF) << (8 * i);
  return r;
#endif
}

// N bytes' nibbles as 2N halves, each nibble plus OFF, a byte's low nibble first
// (HIGH_FIRST: its high one): `(((x >> s) & 15) as int + OFF) as f16` for the lowering's
// nibble pairs (lower/vectorize.rs `Nibbles`: int4 weights unpacked). A byte permute spreads
// two bytes into a register's 16-bit lanes; masking a nibble and or-ing in 0x6400 gives the
// half 1024 + n (halves are 1 apart in [1024, 2048)), or 1024 + 16n for the high nibble; a
// subtraction, or a multiply-add by 1/16, leaves n + OFF, exactly. Two halves an operation:
// per element, the shift, mask, or and pack cost W4A16's consumers 55% of the ALU pipe.
template <int OFF, bool HIGH_FIRST, int N = 4>
TL_DEVICE void nibbles_to_half(const unsigned char* p, half* out) {
  static_assert(OFF >= -1024 && OFF <= 1024, "OFF in [-1024, 1024]: exact halves");
  static_assert(N % 4 == 0, "whole words of bytes");
  uint32_t w[N / 4], r[N];
  __builtin_memcpy(w, p, N);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const uint32_t x = byte_perm(w[i / 2], 0u, i % 2 ? 0x4342u : 0x4140u);
    uint32_t lo, hi, l, h;
#if defined(TL_NVIDIA)
    // (x & mask) | 0x64006400 as one instruction (nvcc otherwise emits two: a logic operation
    // encodes one immediate), the magic number in a register.
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(lo) : "r"(x), "n"(0x000F000F), "r"(0x64006400u));
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(hi) : "r"(x), "n"(0x00F000F0), "r"(0x64006400u));
    __half2 a, b;
    __builtin_memcpy(&a, &lo, 4);
    __builtin_memcpy(&b, &hi, 4);
    a = __hsub2(a, __float2half2_rn(1024.0f - OFF));
    b = __hfma2(b, __float2half2_rn(0.0625f), __float2half2_rn(OFF - 64.0f));
    __builtin_memcpy(&l, &a, 4);
    __builtin_memcpy(&h, &b, 4);
#else
    lo = (x & 0x000F000Fu) | 0x64006400u;
    hi = (x & 0x00F000F0u) | 0x64006400u;
    half a[2], b[2];
    __builtin_memcpy(a, &lo, 4);
    __builtin_memcpy(b, &hi, 4);
    for (int j = 0; j < 2; ++j) {
      a[j] = (half)((float)a[j] - (1024.0f - OFF));
      b[j] = (half)((float)b[j] * 0.0625f + (OFF - 64.0f));
    }
    __builtin_memcpy(&l, a, 4);
    __builtin_memcpy(&h, b, 4);
#endif
    r[2 * i] = byte_perm(l, h, HIGH_FIRST ? 0x1054u : 0x5410u);
    r[2 * i + 1] = byte_perm(l, h, HIGH_FIRST ? 0x3276u : 0x7632u);
  }
  __builtin_memcpy(out, r, 4 * N);
}

// ---- math functions: halves compute in float and round once --------------------------------
TL_DEVICE float exp_(float x) { return expf(x); }
TL_DEVICE double exp_(double x) { return ::exp(x); }
TL_DEVICE float exp2_(float x) { return exp2f(x); }
TL_DEVICE double exp2_(double x) { return ::exp2(x); }
TL_DEVICE float log_(float x) { return logf(x); }
TL_DEVICE double log_(double x) { return ::log(x); }
TL_DEVICE float sqrt_(float x) { return sqrtf(x); }
TL_DEVICE double sqrt_(double x) { return ::sqrt(x); }
TL_DEVICE float abs_(float x) { return fabsf(x); }
TL_DEVICE double abs_(double x) { return ::fabs(x); }
template <class T> TL_DEVICE T exp(T x) { return narrow<T>(exp_(wide(x))); }
template <class T> TL_DEVICE T exp2(T x) { return narrow<T>(exp2_(wide(x))); }
template <class T> TL_DEVICE T log(T x) { return narrow<T>(log_(wide(x))); }
template <class T> TL_DEVICE T sqrt(T x) { return narrow<T>(sqrt_(wide(x))); }
template <class T> TL_DEVICE T rsqrt(T x) { return narrow<T>(1.0f / sqrt_(wide(x))); }
template <> TL_DEVICE double rsqrt<double>(double x) { return 1.0 / ::sqrt(x); }
template <class T> TL_DEVICE T abs(T x) {
  if constexpr (is_float_like<T>::value) return narrow<T>(abs_(wide(x)));
  else if constexpr (T(-1) < T(0)) return x < 0 ? neg(x) : x;
  else return x;
}
TL_DEVICE float tanh_(float x) { return tanhf(x); }
TL_DEVICE double tanh_(double x) { return ::tanh(x); }
TL_DEVICE float erf_(float x) { return erff(x); }
TL_DEVICE double erf_(double x) { return ::erf(x); }
TL_DEVICE float sin_(float x) { return sinf(x); }
TL_DEVICE double sin_(double x) { return ::sin(x); }
TL_DEVICE float cos_(float x) { return cosf(x); }
TL_DEVICE double cos_(double x) { return ::cos(x); }
TL_DEVICE float pow_(float x, float y) { return powf(x, y); }
TL_DEVICE double pow_(double x, double y) { return ::pow(x, y); }
TL_DEVICE float floor_(float x) { return floorf(x); }
TL_DEVICE double floor_(double x) { return ::floor(x); }
TL_DEVICE float ceil_(float x) { return ceilf(x); }
TL_DEVICE double ceil_(double x) { return ::ceil(x); }
TL_DEVICE float fma_(float x, float y, float z) { return fmaf(x, y, z); }
TL_DEVICE double fma_(double x, double y, double z) { return ::fma(x, y, z); }
#if defined(TL_NVIDIA)
// The fast hardware forms, for halves only, where they stay within the halves' documented
// 2 ulp: tanh.approx.f32 is within 2^-10.9 relative (PTX ISA), ex2.approx and rcp.approx
// within 2^-21.
TL_DEVICE float tanh_fast(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
TL_DEVICE float sigmoid_fast(float x) {
  const float e = __expf(-fabsf(x)), r = __frcp_rn(1.0f + e);
  return x >= 0.0f ? r : e * r;
}
#endif
// 1 / (1 + e^-x) as e^-|x| over 1 + e^-|x|: e^-|x| never overflows, so a very negative `x`
// gives e^x / (1 + e^x), down into the subnormals, instead of 1 / (1 + inf) = 0 (f32 below
// -88.7: measured on the H200, 2026-12-05). NaN stays NaN.
template <class F> TL_DEVICE F sigmoid_stable(F x) {
  const F e = exp_(x >= F(0) ? -x : x), r = F(1) / (F(1) + e);
  return x >= F(0) ? r : e * r;
}
template <class T> TL_DEVICE T tanh(T x) {
#if defined(TL_NVIDIA)
  if constexpr (is_half_like<T>::value) return narrow<T>(tanh_fast(wide(x)));
#endif
  return narrow<T>(tanh_(wide(x)));
}
template <class T> TL_DEVICE T sigmoid(T x) {
#if defined(TL_NVIDIA)
  if constexpr (is_half_like<T>::value) return narrow<T>(sigmoid_fast(wide(x)));
#endif
  return narrow<T>(sigmoid_stable(wide(x)));
}
template <class T> TL_DEVICE T erf(T x) { return narrow<T>(erf_(wide(x))); }
template <class T> TL_DEVICE T sin(T x) { return narrow<T>(sin_(wide(x))); }
template <class T> TL_DEVICE T cos(T x) { return narrow<T>(cos_(wide(x))); }
template <class T> TL_DEVICE T floor(T x) { return narrow<T>(floor_(wide(x))); }
template <class T> TL_DEVICE T ceil(T x) { return narrow<T>(ceil_(wide(x))); }
template <class T> TL_DEVICE T pow(T x, T y) { return narrow<T>(pow_(wide(x), wide(y))); }
// Halves: the product of two is exact in float, so this rounds twice, as the CPU backend.
template <class T> TL_DEVICE T fma(T x, T y, T z) {
  return narrow<T>(fma_(wide(x), wide(y), wide(z)));
}
// max/min: with one NaN operand the other is returned (IEEE maxNum, as the CPU backend).
template <class T> TL_DEVICE T max(T a, T b) {
  if constexpr (is_float_like<T>::value) {
    auto x = wide(a), y = wide(b);
    return (x != x || y > x) ? b : a;
  } else return b > a ? b : a;
}
template <class T> TL_DEVICE T min(T a, T b) {
  if constexpr (is_float_like<T>::value) {
    auto x = wide(a), y = wide(b);
    return (x != x || y < x) ? b : a;
  } else return b < a ? b : a;
}

// ---- reductions -----------------------------------------------------------------------------
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

// ---- tile copies ------------------------------------------------------------------------------
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

// ---- matrix products ---------------------------------------------------------------------------
// FMA path: acc (M×N, owned by threads in the strided layout: element L = reg·THREADS + tid)
// += A (M×K, shared) · B (K×N, shared), in increasing k, products rounded to the acc type.
template <class A, class C, int M, int N, int K, int THREADS, int NREG>
TL_DEVICE void gemm_fma(const A* __restrict__ a, const A* __restrict__ b, C* acc) {
#pragma unroll
  for (int r = 0; r < NREG; ++r) {
    const int L = r * THREADS + TL_TID;
    if (L < M * N) {
      const int i = L / N, j = L % N;
      C x = acc[r];
      for (int k = 0; k < K; ++k) x = add(x, mul(cast<C>(a[i * K + k]), cast<C>(b[k * N + j])));
      acc[r] = x;
    }
  }
}

// FMA path with the accumulator in shared memory (when it is also read in other layouts).
template <class A, class C, int M, int N, int K, int THREADS>
TL_DEVICE void gemm_fma_shared(const A* __restrict__ a, const A* __restrict__ b, C* acc) {
  for (int e = TL_TID; e < M * N; e += THREADS) {
    const int i = e / N, j = e % N;
    C x = acc[e];
    for (int k = 0; k < K; ++k) x = add(x, mul(cast<C>(a[i * K + k]), cast<C>(b[k * N + j])));
    acc[e] = x;
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
TL_DEVICE void ldmatrix_x2_trans(uint32_t* r, const void* p) {
  const uint32_t s = smem_addr(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(s));
}

// One k-step of 16 of gemm_mma with operands fetched by ldmatrix: A's m16k16 fragment is the
// four 8×8 matrices (rows 0-7 | 8-15) × (k 0-7 | 8-15) of the tile, in the order of the mma
// operand registers; B's k16n8 fragment is (k 0-7 | 8-15) of 8 columns, transposed, so that a
// lane holds the k-pairs of its column. Needs K and N multiples of 8 (16-byte rows).
template <class T, int M, int N, int K, int WM, int WN, bool SWA, bool SWB>
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
      const int row = wm * TM + mt * 16 + mi + 8 * (mj % 2);
      ldmatrix_x4(af[mt], a + sidx<SWA, K>(row, k0 + 8 * (mj / 2)));
    }
#pragma unroll
    for (int nt = 0; nt + 1 < NT; nt += 2) {
      // matrix mj: k + 8·(mj % 2), columns of tile nt + mj / 2
      uint32_t r[4];
      const int k = k0 + mi + 8 * (mj % 2);
      ldmatrix_x4_trans(r, b + sidx<SWB, N>(k, wn * TN + (nt + mj / 2) * 8));
      bf[nt][0] = r[0];
      bf[nt][1] = r[1];
      bf[nt + 1][0] = r[2];
      bf[nt + 1][1] = r[3];
    }
    if constexpr (NT % 2 == 1) {
      const int k = k0 + mi + 8 * (mj % 2);
      ldmatrix_x2_trans(bf[NT - 1], b + sidx<SWB, N>(k, wn * TN + (NT - 1) * 8));
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_op<T>::run(acc + (mt * NT + nt) * 4, af[mt], bf[nt]);
  }
}

// acc (the mma layout above) += A (M×K, row-major) · B (K×N, row-major), both in shared memory
// as the block tiles; the block is WM·WN warps. Operands are fetched with ldmatrix when the rows
// allow it (16-byte rows, 16-byte aligned shared memory: a check uniform over the block), else
// element by element. SWA / SWB: the operand is a swizzled tile (see `swz`).
template <class T, int M, int N, int K, int WM, int WN, bool SWA = false, bool SWB = false>
TL_DEVICE void gemm_mma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  constexpr int TM = M / WM, TN = N / WN, MT = TM / 16, NT = TN / 8;
  if constexpr ((SWA || SWB) && K % 8 == 0 && N % 8 == 0) {
    // The emitter swizzles only shared tiles at 16-byte aligned offsets, and gemm operands are
    // always shared: no check needed.
    gemm_mma_ldmatrix<T, M, N, K, WM, WN, SWA, SWB>(a, b, acc);
    return;
  } else if constexpr (K % 8 == 0 && N % 8 == 0 && sizeof(T) == 2) {
    const bool ok = __isShared(a) && __isShared(b) &&
                    ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) & 15) == 0;
    if (ok) {
      gemm_mma_ldmatrix<T, M, N, K, WM, WN, SWA, SWB>(a, b, acc);
      return;
    }
  }
  const int lane = TL_TID % 32, warp = TL_TID / 32;
  const int wm = warp / WN, wn = warp % WN;
  const int g = lane / 4, t = lane % 4;
  for (int k0 = 0; k0 < K; k0 += 16) {
    uint32_t af[MT][4];
    uint32_t bf[NT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int r0 = wm * TM + mt * 16 + g, c0 = k0 + 2 * t;
      const auto A = [&](int r, int c) { return a[sidx<SWA, K>(r, c)]; };
      af[mt][0] = pack2(A(r0, c0), A(r0, c0 + 1));
      af[mt][1] = pack2(A(r0 + 8, c0), A(r0 + 8, c0 + 1));
      af[mt][2] = pack2(A(r0, c0 + 8), A(r0, c0 + 9));
      af[mt][3] = pack2(A(r0 + 8, c0 + 8), A(r0 + 8, c0 + 9));
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int r0 = k0 + 2 * t, c0 = wn * TN + nt * 8 + g;
      const auto B = [&](int r, int c) { return b[sidx<SWB, N>(r, c)]; };
      bf[nt][0] = pack2(B(r0, c0), B(r0 + 1, c0));
      bf[nt][1] = pack2(B(r0 + 8, c0), B(r0 + 9, c0));
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
template <class T, int M, int N, int K, int WM, int WN, bool SWA = false, bool SWB = false>
TL_DEVICE void gemm_mma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(TL_WAVE == 32, "mma.sync: emulate NVIDIA sources with TL_WAVE=32");
  constexpr int REGS = (M / WM) * (N / WN) / 32;
  for (int r = 0; r < REGS; ++r) {
    int row, col;
    mma_coord<M, N, WM, WN>(r, row, col);
    float d = acc[r];
    for (int k = 0; k < K; ++k)
      d += to_float(a[sidx<SWA, K>(row, k)]) * to_float(b[sidx<SWB, N>(k, col)]);
    acc[r] = d;
  }
}
#endif

// ---- Persistent blocks ----------------------------------------------------------------------------
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

// ---- Hopper warpgroup MMA (wgmma, sm_90a) -------------------------------------------------------
// acc += A (M×K) · B (K×N), both shared tiles in the ATOMS layout (`sidx`), f32 accumulators.
// The block is WG warpgroups of 128 threads (4 consecutive warps); warpgroup g owns rows
// [64g, 64g + 64) and every column: M = 64·WG, one m64nNk16 instruction per 16 of K. The
// accumulator layout is then gemm_mma's with WM = 4·WG warps and WN = 1 (register 4j + q of a
// thread: row 16·warp + lane / 4 + 8·(q / 2), column 8j + 2·(lane % 4) + q % 2), which is how
// the PTX ISA lays out a wgmma D fragment; `mma_coord` serves both.
//
// The operands are read by the tensor cores through 64-bit shared-memory matrix descriptors
// (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the start address >> 4, 16-29 the leading
// dimension byte offset (LBO) >> 4, 32-45 the stride byte offset (SBO) >> 4, 49-51 the base
// offset (0: atoms start on multiples of 1024 bytes), 62-63 the swizzle (1 = 128-byte,
// 2 = 64-byte, 3 = 32-byte). A is K-major (K contiguous): SBO is the 8-row group's stride,
// 8 rows of an atom; LBO is unused with a swizzle. B is MN-major (N contiguous, the `tnspB`
// bit set): SBO is the stride between 8-row groups of K, LBO the stride between 64-column
// atoms. A k16 step advances A's start by 32 bytes within an atom (to the next atom every
// 64 of K) and B's by 16 rows of an atom. These values were confirmed on an H200 for 128-byte
// atoms by a standalone probe (shared/LOWERING.md §4).
// BEGIN wgmma layout
#ifndef TL_WGMMA_LAYOUT
#define TL_WGMMA_LAYOUT TL_DEVICE constexpr
#endif
namespace wg {
// The swizzle mode of atoms whose rows are `row_bytes` long.
TL_WGMMA_LAYOUT int mode(int row_bytes) { return row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : 3; }
// A descriptor for operand bytes at shared address `addr` (the bits above the 18-bit shared
// window are dropped, as the hardware does).
TL_WGMMA_LAYOUT uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo, int mode) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
         (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | (uint64_t)mode << 62;
}
// The atom width (columns) of a 16-bit ATOMS tile with COLS columns.
template <int COLS> TL_WGMMA_LAYOUT int atom() { return COLS >= 64 ? 64 : COLS; }
// A's descriptor for warpgroup g and k-step k0 (a multiple of 16), A at shared address `a`.
template <int M, int K>
TL_WGMMA_LAYOUT uint64_t desc_a(uint32_t a, int g, int k0) {
  constexpr int W = atom<K>(), RB = 2 * W;
  const uint32_t at = a + (uint32_t)((k0 / W) * (M * RB) + g * 64 * RB + (k0 % W) * 2);
  return desc(at, 16, 8 * RB, mode(RB));
}
// B's descriptor for k-step k0, B at shared address `b`.
template <int K, int N>
TL_WGMMA_LAYOUT uint64_t desc_b(uint32_t b, int k0) {
  constexpr int W = atom<N>(), RB = 2 * W;
  return desc(b + (uint32_t)(k0 * RB), K * RB, 8 * RB, mode(RB));
}
// Whether the lowering may use wgmma for these tile shapes (the layout pass asks the same).
template <int M, int N, int K, int WG>
TL_WGMMA_LAYOUT bool fits() {
  return M == 64 * WG && (N == 64 || N == 128 || N == 256) && (K == 32 || K % 64 == 0);
}
}  // namespace wg
// END wgmma layout

#if defined(TL_NVIDIA)
template <class T, int N> struct wgmma_op;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// m64nNk16 with both operands from shared memory, f32 accumulators, D += A·B (scale-d 1), A
// K-major, B MN-major (imm-trans-b 1).
template <> struct wgmma_op<half, 64> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
template <> struct wgmma_op<bfloat, 64> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
template <> struct wgmma_op<half, 128> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
template <> struct wgmma_op<bfloat, 128> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
template <> struct wgmma_op<half, 256> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, "
        "%88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, "
        "%104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
template <> struct wgmma_op<bfloat, 256> {
  TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, "
        "%88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, "
        "%104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(1)
        : "memory");
  }
};
TL_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
TL_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
TL_DEVICE void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared memory written by ordinary stores (and cp.async) becomes visible to the tensor
// cores' async proxy only after this fence in each writing thread, then a barrier.
TL_DEVICE void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#endif

// The barrier of kernels whose gemms run on wgmma: every thread's earlier shared-memory writes
// are fenced for the async proxy first (see fence_proxy_async).
TL_DEVICE void sync_async_proxy() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  fence_proxy_async();
#endif
  __syncthreads();
}
// A barrier among the block's first N threads (N a multiple of 32): the consumers of a
// warp-specialised entry, whose producer warpgroup never meets it. Named barrier 1 (0 is
// __syncthreads').
template <int N>
TL_DEVICE void consumer_sync() {
  static_assert(N % 32 == 0, "whole warps");
  asm volatile("bar.sync 1, %0;\n" ::"n"(N) : "memory");
}
template <int N>
TL_DEVICE void consumer_sync_async_proxy() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  fence_proxy_async();
#endif
  consumer_sync<N>();
}

// ---- The tensor memory accelerator (TMA, sm_90) and mbarriers ----------------------------------
// A tensor map (CUtensorMap: 128 opaque bytes the host encodes with cuTensorMapEncodeTiled) is a
// `const __grid_constant__` kernel parameter; the copy engine reads it through its address.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};
// An mbarrier in shared memory, initialised by one thread with `count` expected arrivals; the
// init is made visible to the copy engine by the fence, to the block by a barrier after it.
TL_DEVICE void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
               :
               : "r"(smem_addr(bar)), "r"(count)
               : "memory");
}
TL_DEVICE void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` the copy engine will deliver to this phase.
TL_DEVICE void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               :
               : "r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
// One arrival (a consumer done with a stage).
TL_DEVICE void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Warp specialisation (sm_90a): a warpgroup gives registers back (the producer) or takes them
// (the consumers); needs __launch_bounds__(threads, 1) and every warp of the warpgroup.
template <int N>
TL_DEVICE void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
TL_DEVICE void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
// Waits until the phase of parity `parity` has completed (all arrivals and all bytes).
TL_DEVICE void mbar_wait(uint64_t* bar, int parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
// A box of the tensor `map` at coordinates `c` (innermost first, elements; outside the tensor
// the box reads zeros) into shared memory at `dst`, completing on `bar`. RANK 2 to 5.
template <int RANK>
TL_DEVICE void tma_load(void* dst, const TensorMap* map, uint64_t* bar, const int* c) {
  static_assert(RANK >= 2 && RANK <= 5, "tma_load: rank 2 to 5");
  const uint32_t d = smem_addr(dst), b = smem_addr(bar);
  if constexpr (RANK == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
        "{%3, %4}], [%2];\n"
        :
        : "r"(d), "l"(map), "r"(b), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (RANK == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
        "{%3, %4, %5}], [%2];\n"
        :
        : "r"(d), "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (RANK == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
        "{%3, %4, %5, %6}], [%2];\n"
        :
        : "r"(d), "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
        "{%3, %4, %5, %6, %7}], [%2];\n"
        :
        : "r"(d), "l"(map), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}
// ---- TMA stores: a tile leaves shared memory through the copy engine -------------------------------
// The box of `map` at coordinates `c` (innermost first) from shared memory at `src` (in the
// map's swizzle), elements outside the tensor not written; one thread issues it, into its own
// bulk group (`bulk_commit`). `src` may be written again once `bulk_wait_read` says the copy
// has read it; the global writes are done once `bulk_wait` says so.
template <int RANK>
TL_DEVICE void tma_store(const TensorMap* map, const void* src, const int* c) {
  static_assert(RANK >= 2 && RANK <= 5, "tma_store: rank 2 to 5");
  const uint32_t s = smem_addr(src);
  if constexpr (RANK == 2) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 :
                 : "l"(map), "r"(s), "r"(c[0]), "r"(c[1])
                 : "memory");
  } else if constexpr (RANK == 3) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 :
                 : "l"(map), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2])
                 : "memory");
  } else if constexpr (RANK == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
        :
        : "l"(map), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
        :
        : "l"(map), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}
TL_DEVICE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// At most N of this thread's bulk groups still read shared memory.
template <int N>
TL_DEVICE void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// At most N of this thread's bulk groups are not complete.
template <int N>
TL_DEVICE void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// The 128 threads of warpgroup g: named barrier 2 + g (1 is consumer_sync's).
TL_DEVICE void warpgroup_sync(int g) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + g) : "memory");
}
// stmatrix .x4: four 8 × 8 matrices of 16-bit values; lane l gives the shared address of row
// l % 8 of matrix l / 8, and in v[i] the two values of row l / 4, columns 2·(l % 4) + {0, 1}
// of matrix i (an mma accumulator's own layout).
TL_DEVICE void stmatrix_x4(void* row, const uint32_t* v) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
               :
               : "r"(smem_addr(row)), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}
// Issues the K / 16 instructions of acc += A·B as one wgmma group and returns at once: the
// accumulator and the operand tiles belong to the tensor cores until a `wgmma_wait` says the
// group is done (the warp-specialised loop keeps one group in flight this way).
template <class T, int M, int N, int K, int WG>
TL_DEVICE void gemm_wgmma_async(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(wg::fits<M, N, K, WG>(), "gemm_wgmma: tile shapes the lowering does not pick");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const uint32_t sa = smem_addr(a), sb = smem_addr(b);
  const int g = TL_TID / 128;
  wgmma_fence();
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16)
    wgmma_op<T, N>::run(acc, wg::desc_a<M, K>(sa, g, k0), wg::desc_b<K, N>(sb, k0));
  wgmma_commit();
#else
  static_assert(sizeof(T) == 0, "gemm_wgmma needs sm_90a (compute_90a)");
#endif
}

template <class T, int M, int N, int K, int WG>
TL_DEVICE void gemm_wgmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  gemm_wgmma_async<T, M, N, K, WG>(a, b, acc);
  wgmma_wait<0>();
#else
  // Only sm_90a objects call this; another arch compiling it is the emitter's error.
  static_assert(sizeof(T) == 0, "gemm_wgmma needs sm_90a (compute_90a)");
#endif
}
#elif defined(TL_HOST)
// Host emulation of the sm_90a primitives above (tl_host.h): wgmma reads its operands through
// the descriptors tl.h computes, at the addresses a model of the hardware gives
// (tl_host::a_addr, b_addr), and each thread accumulates the elements of the D fragment's
// layout (`mma_coord` with one warp per 16 rows) when a wait covers the group; TMA writes its
// boxes in the swizzle of the map; mbarriers are state machines in shared memory. Fences and
// register reallocation have nothing to do on the host.
TL_DEVICE void fence_proxy_async() {}
TL_DEVICE void sync_async_proxy() { sync(); }
template <int N>
TL_DEVICE void consumer_sync() {
  tl_host::named_sync(1, N);
}
template <int N>
TL_DEVICE void consumer_sync_async_proxy() {
  consumer_sync<N>();
}
TL_DEVICE void wgmma_fence() {}
TL_DEVICE void wgmma_commit() { tl_host::detail::wgmma.commit(); }
template <int N>
TL_DEVICE void wgmma_wait() {
  tl_host::detail::wgmma.wait(N);
}
// The operands one m64nNk16 instruction reads for this thread's share of D: A at its two
// rows (16·warp + lane / 4 and 8 below), B at its columns (8j + 2·(lane % 4) + {0, 1}), as
// the descriptors say, read from shared memory now.
template <class T, int N>
struct WgmmaOperands {
  T a[2][16], b[16][N / 4];
  static WgmmaOperands read(uint64_t da, uint64_t db) {
    const tl_host::Desc a = tl_host::decode(da), b = tl_host::decode(db);
    if (a.base || b.base)
      tl_host::detail::fail("wgmma: descriptors with a base offset are not modelled");
    const int lane = TL_TID % 32, warp = TL_TID % 128 / 32;
    WgmmaOperands o;
    for (int h = 0; h < 2; ++h)
      for (int k = 0; k < 16; ++k)
        __builtin_memcpy(&o.a[h][k], tl_smem + tl_host::a_addr(a, 16 * warp + lane / 4 + 8 * h, k),
                         sizeof(T));
    for (int k = 0; k < 16; ++k)
      for (int c = 0; c < N / 4; ++c)
        __builtin_memcpy(&o.b[k][c],
                         tl_smem + tl_host::b_addr(b, k, 8 * (c / 2) + 2 * (lane % 4) + c % 2),
                         sizeof(T));
    return o;
  }
  bool operator==(const WgmmaOperands& o) const {
    return __builtin_memcmp(this, &o, sizeof(o)) == 0;
  }
};
// One m64nNk16 instruction of this thread's warpgroup, issued with operands `at_issue`:
// the tensor cores may read them at any moment until the wait that covers the group, so
// they must not change meanwhile (a missing barrier before the gemm, or a stage released
// before its group is done, changes them here); then its share of D += A·B.
template <class T, int N>
TL_DEVICE void wgmma_run(float* d, uint64_t da, uint64_t db, const WgmmaOperands<T, N>& at_issue) {
  if (!(WgmmaOperands<T, N>::read(da, db) == at_issue))
    tl_host::detail::fail(
        "wgmma: an operand in shared memory changed between the issue and the wait");
  for (int j = 0; j < N / 8; ++j)
    for (int q = 0; q < 4; ++q) {
      float x = d[4 * j + q];
      for (int k = 0; k < 16; ++k)
        x += to_float(at_issue.a[q / 2][k]) * to_float(at_issue.b[k][2 * j + q % 2]);
      d[4 * j + q] = x;
    }
}
template <class T, int M, int N, int K, int WG>
TL_DEVICE void gemm_wgmma_async(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(wg::fits<M, N, K, WG>(), "gemm_wgmma: tile shapes the lowering does not pick");
  const uint32_t sa = smem_addr(a), sb = smem_addr(b);
  const int g = TL_TID / 128;
  if (g >= WG) tl_host::detail::fail("gemm_wgmma: a thread outside the gemm's warpgroups");
  wgmma_fence();
  for (int k0 = 0; k0 < K; k0 += 16) {
    const uint64_t da = wg::desc_a<M, K>(sa, g, k0), db = wg::desc_b<K, N>(sb, k0);
    auto ops = std::make_shared<WgmmaOperands<T, N>>(WgmmaOperands<T, N>::read(da, db));
    tl_host::detail::wgmma.open.push_back(
        [acc, da, db, ops] { wgmma_run<T, N>(acc, da, db, *ops); });
  }
  wgmma_commit();
}
template <class T, int M, int N, int K, int WG>
TL_DEVICE void gemm_wgmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  gemm_wgmma_async<T, M, N, K, WG>(a, b, acc);
  wgmma_wait<0>();
}
typedef tl_host::TensorMap TensorMap;
TL_DEVICE void mbar_init(uint64_t* bar, int count) { tl_host::mbar::init(bar, count); }
TL_DEVICE void mbar_fence_init() {}
TL_DEVICE void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  tl_host::mbar::update(bar, 1, bytes);
}
TL_DEVICE void mbar_arrive(uint64_t* bar) { tl_host::mbar::update(bar, 1, 0); }
TL_DEVICE void mbar_wait(uint64_t* bar, int parity) { tl_host::mbar::wait(bar, parity); }
template <int N> TL_DEVICE void setmaxnreg_dec() {}
template <int N> TL_DEVICE void setmaxnreg_inc() {}
template <int RANK>
TL_DEVICE void tma_load(void* dst, const TensorMap* map, uint64_t* bar, const int* c) {
  tl_host::tma_load((unsigned char*)dst, *map, bar, c, RANK);
}
template <int RANK>
TL_DEVICE void tma_store(const TensorMap* map, const void* src, const int* c) {
  tl_host::tma_store(*map, (const unsigned char*)src, c, RANK);
}
TL_DEVICE void bulk_commit() { tl_host::detail::bulk.commit(); }
template <int N>
TL_DEVICE void bulk_wait_read() {
  tl_host::detail::bulk.wait(N);
}
template <int N>
TL_DEVICE void bulk_wait() {
  tl_host::detail::bulk.wait(N);
}
TL_DEVICE void warpgroup_sync(int g) { tl_host::named_sync(2 + g, 128); }
// stmatrix .x4 as the PTX ISA describes it: each lane's row address reaches the lanes that
// hold that row (a shuffle per matrix), which store their two values there.
TL_DEVICE void stmatrix_x4(void* row, const uint32_t* v) {
  const int lane = TL_TID % 32;
  const uint32_t mine = smem_addr(row);
  for (int i = 0; i < 4; ++i) {
    const uint32_t at = shfl_xor(mine, lane ^ (8 * i + lane / 4));
    __builtin_memcpy(tl_smem + at + 4 * (lane % 4), &v[i], 4);
  }
}
#endif
#if defined(TL_NVIDIA) || defined(TL_HOST)
// A region origin `off` (outermost first, as the printer gives it) as TMA coordinates
// (innermost first).
template <int RANK>
TL_DEVICE void inner_first(const index* off, int* c) {
#pragma unroll
  for (int i = 0; i < RANK; ++i) c[i] = (int)off[RANK - 1 - i];
}
// A tile of ROWS × COLS 16-bit elements in the ATOMS layout (`sidx`) from the tensor region
// whose origin is `off` (outermost first, RANK of them): one box of ROWS × W per 64-column (or
// narrower) atom, at columns off + a·W, each into its atom's block of shared memory.
template <int RANK, int ROWS, int COLS, class T>
TL_DEVICE void tma_tile(T* dst, const TensorMap* map, uint64_t* bar, const index* off) {
  constexpr int W = COLS >= 64 ? 64 : COLS;
  int c[RANK];
  inner_first<RANK>(off, c);
#pragma unroll
  for (int a = 0; a < COLS / W; ++a) {
    tma_load<RANK>(dst + a * ROWS * W, map, bar, c);
    c[0] += W;
  }
}
// The epilogue of a wgmma accumulator (f32, `mma_coord`'s layout with one warp per 16 rows and
// N columns) whose tile leaves through TMA stores: warpgroup g's 64 rows go out as 64 × 64
// boxes, columns [64s, 64s + 64) for s = 0, 1, ..., each staged in one of the warpgroup's two
// 8 KiB buffers at `stage` (1024-byte aligned; buffer b of warpgroup g at (2g + b)·8192) in
// the 128-byte swizzle of the map (16-byte chunk c of row r at chunk c ^ r % 8), converted
// to T, by stmatrix, then stored by the warpgroup's first thread at the region origin `off`
// (outermost first) + (64g, 64s) in its last two dimensions. Before a buffer is written
// again, the store that read it has finished reading (two stores ago; at s = 0 all of them,
// as the previous tile may have stored an odd number); the caller waits for the last stores
// (`bulk_wait<0>`, first thread of each warpgroup) before the block ends.
template <class T, int N, int RANK>
TL_DEVICE void store_acc_tma(const float* acc, unsigned char* stage, const TensorMap* map,
                             const index* off) {
  static_assert(N % 64 == 0 && sizeof(T) == 2, "store_acc_tma: 16-bit outputs, 64-column boxes");
  const int g = TL_TID / 128, lane = TL_TID % 32, w = TL_TID % 128 / 32;
  const bool first = TL_TID % 128 == 0;
#pragma unroll
  for (int s = 0; s < N / 64; ++s) {
    unsigned char* buf = stage + (2 * g + (s & 1)) * 8192;
    if (first) {
      if (s == 0) bulk_wait_read<0>();
      else bulk_wait_read<1>();
    }
    warpgroup_sync(g);
#pragma unroll
    for (int jj = 0; jj < 8; jj += 2) {
      uint32_t v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = 8 * s + jj + i / 2, h = i % 2;
        v[i] = pack2<T>(cast<T, float>(acc[4 * j + 2 * h]), cast<T, float>(acc[4 * j + 2 * h + 1]));
      }
      // Matrix m of the four: rows 8·(m % 2) of this warp's 16, 16-byte column chunk jj + m / 2.
      const int m = lane / 8, r = 16 * w + 8 * (m % 2) + lane % 8, c = jj + m / 2;
      stmatrix_x4(buf + r * 128 + ((c ^ (r % 8)) << 4), v);
    }
    fence_proxy_async();
    warpgroup_sync(g);
    if (first) {
      int c[RANK];
      inner_first<RANK>(off, c);
      c[0] += 64 * s;
      c[1] += 64 * g;
      tma_store<RANK>(map, buf, c);
      bulk_commit();
    }
  }
}
// A plain row-major tile, one box, from the region whose origin is `off` (outermost first).
template <int RANK, class T>
TL_DEVICE void tma_box(T* dst, const TensorMap* map, uint64_t* bar, const index* off) {
  int c[RANK];
  inner_first<RANK>(off, c);
  tma_load<RANK>(dst, map, bar, c);
}
#endif

// ---- AMD matrix units: WMMA (RDNA3, RDNA4) and MFMA (CDNA) ----------------------------------------
// `gemm` with the f32 accumulator in a matrix-unit layout. As for mma.sync above, the block's waves
// form a WM × WN grid; wave (wm, wn) owns rows [wm·M/WM, +M/WM) and columns [wn·N/WN, +N/WN) of
// the block tile, as MT × NT instruction tiles of IM × IN. Register r of a lane holds element q of
// the accumulator vector of instruction tile (mt, nt), r = (mt·NT + nt)·CE + q. Operands come
// from shared memory, A row-major (M, K) and B row-major (K, N), IK values of k per step. The
// block has exactly WM·WN waves of WAVE lanes (32 for WMMA, 64 for MFMA).
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
//   __builtin_amdgcn_mfma_f32_32x32x8{f16,bf16_1k}(4 x 16-bit A, 4 x 16-bit B, 16 x f32 C, 0, 0, 0):
//     A[m][k]: lane m + 32·(k / 4), element e == k % 4
//     B[k][n]: lane n + 32·(k / 4), element e == k % 4
//     D[m][n]: lane n + 32·((m / 4) % 2), element q == 4·(m / 8) + m % 4
//   CDNA2/CDNA3, v_mfma_f32_16x16x16{f16,bf16_1k}, wave64, one block,
//   __builtin_amdgcn_mfma_f32_16x16x16{f16,bf16_1k}(4 x 16-bit A, 4 x 16-bit B, 4 x f32 C, 0, 0, 0):
//     A[m][k]: lane m + 16·(k / 4), element e == k % 4
//     B[k][n]: lane n + 16·(k / 4), element e == k % 4
//     D[m][n]: lane n + 16·(m / 4), element q == m % 4
//
// Source: AMD Matrix Instruction Calculator 1.3.2 (github.com/ROCm/amd_matrix_instruction_calculator,
// `matrix_calculator.py -a RDNA3|RDNA4|CDNA2|CDNA3 -i INSTRUCTION -A|-B|-D --matrix-layout`), which
// tabulates the register layouts of AMD's ISA guides; every lane and element of the four
// instructions (f16 and bf16) was compared with it, and tests/hip.rs keeps spot checks. The C/D
// mappings also match what others observed on hardware: RDNA3's interleaved rows on gfx1151
// (github.com/ROCm/FlyDSL/pull/485), RDNA4's 8-row halves on gfx1201
// (github.com/ROCm/legacy-rocm-build/issues/6025, github.com/warpfront/hipfire/pull/140).
// Only the m, n and C/D mappings are observable in the product: a permutation of k applied alike to
// A and B leaves A·B unchanged; the k mappings are nonetheless those documented.
//
// The index math is pure (no device state) so that tests/hip.rs can compile the section between the
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

// An instruction: WAVE lanes; tile IM × IN × IK; AE operand elements and CE accumulator elements a
// lane. a_row(lane) / b_col(lane): the row of A / column of B a lane's operand holds; ab_k(lane, e):
// the k of its element e (the same for A and B); c(lane, q): the (row, col) of accumulator element q.
struct Wmma11 {
  static constexpr int WAVE = 32, IM = 16, IN = 16, IK = 16, AE = 16, CE = 8;
  TL_LAYOUT static int a_row(int lane) { return lane % 16; }
  TL_LAYOUT static int b_col(int lane) { return lane % 16; }
  TL_LAYOUT static int ab_k(int, int e) { return e; }
  TL_LAYOUT static rc c(int lane, int q) { return rc{2 * q + lane / 16, lane % 16}; }
};
struct Wmma12 {
  static constexpr int WAVE = 32, IM = 16, IN = 16, IK = 16, AE = 8, CE = 8;
  TL_LAYOUT static int a_row(int lane) { return lane % 16; }
  TL_LAYOUT static int b_col(int lane) { return lane % 16; }
  TL_LAYOUT static int ab_k(int lane, int e) { return 8 * (e / 4) + 4 * (lane / 16) + e % 4; }
  TL_LAYOUT static rc c(int lane, int q) { return rc{q + 8 * (lane / 16), lane % 16}; }
};
struct Mfma32 {
  static constexpr int WAVE = 64, IM = 32, IN = 32, IK = 8, AE = 4, CE = 16;
  TL_LAYOUT static int a_row(int lane) { return lane % 32; }
  TL_LAYOUT static int b_col(int lane) { return lane % 32; }
  TL_LAYOUT static int ab_k(int lane, int e) { return 4 * (lane / 32) + e; }
  TL_LAYOUT static rc c(int lane, int q) {
    return rc{8 * (q / 4) + 4 * (lane / 32) + q % 4, lane % 32};
  }
};
struct Mfma16 {
  static constexpr int WAVE = 64, IM = 16, IN = 16, IK = 16, AE = 4, CE = 4;
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
  // Index in the row-major (M, K) tile of element e of thread tid's A operand for m-tile mt, step k0.
  TL_LAYOUT static int a_index(int tid, int K, int mt, int k0, int e) {
    const int lane = tid % I::WAVE, wm = tid / I::WAVE / WN;
    return (wm * TM + mt * I::IM + I::a_row(lane)) * K + k0 + I::ab_k(lane, e);
  }
  // Index in the row-major (K, N) tile of element e of thread tid's B operand for n-tile nt, step k0.
  TL_LAYOUT static int b_index(int tid, int nt, int k0, int e) {
    const int lane = tid % I::WAVE, wn = tid / I::WAVE % WN;
    return (k0 + I::ab_k(lane, e)) * N + wn * TN + nt * I::IN + I::b_col(lane);
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

// The (row, col) in the block tile of accumulator register r (see gemm_wmma, gemm_wmma12, gemm_mfma).
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

// acc (registers, in tiling<I, M, N, WM, WN>'s layout) += A (M×K, shared) · B (K×N, shared).
// Every thread of the block calls it; the block has tiling::THREADS threads.
template <class I, class T, int M, int N, int K, int WM, int WN>
TL_DEVICE void gemm(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  typedef tiling<I, M, N, WM, WN> L;
  typedef op<I, T> O;
  static_assert(K % I::IK == 0, "K must be a multiple of the instruction's K");
#if defined(__HIP_DEVICE_COMPILE__)
  static_assert(I::WAVE == TL_WAVE, "the instruction's wave size is not the target's");
#endif
  const int tid = TL_TID;
  for (int k0 = 0; k0 < K; k0 += I::IK) {
    typename O::frag af[L::MT], bf[L::NT];
#pragma unroll
    for (int mt = 0; mt < L::MT; ++mt)
#pragma unroll
      for (int e = 0; e < I::AE; ++e) af[mt][e] = raw16(a[L::a_index(tid, K, mt, k0, e)]);
#pragma unroll
    for (int nt = 0; nt < L::NT; ++nt)
#pragma unroll
      for (int e = 0; e < I::AE; ++e) bf[nt][e] = raw16(b[L::b_index(tid, nt, k0, e)]);
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
template <class I, class T, int M, int N, int K, int WM, int WN>
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
            d += to_float(a[L::a_index(base + al[x], K, mt, k0, ae[x])]) *
                 to_float(b[L::b_index(base + bl[y], nt, k0, be[y])]);
          }
          acc[(mt * L::NT + nt) * I::CE + q] = d;
        }
}
}  // namespace mx
#endif

#if defined(TL_AMD) || defined(TL_HOST)
// RDNA3 WMMA (gfx11, wave32).
template <class T, int M, int N, int K, int WM, int WN>
TL_DEVICE void gemm_wmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<mx::Wmma11, T, M, N, K, WM, WN>(a, b, acc);
}
// RDNA4 WMMA (gfx12, wave32).
template <class T, int M, int N, int K, int WM, int WN>
TL_DEVICE void gemm_wmma12(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<mx::Wmma12, T, M, N, K, WM, WN>(a, b, acc);
}
// CDNA MFMA (gfx90a, gfx942, wave64): IM = 32 for 32x32x8 tiles, 16 for 16x16x16.
template <class T, int M, int N, int K, int WM, int WN, int IM>
TL_DEVICE void gemm_mfma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  mx::gemm<typename mx::mfma_of<IM>::type, T, M, N, K, WM, WN>(a, b, acc);
}
#endif
}  // namespace tl
