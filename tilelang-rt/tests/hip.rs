//! The HIP backend on a real AMD GPU: the suite of `common/mod.rs` with the fixture code objects
//! of `fixtures/kernels.hip` (built by `fixtures/build-hip.sh` for the archs in [`IMAGES`]). The
//! tests need such a GPU and ROCm 6 or newer, so they are `#[ignore]`d: run them with
//! `--ignored` on such a machine, where a missing GPU is a failure, not a skip. Only
//! `fixture_objects_are_amdgpu_code` runs anywhere.

#[macro_use]
mod common;

use common::Fixture;
use tilelang_rt::gpu::Object;
use tilelang_rt::{Backend, Device, GpuBackend};

/// One raw AMDGPU code object per arch, all from `fixtures/kernels.hip`.
static IMAGES: [(&str, &[u8]); 7] = [
    ("gfx90a", include_bytes!("fixtures/kernels.gfx90a.hsaco")),
    ("gfx942", include_bytes!("fixtures/kernels.gfx942.hsaco")),
    ("gfx1030", include_bytes!("fixtures/kernels.gfx1030.hsaco")),
    ("gfx1100", include_bytes!("fixtures/kernels.gfx1100.hsaco")),
    ("gfx1101", include_bytes!("fixtures/kernels.gfx1101.hsaco")),
    ("gfx1151", include_bytes!("fixtures/kernels.gfx1151.hsaco")),
    ("gfx1201", include_bytes!("fixtures/kernels.gfx1201.hsaco")),
];

const ARCHS: [&str; 7] = {
    let mut a = [""; 7];
    let mut i = 0;
    while i < IMAGES.len() {
        a[i] = IMAGES[i].0;
        i += 1;
    }
    a
};

/// The objects of one kernel and config: the same entry in every fixture image, so that the
/// launch picks the device's arch like a real launcher does.
const fn objects(
    entry: &'static str,
    config: &'static str,
    threads: u32,
    shared_bytes: u32,
) -> [Object; 7] {
    let mut out = [Object {
        arch: "",
        config,
        entry,
        threads,
        shared_bytes,
        image: &[],
        tma: None,
    }; 7];
    let mut i = 0;
    while i < IMAGES.len() {
        out[i].arch = IMAGES[i].0;
        out[i].image = IMAGES[i].1;
        i += 1;
    }
    out
}

static ARGS: [Object; 7] = objects("tl_test_args", "default", 32, 0);
/// Config `default` (128 threads) for every arch, then config `other` (64 threads).
static AXPY: [Object; 14] = {
    let (a, b) = (
        objects("tl_test_axpy", "default", 128, 0),
        objects("tl_test_axpy", "other", 64, 0),
    );
    let mut out = [a[0]; 14];
    let mut i = 0;
    while i < 7 {
        out[i] = a[i];
        out[7 + i] = b[i];
        i += 1;
    }
    out
};
static SMEM: [Object; 7] = objects("tl_test_smem", "default", 256, 65536);
static TOO_MUCH_SHARED: [Object; 7] = objects("tl_test_smem", "default", 256, 1 << 20);
static TOO_MANY_THREADS: [Object; 7] = objects("tl_test_axpy", "default", 2048, 0);
static MISSING_ENTRY: [Object; 7] = objects("no_such_kernel", "default", 32, 0);
static FOREIGN: [Object; 1] = [Object {
    arch: "gfx1",
    ..objects("tl_test_axpy", "default", 128, 0)[0]
}];

static HIP: Fixture = Fixture {
    backend: Backend::Hip,
    driver: GpuBackend::Hip,
    open: Device::hip,
    needs: "an AMD GPU and ROCm 6+",
    archs: &ARCHS,
    arch_prefix: "gfx",
    args: &ARGS,
    axpy: &AXPY,
    smem: &SMEM,
    too_much_shared: &TOO_MUCH_SHARED,
    too_many_threads: &TOO_MANY_THREADS,
    missing_entry: &MISSING_ENTRY,
    foreign: &FOREIGN,
    foreign_arch: "gfx1",
    get_function_op: "hipModuleGetFunction",
};

gpu_suite!(
    HIP,
    "needs an AMD GPU (ROCm 6+): run with --ignored on the device"
);

#[test]
fn fixture_objects_are_amdgpu_code() {
    for (arch, image) in IMAGES {
        assert_eq!(&image[..4], b"\x7fELF", "{arch}");
        // e_machine (offset 18, little-endian) is EM_AMDGPU = 224.
        assert_eq!(u16::from_le_bytes([image[18], image[19]]), 224, "{arch}");
        for entry in ["tl_test_args", "tl_test_axpy", "tl_test_smem"] {
            assert!(
                image.windows(entry.len()).any(|w| w == entry.as_bytes()),
                "{arch} lacks {entry}"
            );
        }
    }
}
