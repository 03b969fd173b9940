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
// NVIDIA sources (TL_WAVE=32) run here too, sm_90a's included: cp.async copies and wgmma groups
// are deferred until a wait covers them (`Groups`), an mbarrier is a state machine in its 8
// bytes of shared memory, a TMA copy writes its box in the map's swizzle, and wgmma reads its
// operands through its descriptors at the addresses a model of the hardware gives ("hopper
// reads"). The model is what tl.h's descriptors are tested against; it is not the hardware, so
// the emulation checks the generated code's logic (layouts, pipelines, barrier protocols)
// against the model, and only an H200 checks the model.
//
// Nothing here is meant to be fast; it is meant to be faithful to the device model.
#pragma once

#include <atomic>
#include <barrier>
#include <chrono>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <math.h>
#include <memory>
#include <mutex>
#include <stdint.h>
#include <string>
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

// One wave: its lane count (the last wave of a block may be partial), a barrier over those
// lanes and two exchange buffers, used alternately (see tl::shfl_xor).
struct Wave {
  explicit Wave(int lanes) : lanes(lanes), barrier(lanes) {}
  int lanes;
  std::barrier<> barrier;
  uint64_t slot[2][TL_WAVE] = {};
};

// The running block: a barrier over all its threads and its waves, and its named barriers
// (`bar.sync id, n`), each made by the first thread that meets it.
struct Block {
  explicit Block(int threads) : barrier(threads), threads(threads) {
    for (int base = 0; base < threads; base += TL_WAVE)
      waves.push_back(std::make_unique<Wave>(threads - base < TL_WAVE ? threads - base : TL_WAVE));
  }
  std::barrier<> barrier;
  int threads;
  std::vector<std::unique_ptr<Wave>> waves;
  std::mutex named_mutex;
  std::unique_ptr<std::barrier<>> named[16];
  int named_count[16] = {};
};

inline Block* block = nullptr;               // set by launch, for the duration of one launch
inline thread_local int shfl_parity = 0;     // which exchange buffer this lane's next shuffle uses

// Work a thread issued asynchronously (cp.async copies, wgmma groups), in committed groups.
// Nothing runs when issued: a group runs when a wait lets fewer groups than it stay pending,
// the latest moment the hardware may finish it. So a program that touches a copy's
// destination, a wgmma's operands or its accumulator before the wait that covers it sees the
// stale value here (on a GPU it might, or might not), and the emulation reports a mismatch.
struct Groups {
  std::vector<std::function<void()>> open;               // issued, not yet committed
  std::deque<std::vector<std::function<void()>>> done;   // committed, oldest first
  void commit() { done.push_back(std::move(open)); open.clear(); }
  // Runs the oldest groups until at most `n` stay pending, after a pause that lets the other
  // threads run ahead as far as the program allows them (a producer refilling a stage that this
  // thread released too early then overwrites it before the group reads it).
  void wait(int n) {
    if ((int)done.size() > n) std::this_thread::sleep_for(std::chrono::microseconds(200));
    while ((int)done.size() > n) {
      for (auto& f : done.front()) f();
      done.pop_front();
    }
  }
  // At the end of a block: what the block never waited for cannot matter to its results.
  void drop() { open.clear(); done.clear(); }
};
inline thread_local Groups cp_async, wgmma;
// TMA stores (cp.async.bulk groups): a store reads its box from shared memory when a wait
// covers it, so a buffer written again before `bulk_wait_read` says it was read goes out with the
// new values here; one never waited for fails at the end of the block (the caller must wait
// before the block's shared memory goes away).
inline thread_local Groups bulk;

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
  grid_dim[0] = gx, grid_dim[1] = gy, grid_dim[2] = gz;
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
            if (!detail::bulk.done.empty() || !detail::bulk.open.empty())
              detail::fail("tma_store: a bulk store still pending when its block ends (no bulk_wait<0>)");
            detail::cp_async.drop();
            detail::wgmma.drop();
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

// ---- Hopper (sm_90a) on the host -------------------------------------------------------------
// What tl.h's wgmma, TMA and mbarrier primitives do, for the emulation of NVIDIA sources: the
// shared-memory addresses the hardware computes from a matrix descriptor or for a TMA box (a
// model of the PTX ISA's canonical layouts; the 128-byte case as measured on an H200,
// shared/LOWERING.md §4), and an mbarrier as a state machine in its 8 bytes of shared memory.
namespace tl_host {
// `bar.sync id, n`: a barrier among the `n` threads that name it (the hardware counts warps;
// here threads), every use of an id with the same count.
inline void named_sync(int id, int n) {
  detail::Block& b = *detail::block;
  if (id < 1 || id > 15 || n < 1 || n > b.threads) detail::fail("named barrier: id 1..15, count within the block");
  std::barrier<>* bar;
  {
    std::lock_guard<std::mutex> lock(b.named_mutex);
    if (!b.named[id]) b.named[id] = std::make_unique<std::barrier<>>(n), b.named_count[id] = n;
    if (b.named_count[id] != n) detail::fail("named barrier: one id used with two thread counts");
    bar = b.named[id].get();
  }
  bar->arrive_and_wait();
}
inline uint32_t smem_offset(const void* p) {
  const unsigned char* b = (const unsigned char*)p;
  if (b < tl_smem || b >= tl_smem + sizeof(tl_smem)) detail::fail("a shared-memory operand outside shared memory");
  return (uint32_t)(b - tl_smem);
}
// BEGIN hopper reads
// A matrix descriptor's fields (PTX ISA, "Matrix Descriptor Format"): byte addresses and offsets.
struct Desc { uint32_t start, lbo, sbo; int mode, base; };
inline Desc decode(uint64_t d) {
  return {(uint32_t)(d & 0x3FFF) << 4, (uint32_t)(d >> 16 & 0x3FFF) << 4, (uint32_t)(d >> 32 & 0x3FFF) << 4,
          (int)(d >> 62), (int)(d >> 49 & 7)};
}
// The bytes of one row of a swizzle atom in mode `mode` (1 = 128-byte, 2 = 64, 3 = 32).
inline int row_bytes(int mode) { return mode == 1 ? 128 : mode == 2 ? 64 : 32; }
// The swizzle of a byte address: 128-byte mode XORs bits [4, 7) with [7, 10), 64-byte mode
// bits [4, 6) with [7, 9), 32-byte mode bit 4 with bit 7. TMA writes and wgmma reads alike.
inline uint32_t swizzled(uint32_t addr, int mode) {
  const int bits = mode == 1 ? 3 : mode == 2 ? 2 : 1;
  return addr ^ (((addr >> 7) & ((1u << bits) - 1)) << 4);
}
// Where wgmma reads element (r, k) of a K-major operand (A): rows in groups of 8, a row's 16
// k values contiguous, groups SBO apart.
inline uint32_t a_addr(const Desc& d, int r, int k) {
  return swizzled(d.start + (r / 8) * d.sbo + (r % 8) * row_bytes(d.mode) + 2 * k, d.mode);
}
// Where it reads element (k, n) of an MN-major operand (B, transposed): 8-row groups of k SBO
// apart, atoms of columns LBO apart.
inline uint32_t b_addr(const Desc& d, int k, int n) {
  const int w = row_bytes(d.mode) / 2;
  return swizzled(d.start + (n / w) * d.lbo + (k / 8) * d.sbo + (k % 8) * row_bytes(d.mode) + 2 * (n % w), d.mode);
}
// END hopper reads

// An mbarrier: bit 63 the phase's parity, bits [40, 63) the transaction bytes still expected
// (signed: a copy may complete before its bytes are announced), [20, 40) the arrivals a phase
// needs, [0, 20) those still missing. A phase completes when no arrival and no byte is
// missing; the next one then starts with every arrival missing.
namespace mbar {
struct State { uint64_t parity; int64_t tx; uint32_t count, pending; };
inline State unpack(uint64_t w) {
  int64_t tx = (int64_t)(w >> 40 & 0x7FFFFF);
  if (tx & 0x400000) tx -= 0x800000;
  return {w >> 63, tx, (uint32_t)(w >> 20 & 0xFFFFF), (uint32_t)(w & 0xFFFFF)};
}
inline uint64_t pack(const State& s) {
  return s.parity << 63 | ((uint64_t)s.tx & 0x7FFFFF) << 40 | (uint64_t)s.count << 20 | s.pending;
}
inline void init(uint64_t* bar, int count) {
  if (count < 1 || count >= (1 << 20)) detail::fail("mbarrier init: the arrival count is out of range");
  std::atomic_ref<uint64_t>(*bar).store(pack({0, 0, (uint32_t)count, (uint32_t)count}));
}
// `arrivals` arrivals and `bytes` more (or, negative, fewer) transaction bytes, atomically.
inline void update(uint64_t* bar, uint32_t arrivals, int64_t bytes) {
  std::atomic_ref<uint64_t> a(*bar);
  uint64_t w = a.load();
  for (;;) {
    State s = unpack(w);
    if (s.count == 0) detail::fail("mbarrier: used before its init");
    if (arrivals > s.pending) detail::fail("mbarrier: more arrivals than the phase expects");
    s.pending -= arrivals;
    s.tx += bytes;
    if (s.tx <= -(1 << 20) || s.tx >= (1 << 20)) detail::fail("mbarrier: transaction count out of the hardware's range (2^20 - 1)");
    if (s.pending == 0 && s.tx == 0) s = {s.parity ^ 1, 0, s.count, s.count};
    if (a.compare_exchange_weak(w, pack(s))) break;
  }
  a.notify_all();
}
// Waits until the phase of parity `parity` has completed: the current phase is the other one.
inline void wait(uint64_t* bar, int parity) {
  std::atomic_ref<uint64_t> a(*bar);
  for (uint64_t w = a.load();; w = a.load()) {
    if (unpack(w).count == 0) detail::fail("mbarrier: waited on before its init");
    if (unpack(w).parity != (uint64_t)(parity & 1)) return;
    a.wait(w);
  }
}
}  // namespace mbar

// A tensor map on the host: what cuTensorMapEncodeTiled takes, kept as it is given. The
// harness fills it from the same values the launcher gives the driver.
struct TensorMap {
  unsigned char* base;
  int rank, elem_bytes, swizzle;   // swizzle in bytes: 0, 32, 64 or 128
  long long dims[5];               // innermost first
  long long strides[5];            // bytes between indices of dimension d (strides[0] = elem_bytes)
  int box[5];
};
// What the hardware requires of a bulk tensor copy between shared memory at `at` and the box
// at coordinates `c` of `m`, and faults on (a misaligned innermost coordinate faults on an
// H200); returns the swizzle mode (0: none). `op` names the copy in a failure.
inline int box_mode(const TensorMap& m, uint32_t at, const int* c, int rank, const char* op) {
  const auto check = [op](bool ok, const char* what) {
    if (!ok) detail::fail((std::string(op) + ": " + what).c_str());
  };
  check(rank == m.rank, "the rank is not the map's");
  const int mode = m.swizzle == 128 ? 1 : m.swizzle == 64 ? 2 : m.swizzle == 32 ? 3 : 0;
  check(!mode || at % 1024 == 0, "a swizzled box's shared memory is not 1024-byte aligned");
  check(at % 128 == 0, "the shared memory is not 128-byte aligned");
  check(!mode || m.box[0] * m.elem_bytes == m.swizzle, "the box's rows are not the swizzle's width");
  check((long long)c[0] * m.elem_bytes % 16 == 0, "the innermost coordinate is not a multiple of 16 bytes");
  return mode;
}
// f(shared offset, inside the tensor, byte offset in the tensor) for each element of the box
// at `c` whose shared memory starts at `at`, in the swizzle `mode`.
template <class F>
inline void each_box_element(const TensorMap& m, const int* c, uint32_t at, int mode, F&& f) {
  long long n = 1;
  for (int d = 0; d < m.rank; ++d) n *= m.box[d];
  for (long long e = 0; e < n; ++e) {
    long long rest = e, off = 0;
    bool inside = true;
    for (int d = 0; d < m.rank; ++d) {
      const long long x = (long long)c[d] + rest % m.box[d];
      rest /= m.box[d];
      inside = inside && x >= 0 && x < m.dims[d];
      off += x * m.strides[d];
    }
    const uint32_t s = at + (uint32_t)(e * m.elem_bytes);
    f(mode ? swizzled(s, mode) : s, inside, off);
  }
}
// cp.async.bulk.tensor: the box at coordinates `c` (innermost first) into shared memory at
// `dst`, elements outside the tensor as zeros, written in the map's swizzle (the same address
// function wgmma reads with), then `bytes` of transaction completed on `bar`.
inline void tma_load(unsigned char* dst, const TensorMap& m, uint64_t* bar, const int* c, int rank) {
  const uint32_t d0 = smem_offset(dst);
  const int mode = box_mode(m, d0, c, rank, "tma_load");
  int64_t bytes = 0;
  each_box_element(m, c, d0, mode, [&](uint32_t s, bool inside, long long off) {
    if (inside) std::memcpy(tl_smem + s, m.base + off, m.elem_bytes);
    else std::memset(tl_smem + s, 0, m.elem_bytes);
    bytes += m.elem_bytes;
  });
  mbar::update(bar, 0, -bytes);
}
// cp.async.bulk.tensor from shared memory: the box at coordinates `c` from `src` (in the map's
// swizzle) into the tensor, elements outside it not written, when a bulk wait covers it (the
// shared memory is read then). The same requirements as a load.
inline void tma_store(const TensorMap& m, const unsigned char* src, const int* c, int rank) {
  const uint32_t s0 = smem_offset(src);
  const int mode = box_mode(m, s0, c, rank, "tma_store");
  std::vector<int> at(c, c + rank);
  detail::bulk.open.push_back([m, s0, mode, at] {
    each_box_element(m, at.data(), s0, mode, [&](uint32_t s, bool inside, long long off) {
      if (inside) std::memcpy(m.base + off, tl_smem + s, m.elem_bytes);
    });
  });
}
}  // namespace tl_host
