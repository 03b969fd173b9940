//! The HIP backend on a real AMD GPU. These tests need one whose arch has a fixture code object
//! (`fixtures/kernels.hip`, built by `fixtures/build-hip.sh` for the archs in [`IMAGES`]) and
//! ROCm 6 or newer, so they are `#[ignore]`d: run them with `--ignored` on such a machine, where
//! a missing GPU is a failure, not a skip. Only `fixture_objects_are_amdgpu_code` runs anywhere.

use tilelang_rt::gpu::{KernelArg, Object};
use tilelang_rt::{bf16, f16, Backend, Device, Element, Error, Resource, Tensor};

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

/// The objects of one kernel: the same entry in every fixture image, so that the launch picks
/// the device's arch like a real launcher does.
const fn objects(entry: &'static str, threads: u32, shared_bytes: u32) -> [Object; 7] {
    let mut out = [Object {
        arch: "",
        config: "default",
        entry,
        threads,
        shared_bytes,
        image: &[],
    }; 7];
    let mut i = 0;
    while i < IMAGES.len() {
        out[i].arch = IMAGES[i].0;
        out[i].image = IMAGES[i].1;
        i += 1;
    }
    out
}

static ARGS: [Object; 7] = objects("tl_test_args", 32, 0);
static AXPY: [Object; 7] = objects("tl_test_axpy", 128, 0);
static AXPY_OTHER: [Object; 7] = {
    let mut o = objects("tl_test_axpy", 64, 0);
    let mut i = 0;
    while i < o.len() {
        o[i].config = "other";
        i += 1;
    }
    o
};
static SMEM: [Object; 7] = objects("tl_test_smem", 256, 65536);

fn gpu() -> Device {
    Device::hip(0).unwrap_or_else(|e| panic!("this test needs an AMD GPU and ROCm 6+: {e}"))
}

/// The device, checked to have a fixture object.
fn fixture_gpu() -> Device {
    let dev = gpu();
    assert!(
        IMAGES.iter().any(|(arch, _)| *arch == dev.arch()),
        "no fixture code object for {}: add it to fixtures/build-hip.sh and IMAGES",
        dev.arch()
    );
    dev
}

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

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn device_identity() {
    let dev = gpu();
    assert_eq!(dev.backend(), Backend::Hip);
    assert!(dev.arch().starts_with("gfx"), "{}", dev.arch());
    assert!(!dev.arch().contains(':'), "a bare target: {}", dev.arch());
    assert!(!dev.name().is_empty());
    assert_eq!(Device::hip(0).unwrap(), dev, "one device per ordinal");
    if Device::cuda(0).is_err() {
        assert_eq!(Device::best().unwrap(), dev);
    }
    assert!(matches!(Device::hip(1 << 20), Err(Error::NoDevice(_))));
    eprintln!("{dev:?}");
}

fn round_trip<T: Element + PartialEq>(dev: &Device, data: &[T]) {
    let t = dev.upload(data, &[data.len()]).unwrap();
    assert_eq!(t.to_vec().unwrap(), data);
    assert!(t.host().is_err());
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn memory() {
    let dev = gpu();
    round_trip(&dev, &[1.5f32, -2.0, 3.25]);
    round_trip(&dev, &[f16::from_f32(0.5), f16::from_f32(-7.0)]);
    round_trip(&dev, &[bf16::from_f32(0.5), bf16::from_f32(-7.0)]);
    round_trip(&dev, &[1e300f64, -1.0]);
    round_trip(&dev, &[i32::MIN, 7]);
    round_trip(&dev, &[u32::MAX, 7]);
    round_trip(&dev, &[0u8, 255, 3]);

    let fresh = dev.alloc::<f16>(&[1000]).unwrap();
    assert!(fresh.to_vec().unwrap().iter().all(|x| x.is_poison()));
    let fresh = dev.alloc::<i32>(&[10]).unwrap();
    assert_eq!(fresh.to_vec().unwrap(), vec![i32::POISON; 10]);
    let mut z = dev.zeros::<f64>(&[4, 5]).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0.0; 20]);
    z.copy_from_slice(&(0..20).map(f64::from).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(z.to_vec().unwrap()[19], 19.0);
    z.poison().unwrap();
    assert!(z.to_vec().unwrap().iter().all(|x| x.is_nan()));
    assert!(matches!(
        z.copy_from_slice(&[1.0]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(z.host_mut(), Err(Error::NotOnHost { .. })));

    let empty = dev.upload::<f32>(&[], &[0, 3]).unwrap();
    assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
    let (lo, hi) = empty.address_range();
    assert_eq!(lo, hi);
    assert_ne!(lo, 0);

    // Distinct tensors do not overlap; a device range is the tensor's bytes.
    let a = dev.zeros::<f32>(&[256]).unwrap();
    let b = dev.zeros::<f32>(&[256]).unwrap();
    let (ra, rb) = (a.address_range(), b.address_range());
    assert_eq!(ra.1 - ra.0, 1024);
    assert!(ra.1 <= rb.0 || rb.1 <= ra.0);
    assert_eq!(a.device_ptr(), ra.0 as u64);
    dev.synchronize().unwrap();
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn raw_device_pointers() {
    let dev = gpu();
    let owner = dev.upload(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    // SAFETY: the last two elements of `owner`, which outlives the view and is not used meanwhile.
    let mut view = unsafe {
        Tensor::<f32>::from_raw_parts(&dev, (owner.device_ptr() + 8) as *mut f32, &[2]).unwrap()
    };
    assert_eq!(view.to_vec().unwrap(), vec![3.0, 4.0]);
    view.copy_from_slice(&[30.0, 40.0]).unwrap();
    assert!(view.host().is_err());
    drop(view);
    assert_eq!(owner.to_vec().unwrap(), vec![1.0, 2.0, 30.0, 40.0]);
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn every_argument_kind_arrives() {
    let dev = fixture_gpu();
    let out = dev.alloc::<f64>(&[8]).unwrap();
    let (h, b) = (f16::from_f32(1.5), bf16::from_f32(-2.5));
    let args = [
        KernelArg::Ptr(out.device_ptr()),
        KernelArg::F16(h),
        KernelArg::Bf16(b),
        KernelArg::F32(0.25),
        KernelArg::F64(1e100),
        KernelArg::I32(-7),
        KernelArg::U32(0xFFFF_FFF0),
        KernelArg::U8(200),
        KernelArg::I64(-(1 << 40)),
    ];
    // SAFETY: the arguments match tl_test_args; `out` holds the 8 doubles it writes.
    unsafe { dev.launch_gpu("tl_test_args", "default", &ARGS, [1, 1, 1], &args) }.unwrap();
    let got = out.to_vec().unwrap();
    let want = [
        f64::from(h.to_bits()),
        f64::from(b.to_bits()),
        0.25,
        1e100,
        -7.0,
        f64::from(0xFFFF_FFF0u32),
        200.0,
        -(1i64 << 40) as f64,
    ];
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn axpy_over_a_2d_grid() {
    let dev = fixture_gpu();
    let n = 100_000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xs = dev.upload(&x, &[n]).unwrap();
    let mut y = dev.zeros::<f32>(&[n]).unwrap();
    for (config, threads, objects) in [("default", 128i64, &AXPY), ("other", 64, &AXPY_OTHER)] {
        y.copy_from_slice(&vec![1.0; n]).unwrap();
        let blocks = (n as i64 + threads - 1) / threads;
        let grid = [(blocks + 3) / 4, 4, 1];
        let args = [
            KernelArg::Ptr(y.device_ptr()),
            KernelArg::Ptr(xs.device_ptr()),
            KernelArg::F32(2.0),
            KernelArg::I32(n as i32),
        ];
        let ms = dev
            .time_ms(|| {
                // SAFETY: the arguments match tl_test_axpy; the grid covers `n` and the kernel
                // guards the tail.
                unsafe { dev.launch_gpu("tl_test_axpy", config, objects, grid, &args) }
            })
            .unwrap();
        assert!((0.0..1000.0).contains(&ms), "{ms}");
        let got = y.to_vec().unwrap();
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, &v)| v == 2.0 * i as f32 + 1.0),
            "{config}"
        );
    }
    // An empty grid launches nothing; an unknown config or arch is an error.
    // SAFETY: nothing runs.
    unsafe {
        dev.launch_gpu("tl_test_axpy", "default", &AXPY, [0, 4, 1], &[])
            .unwrap();
        let e = dev
            .launch_gpu("tl_test_axpy", "nope", &AXPY, [1, 1, 1], &[])
            .unwrap_err();
        assert!(matches!(e, Error::UnknownConfig { .. }), "{e}");
        static OTHER: [Object; 1] = [Object {
            arch: "gfx1",
            ..objects("tl_test_axpy", 128, 0)[0]
        }];
        let e = dev
            .launch_gpu("tl_test_axpy", "default", &OTHER, [1, 1, 1], &[])
            .unwrap_err();
        assert!(e.to_string().contains("compiled: gfx1)"), "{e}");
        // HIP counts work-items in 32 bits.
        let e = dev
            .launch_gpu("tl_test_axpy", "default", &AXPY, [1 << 30, 1, 1], &[])
            .unwrap_err();
        assert!(matches!(e, Error::BadGrid { .. }), "{e}");
    }
    dev.synchronize().unwrap();
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn all_of_the_lds_as_dynamic_shared_memory() {
    let dev = fixture_gpu();
    let out = dev.alloc::<f32>(&[256]).unwrap();
    let args = [KernelArg::Ptr(out.device_ptr())];
    // SAFETY: the arguments match tl_test_smem, which writes 256 floats.
    unsafe { dev.launch_gpu("tl_test_smem", "default", &SMEM, [1, 1, 1], &args) }.unwrap();
    let got = out.to_vec().unwrap();
    // Thread t sums k = t + 256 j over j < 64.
    let want: Vec<f32> = (0..256).map(|t| (64 * t + 256 * 2016) as f32).collect();
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn limits_are_checked_before_launch() {
    let dev = fixture_gpu();
    static TOO_MUCH_LDS: [Object; 7] = objects("tl_test_smem", 256, 1 << 20);
    static TOO_MANY_THREADS: [Object; 7] = objects("tl_test_axpy", 2048, 0);
    // SAFETY: refused before launching.
    let e =
        unsafe { dev.launch_gpu("smem", "default", &TOO_MUCH_LDS, [1, 1, 1], &[]) }.unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::ResourceLimit { what: Resource::DynamicSharedMemory, requested: 1048576, max, .. } if max < 1048576),
        "{msg}"
    );
    // SAFETY: refused before launching.
    let e = unsafe { dev.launch_gpu("axpy", "default", &TOO_MANY_THREADS, [1, 1, 1], &[]) }
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            Error::ResourceLimit {
                what: Resource::ThreadsPerBlock,
                requested: 2048,
                max: 1024,
                ..
            }
        ),
        "{msg}"
    );
    // The device is still usable.
    dev.synchronize().unwrap();
}

#[test]
#[ignore = "needs an AMD GPU (ROCm 6+): run with --ignored on the device"]
fn missing_entry_is_a_driver_error() {
    let dev = fixture_gpu();
    static BAD: [Object; 7] = objects("no_such_kernel", 32, 0);
    // SAFETY: fails before launching.
    let e = unsafe { dev.launch_gpu("bad", "default", &BAD, [1, 1, 1], &[]) }.unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::Driver { op, .. } if op.contains("ModuleGetFunction")),
        "{msg}"
    );
    assert!(
        msg.contains("bad") && msg.contains("no_such_kernel"),
        "{msg}"
    );
}
