// tl_libm.h: the C math functions the tile library calls, for AMD devices compiled without
// HIP headers or device libraries (clang -nogpuinc -nogpulib), from clang builtins where LLVM
// has an instruction or a libcall and computed with + and * where it has neither. Part of
// tl_platform.h's prelude for that case, which includes it; not a header of its own.
#pragma once

// f32 functions with an LLVM intrinsic.
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
