// tl_host_hopper.h: Hopper (sm_90a) on the host (part of tl_host.h). What tl.h's wgmma, TMA and
// mbarrier primitives do, for the emulation of NVIDIA sources: the shared-memory addresses the
// hardware computes from a matrix descriptor or for a TMA box (a model of the PTX ISA's
// canonical layouts; the 128-byte case as measured on an H200, shared/LOWERING.md §4), and an
// mbarrier as a state machine in its 8 bytes of shared memory.
#pragma once

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "tl_host_block.h"

namespace tl_host {
// BEGIN hopper reads
// A matrix descriptor's fields (PTX ISA, "Matrix Descriptor Format"): byte addresses and offsets.
struct Desc {
  uint32_t start, lbo, sbo;
  int mode, base;
};
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
struct State {
  uint64_t parity;
  int64_t tx;
  uint32_t count, pending;
};
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
