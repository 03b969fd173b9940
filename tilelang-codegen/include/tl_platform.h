// tl_platform.h: the platform layer of tl.h, one branch per way the library compiles:
//   * nvcc (NVIDIA): CUDA headers; this file maps the few HIP-dialect names we use;
//   * hipcc (AMD, ROCm present): HIP headers;
//   * clang -x hip -nogpulib -nogpuinc (AMD, no ROCm): no headers at all; the prelude below
//     supplies what device code needs from clang builtins (its math functions: tl_libm.h);
//   * the host, with TL_HOST_EMULATION: tl_host.h.
// Each defines what the rest of the library builds on: TL_DEVICE, TL_GLOBAL, TL_TID,
// TL_BID_{X,Y,Z}, TL_WAVE, tl::half and tl::bfloat with their conversions, tl::sync() and
// tl::shfl_xor.
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
// The C math functions the library calls, from builtins (no device libraries are linked).
#include "tl_libm.h"
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
// double to bf16, rounded once: to float rounded to odd (its 24 bits hold bf16's 8 and more
// than two to spare, so rounding that float to nearest-even is rounding the double), then to
// bf16. A plain (__bf16)x lets clang 19 fold (__bf16)(double)u32 into an integer-to-bf16
// conversion that the AMDGPU backend cannot select ("Cannot select: bf16 = uint_to_fp", seed
// 91b23bd8098b6288, docs/design/difftest.md §7).
template <class T> TL_DEVICE T from_double(double x) {
  if constexpr (__is_same(T, bfloat)) {
    float f = (float)x;
    if (f == f && (double)f != x) {
      unsigned b = __builtin_bit_cast(unsigned, f);
      if (__builtin_fabs((double)f) > __builtin_fabs(x)) b -= 1;  // toward zero
      f = __builtin_bit_cast(float, b | 1u);
    }
    return (T)f;
  } else return (T)x;
}
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
