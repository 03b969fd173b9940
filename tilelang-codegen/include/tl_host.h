// tl_host.h: the platform layer of tl.h for host emulation. tl.h includes it when
// TL_HOST_EMULATION is defined; the generated device code then compiles as ordinary C++20 and
// runs on the CPU, so its logic (thread mappings, barriers, wave-level reductions) can be tested
// for either wave size without a GPU:
//
//   clang++-19 -std=c++20 -O1 -DTL_HOST_EMULATION -DTL_WAVE=64 -pthread -I<include> harness.cpp
//
// The model: a block's T threads are T host threads (std::thread) sharing one shared-memory
// buffer, `tl_smem`; tl::sync() is a barrier over them; tl::shfl_xor exchanges values among the
// lanes of one wave (threads [w·TL_WAVE, (w+1)·TL_WAVE)) through a per-wave buffer and a per-wave
// barrier, so every lane of a wave must call it, as on a GPU. TL_WAVE must match the target the
// source was generated for (64 for gfx9, 32 otherwise). tl_host::launch runs every block of a
// grid, one block at a time (x fastest, then y, then z), with fresh shared memory for each; one
// launch at a time per process. TL_HOST tells tl.h's generic parts that they run here (tl.h
// emulates the matrix-unit gemms on the host under it).
//
// Nothing here is meant to be fast; it is meant to be faithful to the device model.
#pragma once

#include <barrier>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <memory>
#include <stdint.h>
#include <thread>
#include <type_traits>
#include <vector>

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
#define __launch_bounds__(n)
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
// tl.h's AMD atomics call clang's __hip_atomic_fetch_add, a builtin on every target; on the host
// only the scope's name is missing (the value is clang's: agent = 4).
#ifndef __HIP_MEMORY_SCOPE_AGENT
#define __HIP_MEMORY_SCOPE_AGENT 4
#endif

// The shared memory of the running block. Generated code declares it inside the kernel as
// `extern __shared__ unsigned char tl_smem[]`, which names this array.
#ifndef TL_HOST_SMEM_BYTES
#define TL_HOST_SMEM_BYTES (64 * 1024)
#endif
extern "C" {
alignas(256) inline unsigned char tl_smem[TL_HOST_SMEM_BYTES];
}

namespace tl_host {
inline thread_local int thread_idx;
inline thread_local long long block_idx[3];

namespace detail {
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "tl_host: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

// One wave: its lane count (the last wave of a block may be partial), a barrier over those
// lanes and two exchange buffers, used alternately (see tl::shfl_xor).
struct Wave {
  explicit Wave(int lanes) : lanes(lanes), barrier(lanes) {}
  int lanes;
  std::barrier<> barrier;
  uint64_t slot[2][TL_WAVE] = {};
};

// The running block: a barrier over all its threads and its waves.
struct Block {
  explicit Block(int threads) : barrier(threads) {
    for (int base = 0; base < threads; base += TL_WAVE)
      waves.push_back(std::make_unique<Wave>(threads - base < TL_WAVE ? threads - base : TL_WAVE));
  }
  std::barrier<> barrier;
  std::vector<std::unique_ptr<Wave>> waves;
};

inline Block* block = nullptr;               // set by launch, for the duration of one launch
inline thread_local int shfl_parity = 0;     // which exchange buffer this lane's next shuffle uses

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

// Runs `body` (a call of one kernel) for every block of the grid with `threads` threads each;
// `smem_bytes` of tl_smem are filled with 0xFF before each block (NaN for every float type), as
// shared memory holds garbage when a block starts on a GPU.
template <class F>
void launch(long long gx, long long gy, long long gz, int threads, size_t smem_bytes, F&& body) {
  if (threads < 1 || threads > 1024) detail::fail("launch: threads must be in 1..=1024");
  if (smem_bytes > sizeof(tl_smem)) detail::fail("launch: the kernel needs more shared memory than TL_HOST_SMEM_BYTES");
  detail::Block blk(threads);
  detail::block = &blk;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      thread_idx = t;
      for (long long z = 0; z < gz; ++z)
        for (long long y = 0; y < gy; ++y)
          for (long long x = 0; x < gx; ++x) {
            if (t == 0) std::memset(tl_smem, 0xFF, smem_bytes);
            blk.barrier.arrive_and_wait();  // shared memory is fresh before anyone starts
            block_idx[0] = x, block_idx[1] = y, block_idx[2] = z;
            body();
            blk.barrier.arrive_and_wait();  // everyone is done before it is reused
          }
    });
  }
  for (auto& th : pool) th.join();
  detail::block = nullptr;
}
}  // namespace tl_host

namespace tl {
typedef _Float16 half;
typedef __bf16 bfloat;
inline void sync() { tl_host::detail::block->barrier.arrive_and_wait(); }
inline float to_float(half x) { return (float)x; }
inline float to_float(bfloat x) { return (float)x; }
template <class T> inline T from_float(float x) { return (T)x; }
template <> inline bfloat from_float<bfloat>(float x) { return tl_host::detail::bf16_round(x); }
template <class T> inline T from_double(double x) { return (T)x; }
template <> inline bfloat from_double<bfloat>(double x) { return tl_host::detail::bf16_round(x); }

// The value `v` of lane (lane ^ mask) of this wave (the lane index taken modulo the wave size,
// as ds_bpermute does). Each lane writes its value into the wave's exchange buffer, waits for the
// whole wave, and reads its partner's. The two buffers alternate, so one barrier per shuffle is
// enough: a lane can only write a buffer again after the next shuffle's barrier, which every
// lane reaches after reading this one.
template <class T> inline T shfl_xor(T v, int mask) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shfl_xor: scalar types only");
  const int tid = TL_TID, lane = tid % TL_WAVE;
  tl_host::detail::Wave& w = *tl_host::detail::block->waves[tid / TL_WAVE];
  const int parity = tl_host::detail::shfl_parity;
  tl_host::detail::shfl_parity ^= 1;
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  w.slot[parity][lane] = bits;
  w.barrier.arrive_and_wait();
  const int src = (lane ^ mask) & (TL_WAVE - 1);
  if (src >= w.lanes) tl_host::detail::fail("shfl_xor: the partner lane lies past the end of the block (a partial wave)");
  T r;
  std::memcpy(&r, &w.slot[parity][src], sizeof(T));
  return r;
}
}  // namespace tl

// clang passes a __bf16 argument of a function it does not inline as a float and truncates it
// in the callee with __truncsfbf2, which libgcc before 13 lacks; tl.h's bf16 math takes bf16 by
// value. A weak definition (a library's own wins), rounding as bf16_round does.
extern "C" __attribute__((weak)) __bf16 __truncsfbf2(float x) { return tl_host::detail::bf16_round(x); }
