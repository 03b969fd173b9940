// tl_hopper.h: Hopper (sm_90a): warpgroup MMA (wgmma) with its operands read through
// shared-memory descriptors, the tensor memory accelerator (TMA) with mbarriers, bulk stores
// and stmatrix, and warp specialisation; on the host, the emulation of all of it (tl_host.h).
#pragma once

#include "tl_mma.h"

namespace tl {
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
// B's descriptor for k-step k0, B at shared address `b`: MN-major (K, N), or, when KB (B
// marked `.t()`, stored (N, K)), K-major like A with N rows.
template <int K, int N, bool KB = false>
TL_WGMMA_LAYOUT uint64_t desc_b(uint32_t b, int k0) {
  if constexpr (KB) {
    return desc_a<N, K>(b, 0, k0);
  } else {
    constexpr int W = atom<N>(), RB = 2 * W;
    return desc(b + (uint32_t)(k0 * RB), K * RB, 8 * RB, mode(RB));
  }
}
// Whether the lowering may use wgmma for these tile shapes (the layout pass asks the same).
template <int M, int N, int K, int WG>
TL_WGMMA_LAYOUT bool fits() {
  return M == 64 * WG && (N == 64 || N == 128 || N == 256) && (K == 32 || K % 64 == 0);
}
}  // namespace wg
// END wgmma layout

#if defined(TL_NVIDIA)
template <class T, int N, bool KB = false> struct wgmma_op;
template <class T, int N, bool KB = false> struct wgmma_rs_op;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// m64nNk16, f32 accumulators, D += A·B (scale-d 1), B MN-major (imm-trans-b 1) or K-major
// when KB (a B marked `.t()`: imm-trans-b 0). `wgmma_op`: A and B from shared memory, A
// K-major (imm-trans-a 0). `wgmma_rs_op`: A from registers (the "RS" form), each thread's four
// 32-bit registers the m16n8k16 A fragment of its warp's 16 rows (a warpgroup's four warps
// hold its 64 rows; PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" of wgmma
// .m64nNk16). TL_WG_<form>_<N>(TY) is the instruction with its operand numbers (the N / 2
// accumulators first), TL_WG_D32 the accumulators' constraints.
#define TL_WG_D_64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TL_WG_SS_64(TY) \
  "setp.ne.b32 p, %34, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" TL_WG_D_64 \
  "}, %32, %33, p, 1, 1, 0, %35;\n"
#define TL_WG_RS_64(TY) \
  "setp.ne.b32 p, %37, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" TL_WG_D_64 \
  "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n"
#define TL_WG_D_128 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TL_WG_SS_128(TY) \
  "setp.ne.b32 p, %66, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" TL_WG_D_128 \
  "}, %64, %65, p, 1, 1, 0, %67;\n"
#define TL_WG_RS_128(TY) \
  "setp.ne.b32 p, %69, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" TL_WG_D_128 \
  "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n"
#define TL_WG_D_256 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define TL_WG_SS_256(TY) \
  "setp.ne.b32 p, %130, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " {" TL_WG_D_256 \
  "}, %128, %129, p, 1, 1, 0, %131;\n"
#define TL_WG_RS_256(TY) \
  "setp.ne.b32 p, %133, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " {" TL_WG_D_256 \
  "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n"
#define TL_WG_D8(i)                                                                           \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define TL_WG_D32(i) TL_WG_D8(i), TL_WG_D8(i + 8), TL_WG_D8(i + 16), TL_WG_D8(i + 24)
#define TL_WG_OPS(T, TY, N, ...)                                                      \
  template <bool KB> struct wgmma_op<T, N, KB> {                                     \
    TL_DEVICE static void run(float* d, uint64_t a, uint64_t b) {                    \
      asm volatile("{\n.reg .pred p;\n" TL_WG_SS_##N(TY) "}\n"                        \
                   : __VA_ARGS__                                                     \
                   : "l"(a), "l"(b), "r"(1), "n"(KB ? 0 : 1)                         \
                   : "memory");                                                      \
    }                                                                                \
  };                                                                                 \
  template <bool KB> struct wgmma_rs_op<T, N, KB> {                                  \
    TL_DEVICE static void run(float* d, const uint32_t* a, uint64_t b) {             \
      asm volatile("{\n.reg .pred p;\n" TL_WG_RS_##N(TY) "}\n"                        \
                   : __VA_ARGS__                                                     \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1),     \
                     "n"(KB ? 0 : 1)                                                 \
                   : "memory");                                                      \
    }                                                                                \
  };
TL_WG_OPS(half, "f16", 64, TL_WG_D32(0))
TL_WG_OPS(bfloat, "bf16", 64, TL_WG_D32(0))
TL_WG_OPS(half, "f16", 128, TL_WG_D32(0), TL_WG_D32(32))
TL_WG_OPS(bfloat, "bf16", 128, TL_WG_D32(0), TL_WG_D32(32))
TL_WG_OPS(half, "f16", 256, TL_WG_D32(0), TL_WG_D32(32), TL_WG_D32(64), TL_WG_D32(96))
TL_WG_OPS(bfloat, "bf16", 256, TL_WG_D32(0), TL_WG_D32(32), TL_WG_D32(64), TL_WG_D32(96))
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

// ---- The tensor memory accelerator (TMA, sm_90) and mbarriers -----------------------------------
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
// ---- TMA stores: a tile leaves shared memory through the copy engine ----------------------------
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
// KB: B stored (N, K) (marked `.t()`), read K-major.
template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma_async(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(wg::fits<M, N, K, WG>(), "gemm_wgmma: tile shapes the lowering does not pick");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const uint32_t sa = smem_addr(a), sb = smem_addr(b);
  const int g = TL_TID / 128;
  wgmma_fence();
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16)
    wgmma_op<T, N, KB>::run(acc, wg::desc_a<M, K>(sa, g, k0), wg::desc_b<K, N, KB>(sb, k0));
  wgmma_commit();
#else
  static_assert(sizeof(T) == 0, "gemm_wgmma needs sm_90a (compute_90a)");
#endif
}

template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  gemm_wgmma_async<T, M, N, K, WG, KB>(a, b, acc);
  wgmma_wait<0>();
#else
  // Only sm_90a objects call this; another arch compiling it is the emitter's error.
  static_assert(sizeof(T) == 0, "gemm_wgmma needs sm_90a (compute_90a)");
#endif
}

// acc += P·B with P (M×K) in registers: P laid out as a wgmma (or mma.sync, one m-tile a
// warp) accumulator of K columns, each warp 16 rows, so that its pairs of column tiles 2·kk
// and 2·kk + 1 are the A fragment of k-step kk (`mma_a_reg`, as gemm_mma_rs packs them).
// The registers are the tensor cores' until the wait: nothing writes them before it returns.
template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma_rs(const T* __restrict__ p, const T* __restrict__ b, float* acc) {
  static_assert(M == 64 * WG && (N == 64 || N == 128 || N == 256) && K % 16 == 0,
                "gemm_wgmma_rs: tile shapes the lowering does not pick");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const uint32_t sb = smem_addr(b);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    uint32_t a[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = mma_a_reg(K / 8, 0, kk, i);
      a[i] = pack2(p[r], p[r + 1]);
    }
    wgmma_rs_op<T, N, KB>::run(acc, a, wg::desc_b<K, N, KB>(sb, 16 * kk));
  }
  wgmma_commit();
  wgmma_wait<0>();
#else
  static_assert(sizeof(T) == 0, "gemm_wgmma_rs needs sm_90a (compute_90a)");
#endif
}
#elif defined(TL_HOST)
// Host emulation of the sm_90a primitives above (tl_host.h): wgmma reads its operands through
// the descriptors `wg::desc_a` and `desc_b` compute, at the addresses a model of the hardware
// gives (tl_host::a_addr, b_addr), and each thread accumulates the elements of the D fragment's
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
// the descriptors say (B K-major when KB), read from shared memory now.
template <class T, int N, bool KB>
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
      for (int c = 0; c < N / 4; ++c) {
        const int n = 8 * (c / 2) + 2 * (lane % 4) + c % 2;
        __builtin_memcpy(&o.b[k][c],
                         tl_smem + (KB ? tl_host::a_addr(b, n, k) : tl_host::b_addr(b, k, n)),
                         sizeof(T));
      }
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
template <class T, int N, bool KB>
TL_DEVICE void wgmma_run(float* d, uint64_t da, uint64_t db,
                         const WgmmaOperands<T, N, KB>& at_issue) {
  if (!(WgmmaOperands<T, N, KB>::read(da, db) == at_issue))
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
template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma_async(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  static_assert(wg::fits<M, N, K, WG>(), "gemm_wgmma: tile shapes the lowering does not pick");
  const uint32_t sa = smem_addr(a), sb = smem_addr(b);
  const int g = TL_TID / 128;
  if (g >= WG) tl_host::detail::fail("gemm_wgmma: a thread outside the gemm's warpgroups");
  wgmma_fence();
  for (int k0 = 0; k0 < K; k0 += 16) {
    const uint64_t da = wg::desc_a<M, K>(sa, g, k0), db = wg::desc_b<K, N, KB>(sb, k0);
    typedef WgmmaOperands<T, N, KB> Ops;
    auto ops = std::make_shared<Ops>(Ops::read(da, db));
    tl_host::detail::wgmma.open.push_back(
        [acc, da, db, ops] { wgmma_run<T, N, KB>(acc, da, db, *ops); });
  }
  wgmma_commit();
}
template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma(const T* __restrict__ a, const T* __restrict__ b, float* acc) {
  gemm_wgmma_async<T, M, N, K, WG, KB>(a, b, acc);
  wgmma_wait<0>();
}
// Host emulation of gemm_wgmma_rs: each thread's D elements from P(row, k), fetched from the
// lane of its warp whose register holds it (P in the D layout: row 16·warp + lane / 4 +
// 8·(q / 2), column 8j + 2·(lane % 4) + q % 2 in register 4j + q), and B through the
// descriptors `wg::desc_b` computes, as gemm_wgmma's emulation reads it.
template <class T, int M, int N, int K, int WG, bool KB = false>
TL_DEVICE void gemm_wgmma_rs(const T* __restrict__ p, const T* __restrict__ b, float* acc) {
  static_assert(M == 64 * WG && (N == 64 || N == 128 || N == 256) && K % 16 == 0,
                "gemm_wgmma_rs: tile shapes the lowering does not pick");
  static_assert(TL_WAVE == 32, "wgmma: emulate NVIDIA sources with TL_WAVE=32");
  if (TL_TID / 128 >= WG) tl_host::detail::fail("gemm_wgmma_rs: a thread outside the warpgroups");
  const uint32_t sb = smem_addr(b);
  const int lane = TL_TID % 32, g = lane / 4;
  // Every lane takes part in every shuffle, in the same order.
  T a[2][K];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < K; ++k)
      a[h][k] = shfl_xor(p[(k / 8) * 4 + 2 * h + k % 2], lane ^ (4 * g + k % 8 / 2));
  tl_host::Desc db[K / 16];
  for (int s = 0; s < K / 16; ++s) db[s] = tl_host::decode(wg::desc_b<K, N, KB>(sb, 16 * s));
  for (int j = 0; j < N / 8; ++j)
    for (int q = 0; q < 4; ++q) {
      const int n = 8 * j + 2 * (lane % 4) + q % 2;
      float x = acc[4 * j + q];
      for (int k = 0; k < K; ++k) {
        const tl_host::Desc& d = db[k / 16];
        T bv;
        __builtin_memcpy(&bv,
                         tl_smem + (KB ? tl_host::a_addr(d, n, k % 16) : tl_host::b_addr(d, k % 16, n)),
                         sizeof(T));
        x += to_float(a[q / 2][k]) * to_float(bv);
      }
      acc[4 * j + q] = x;
    }
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
}  // namespace tl
