// tl_scalar.h: scalar semantics, as the CPU backend computes them: the index type, traits,
// arithmetic (IEEE for floats, wrapping for integers), comparisons, casts, the int4 → f16
// unpacking the lowering asks for, and math functions (halves through float, rounded once).
#pragma once

#include "tl_platform.h"

namespace tl {
typedef long long index;

// ---- scalar traits ------------------------------------------------------------------------------
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

// ---- comparisons on half-like values go through float -------------------------------------------
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
    // Through double where float would round first: 64-bit integers, every integer to double
    // (2^32 - 372 became 2^32 - 256 through float), and 32-bit ones to bf16 (2^24 + 2^16 + 1
    // became 2^24 through float, not the nearest bf16, 2^24 + 2^17). An f16 holds no integer
    // that float rounds.
    if constexpr (sizeof(From) == 8 || sizeof(To) == 8 ||
                  (sizeof(From) == 4 && is_bfloat<To>::value))
      return narrow<To>((double)x);
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

// ---- math functions: halves compute in float and round once -------------------------------------
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
// Signed integers of at most 32 bits compare as unsigned with the sign bit flipped (the same
// order): ptxas 13.0 for sm_90 fuses two signed maxima (or minima) into one VIMNMX3 and drops a
// negated operand's sign, so max(w, max(-t, j)) ran as max(w, max(t, j)); unsigned ones it keeps
// right (docs/design/difftest.md §7). tilelang-difftest's device_compile test asserts that no
// signed VIMNMX3 is left in any generated kernel's sm_90 or sm_90a object.
template <class T> struct flips_sign {
  static constexpr bool value = !is_float_like<T>::value && T(-1) < T(0) && sizeof(T) <= 4;
};
TL_DEVICE unsigned sign_flipped(int x) { return (unsigned)x ^ 0x80000000u; }
TL_DEVICE int sign_restored(unsigned k) { return (int)(k ^ 0x80000000u); }
// max/min: with one NaN operand the other is returned (IEEE maxNum, as the CPU backend).
template <class T> TL_DEVICE T max(T a, T b) {
  if constexpr (is_float_like<T>::value) {
    auto x = wide(a), y = wide(b);
    return (x != x || y > x) ? b : a;
  } else if constexpr (flips_sign<T>::value) {
    return (T)sign_restored(max(sign_flipped(a), sign_flipped(b)));
  } else return b > a ? b : a;
}
template <class T> TL_DEVICE T min(T a, T b) {
  if constexpr (is_float_like<T>::value) {
    auto x = wide(a), y = wide(b);
    return (x != x || y < x) ? b : a;
  } else if constexpr (flips_sign<T>::value) {
    return (T)sign_restored(min(sign_flipped(a), sign_flipped(b)));
  } else return b < a ? b : a;
}
}  // namespace tl
