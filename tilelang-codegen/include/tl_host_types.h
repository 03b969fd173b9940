// tl_host_types.h: tl.h's 16-bit float types on the host (part of tl_host.h): tl::half and
// tl::bfloat are clang's _Float16 and __bf16, with conversions that round to bf16 by hand.
#pragma once

#include <cfloat>
#include <math.h>
#include <stdint.h>

namespace tl_host {
namespace detail {
// bf16 rounding by hand: libgcc (which clang links by default) has no float → __bf16 routines.
inline __bf16 bf16_from_bits(uint16_t b) { return __builtin_bit_cast(__bf16, b); }
inline __bf16 bf16_round(float x) {
  uint32_t u = __builtin_bit_cast(uint32_t, x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16_from_bits((uint16_t)((u >> 16) | 0x40));  // NaN: quiet
  u += 0x7fffu + ((u >> 16) & 1);  // to nearest, ties to even; carries into the exponent as it should
  return bf16_from_bits((uint16_t)(u >> 16));
}
// double → bf16 in one rounding: round to float *to odd* (exact values stay, inexact ones get
// the sticky bit in the last place), then to bf16 to nearest; float has more than 8 + 2 bits.
inline __bf16 bf16_round(double x) {
  float f = (float)x;
  if (x == x && (double)f != x) {
    if (isinf(f)) f = copysignf(FLT_MAX, f);                 // |x| > FLT_MAX: toward zero
    else if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
    f = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, f) | 1u);
  }
  return bf16_round(f);
}
}  // namespace detail
}  // namespace tl_host

namespace tl {
typedef _Float16 half;
typedef __bf16 bfloat;
inline float to_float(half x) { return (float)x; }
inline float to_float(bfloat x) { return (float)x; }
template <class T> inline T from_float(float x) { return (T)x; }
template <> inline bfloat from_float<bfloat>(float x) { return tl_host::detail::bf16_round(x); }
template <class T> inline T from_double(double x) { return (T)x; }
template <> inline bfloat from_double<bfloat>(double x) { return tl_host::detail::bf16_round(x); }
}  // namespace tl

// clang passes a __bf16 argument of a function it does not inline as a float and truncates it
// in the callee with __truncsfbf2, which libgcc before 13 lacks; tl.h's bf16 math takes bf16 by
// value. A weak definition (a library's own wins), rounding as bf16_round does.
extern "C" __attribute__((weak)) __bf16 __truncsfbf2(float x) { return tl_host::detail::bf16_round(x); }
