// tl_host_device.h: what device code names, on the host (part of tl_host.h): the wave size,
// the device keywords and the thread and block indices as macros over the emulation's
// variables, the shared memory of the running block, and the emulation's failure report.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdint.h>

#if !defined(TL_WAVE)
#error "tl_host.h: define TL_WAVE (32 or 64) as the wave size of the target the source was generated for"
#elif TL_WAVE != 32 && TL_WAVE != 64
#error "tl_host.h: TL_WAVE must be 32 or 64"
#endif

#define TL_HOST 1
// The device-code keywords mean nothing on the host.
#define __global__
#define __device__
#define __shared__
#define __launch_bounds__(...)
#define __grid_constant__
#define __syncthreads() ::tl::sync()
#define TL_MAX_REGISTERS(r)
#define TL_WAVES_PER_EU(w)
#define __forceinline__ inline
// `__restrict__` is a GNU extension that clang accepts in host C++ as it is.
#define TL_DEVICE inline
#define TL_GLOBAL extern "C"
#define TL_TID ((int)::tl_host::thread_idx)
#define TL_BID_X ((long long)::tl_host::block_idx[0])
#define TL_BID_Y ((long long)::tl_host::block_idx[1])
#define TL_BID_Z ((long long)::tl_host::block_idx[2])
#define TL_BLOCK_LINEAR (::tl_host::block_idx[0] + ::tl_host::grid_dim[0] * (::tl_host::block_idx[1] + ::tl_host::grid_dim[1] * ::tl_host::block_idx[2]))
#define TL_BLOCKS (::tl_host::grid_dim[0] * ::tl_host::grid_dim[1] * ::tl_host::grid_dim[2])
// tl.h's AMD atomics call clang's __hip_atomic_fetch_add, a builtin on every target; on the host
// only the scope's name is missing (the value is clang's: agent = 4).
#ifndef __HIP_MEMORY_SCOPE_AGENT
#define __HIP_MEMORY_SCOPE_AGENT 4
#endif

// The shared memory of the running block. Generated code declares it inside the kernel as
// `extern __shared__ unsigned char tl_smem[]`, which names this array.
#ifndef TL_HOST_SMEM_BYTES
#define TL_HOST_SMEM_BYTES (227 * 1024)  // the most a block may have on sm_90
#endif
extern "C" {
alignas(1024) inline unsigned char tl_smem[TL_HOST_SMEM_BYTES];  // as the ATOMS layout needs
}

namespace tl_host {
inline thread_local int thread_idx;
inline thread_local long long block_idx[3];
inline long long grid_dim[3];  // of the running launch

namespace detail {
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "tl_host: %s\n", what);
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

// The offset of a shared-memory operand (cp.async's and the Hopper primitives' addresses).
inline uint32_t smem_offset(const void* p) {
  const unsigned char* b = (const unsigned char*)p;
  if (b < tl_smem || b >= tl_smem + sizeof(tl_smem)) detail::fail("a shared-memory operand outside shared memory");
  return (uint32_t)(b - tl_smem);
}
}  // namespace tl_host
