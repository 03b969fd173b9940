//! The CUDA backend on a real GPU: the suite of `common/mod.rs` with the fixture cubin
//! `fixtures/kernels.sm_90.cubin` (from `fixtures/kernels.cu`). The tests need an NVIDIA GPU (the
//! launch tests an `sm_90` one), so they are `#[ignore]`d: the GPU check (`cargo xtask
//! gpu-bundle`, then `run.sh` on the device) runs them with `--ignored`, where a missing GPU is
//! a failure, not a skip.

#[macro_use]
mod common;

use common::Fixture;
use tilelang_rt::gpu::Object;
use tilelang_rt::{Backend, Device, GpuBackend};

static IMAGE: &[u8] = include_bytes!("fixtures/kernels.sm_90.cubin");

const fn object(entry: &'static str, threads: u32, shared_bytes: u32) -> Object {
    Object {
        arch: "sm_90",
        config: "default",
        entry,
        threads,
        shared_bytes,
        image: IMAGE,
        tma: None,
    }
}

static ARGS: [Object; 1] = [object("tl_test_args", 32, 0)];
static AXPY: [Object; 2] = [
    object("tl_test_axpy", 128, 0),
    Object {
        config: "other",
        ..object("tl_test_axpy", 64, 0)
    },
];
static SMEM: [Object; 1] = [object("tl_test_smem", 256, 65536)];
static TOO_MUCH_SHARED: [Object; 1] = [object("tl_test_smem", 256, 1 << 20)];
static TOO_MANY_THREADS: [Object; 1] = [object("tl_test_axpy", 2048, 0)];
static MISSING_ENTRY: [Object; 1] = [object("no_such_kernel", 32, 0)];
static FOREIGN: [Object; 1] = [Object {
    arch: "sm_100",
    ..object("tl_test_axpy", 128, 0)
}];

static CUDA: Fixture = Fixture {
    backend: Backend::Cuda,
    driver: GpuBackend::Cuda,
    open: Device::cuda,
    needs: "an NVIDIA GPU",
    archs: &["sm_90"],
    arch_prefix: "sm_",
    args: &ARGS,
    axpy: &AXPY,
    smem: &SMEM,
    too_much_shared: &TOO_MUCH_SHARED,
    too_many_threads: &TOO_MANY_THREADS,
    missing_entry: &MISSING_ENTRY,
    foreign: &FOREIGN,
    foreign_arch: "sm_100",
    get_function_op: "cuModuleGetFunction",
};

gpu_suite!(
    CUDA,
    "needs an NVIDIA GPU: run with --ignored on the device"
);
