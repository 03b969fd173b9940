// tl_host_block.h: a block's threads on the host (part of tl_host.h): `launch`, which runs a
// grid's blocks one at a time, each thread a host thread; the block's barrier (tl::sync) and
// named barriers; the waves' shuffles (tl::shfl_xor); and the groups of asynchronous work a
// thread issues (cp.async copies, wgmma groups, TMA stores), deferred until a wait covers them.
#pragma once

#include <barrier>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "tl_host_device.h"

namespace tl_host {
namespace detail {
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
  void commit() {
    done.push_back(std::move(open));
    open.clear();
  }
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
  void drop() {
    open.clear();
    done.clear();
  }
};
inline thread_local Groups cp_async, wgmma;
// TMA stores (cp.async.bulk groups): a store reads its box from shared memory when a wait
// covers it, so a buffer written again before `bulk_wait_read` says it was read goes out with the
// new values here; one never waited for fails at the end of the block (the caller must wait
// before the block's shared memory goes away).
inline thread_local Groups bulk;
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
  grid_dim[0] = gx;
  grid_dim[1] = gy;
  grid_dim[2] = gz;
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
            block_idx[0] = x;
            block_idx[1] = y;
            block_idx[2] = z;
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

// `bar.sync id, n`: a barrier among the `n` threads that name it (the hardware counts warps;
// here threads), every use of an id with the same count.
inline void named_sync(int id, int n) {
  detail::Block& b = *detail::block;
  if (id < 1 || id > 15 || n < 1 || n > b.threads) detail::fail("named barrier: id 1..15, count within the block");
  std::barrier<>* bar;
  {
    std::lock_guard<std::mutex> lock(b.named_mutex);
    if (!b.named[id]) {
      b.named[id] = std::make_unique<std::barrier<>>(n);
      b.named_count[id] = n;
    }
    if (b.named_count[id] != n) detail::fail("named barrier: one id used with two thread counts");
    bar = b.named[id].get();
  }
  bar->arrive_and_wait();
}
}  // namespace tl_host

namespace tl {
inline void sync() { tl_host::detail::block->barrier.arrive_and_wait(); }

// The value `v` of lane (lane ^ mask) of this wave (the lane index taken modulo the wave size,
// as ds_bpermute does). Each lane writes its value into the wave's exchange buffer, waits for the
// whole wave, and reads its partner's. The two buffers alternate, so one barrier per shuffle is
// enough: a lane can only write a buffer again after the next shuffle's barrier, which every
// lane reaches after reading this one.
template <class T> inline T shfl_xor(T v, int mask) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shfl_xor: scalar types only");
  const int tid = TL_TID;
  const int lane = tid % TL_WAVE;
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
