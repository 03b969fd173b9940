// tl.h: the header-only tile library that generated kernels are written against
// (`#include "tl.h"`). Generated code uses only what it defines: TL_TID, TL_BID_{X,Y,Z},
// tl::sync(), the tl:: scalar operations and the tile primitives.
//
// The library is split by concept into the headers below, each including those it builds on;
// this one includes them all, in that order:
//   tl_platform.h  the vendor branches (nvcc; hipcc; clang without HIP headers, whose math
//                  functions are tl_libm.h; host emulation, tl_host.h): includes, types,
//                  TL_DEVICE, thread indices, barriers, shuffles
//   tl_scalar.h    scalar semantics matching the CPU backend: arithmetic, comparisons, casts,
//                  math functions
//   tl_reduce.h    reductions with wave shuffles and exchanges; atomic adds
//   tl_copy.h      copies between global memory, shared memory and registers: 16-byte vectors,
//                  swizzled shared tiles, cp.async
//   tl_mma.h       matrix products on FMA and on mma.sync / ldmatrix (sm_80 on); persistent
//                  blocks' tile order
//   tl_hopper.h    sm_90a: wgmma, TMA, mbarriers, warp specialisation
//   tl_amd_mma.h   AMD matrix units: WMMA (RDNA3, RDNA4) and MFMA (CDNA)
//   tl_acc_rows.h  the rows of a matrix-unit accumulator, every instruction's, and reductions
//                  along them
// The build writes them all next to the generated sources (tilelang_codegen::lower::HEADERS).
#pragma once

#include "tl_platform.h"
#include "tl_scalar.h"
#include "tl_reduce.h"
#include "tl_copy.h"
#include "tl_mma.h"
#include "tl_hopper.h"
#include "tl_amd_mma.h"
#include "tl_acc_rows.h"
