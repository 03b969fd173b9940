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
//
// The layer is split by concept into the headers below, each including those it builds on;
// this one includes them all, in that order (none is included on its own):
//   tl_host_device.h  the device's vocabulary on the host: TL_WAVE, the device keywords, the
//                     thread and block indices, shared memory (`tl_smem`)
//   tl_host_block.h   a block's threads: launch, block and named barriers, wave shuffles, the
//                     deferred groups of asynchronous work (cp.async, wgmma, bulk stores)
//   tl_host_types.h   tl::half and tl::bfloat, their conversions, bf16 rounding
//   tl_host_hopper.h  sm_90a: where wgmma reads through a descriptor, mbarriers, TMA copies
// None of them is part of a device build (tilelang_codegen::lower::HEADERS lists none).
#pragma once

#include "tl_host_device.h"
#include "tl_host_block.h"
#include "tl_host_types.h"
#include "tl_host_hopper.h"
