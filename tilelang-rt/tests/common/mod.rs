//! The GPU runtime tests, once for every GPU backend. Each backend's test file (`cuda.rs`,
//! `hip.rs`) describes its fixtures in a [`Fixture`] (how to open the device, the fixture code
//! objects built from `fixtures/kernels.cu` or `fixtures/kernels.hip`, which define the same
//! kernels) and instantiates every test with [`gpu_suite!`], so both backends run the same
//! checks.

use tilelang_rt::gpu::{KernelArg, Object};
use tilelang_rt::{bf16, f16, Backend, Device, Element, Error, GpuBackend, Resource, Tensor};

/// What the suite needs from a backend.
pub struct Fixture {
    pub backend: Backend,
    pub driver: GpuBackend,
    /// Opens device `ordinal` of the backend (`Device::cuda`, `Device::hip`).
    pub open: fn(usize) -> tilelang_rt::Result<Device>,
    /// What a missing device means, for the panic message.
    pub needs: &'static str,
    /// The archs the fixture objects exist for; the launch tests need the device's among them.
    pub archs: &'static [&'static str],
    /// How arch names start on this backend (`sm_`, `gfx`).
    pub arch_prefix: &'static str,
    /// `tl_test_args`, 32 threads, config `default`.
    pub args: &'static [Object],
    /// `tl_test_axpy`: config `default` with 128 threads and config `other` with 64.
    pub axpy: &'static [Object],
    /// `tl_test_smem`, 256 threads and 64 KiB of dynamic shared memory.
    pub smem: &'static [Object],
    /// `tl_test_smem` asking for 1 MiB of dynamic shared memory, which no device offers.
    pub too_much_shared: &'static [Object],
    /// `tl_test_axpy` with 2048 threads per block, above every device's 1024.
    pub too_many_threads: &'static [Object],
    /// An entry that is not in the image, `no_such_kernel`.
    pub missing_entry: &'static [Object],
    /// `tl_test_axpy` for an arch no device has, named by [`Fixture::foreign_arch`].
    pub foreign: &'static [Object],
    pub foreign_arch: &'static str,
    /// The driver call that looks up an entry (`cuModuleGetFunction`, `hipModuleGetFunction`).
    pub get_function_op: &'static str,
}

/// Instantiates every test of the suite for `$fixture`, each `#[ignore]`d with `$why`: they
/// need the GPU, and run with `--ignored` on a machine that has one, where a missing device is
/// a failure, not a skip.
macro_rules! gpu_suite {
    ($fixture:path, $why:literal) => {
        gpu_suite!(@tests $fixture, $why;
            device_identity,
            memory,
            out_of_memory_and_overflow,
            raw_device_pointers,
            every_argument_kind_arrives,
            axpy_over_a_2d_grid,
            large_dynamic_shared_memory,
            limits_are_checked_before_launch,
            missing_entry_is_a_driver_error,
            views_and_device_copies,
        );
    };
    (@tests $fixture:path, $why:literal; $($name:ident),* $(,)?) => {
        $(
            #[test]
            #[ignore = $why]
            fn $name() {
                common::$name(&$fixture)
            }
        )*
    };
}

fn gpu(fix: &Fixture) -> Device {
    (fix.open)(0).unwrap_or_else(|e| panic!("this test needs {}: {e}", fix.needs))
}

/// The device, checked to have a fixture object for its arch.
fn fixture_gpu(fix: &Fixture) -> Device {
    let dev = gpu(fix);
    assert!(
        fix.archs.contains(&dev.arch()),
        "no fixture code object for {} (there are {:?}): build one with the fixture's script",
        dev.arch(),
        fix.archs
    );
    dev
}

pub fn device_identity(fix: &Fixture) {
    let dev = gpu(fix);
    assert_eq!(dev.backend(), fix.backend);
    assert!(dev.arch().starts_with(fix.arch_prefix), "{}", dev.arch());
    assert!(!dev.arch().contains(':'), "a bare target: {}", dev.arch());
    assert!(!dev.name().is_empty());
    assert_eq!(dev.ordinal(), Some(0));
    assert_eq!((fix.open)(0).unwrap(), dev, "one device per ordinal");
    // The best device is CUDA's first, else HIP's first.
    if fix.backend == Backend::Cuda || Device::cuda(0).is_err() {
        assert_eq!(Device::best().unwrap(), dev);
    }
    let e = (fix.open)(1 << 20).unwrap_err();
    assert!(
        matches!(&e, Error::NoDevice(m) if m.contains("1048576")),
        "{e}"
    );
    eprintln!("{dev:?}");
}

fn round_trip<T: Element + PartialEq>(dev: &Device, data: &[T]) {
    let t = dev.upload(data, &[data.len()]).unwrap();
    assert_eq!(t.to_vec().unwrap(), data);
    assert!(t.host().is_err());
}

pub fn memory(fix: &Fixture) {
    let dev = gpu(fix);
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

pub fn out_of_memory_and_overflow(fix: &Fixture) {
    let dev = gpu(fix);
    // 1 PiB: more than any GPU has; the driver's out-of-memory status, typed.
    let e = dev.alloc::<u8>(&[1 << 50]).unwrap_err();
    assert_eq!(
        e,
        Error::OutOfMemory {
            backend: fix.backend,
            bytes: 1 << 50
        }
    );
    assert!(e.is_out_of_memory());
    // A shape no tensor can have is refused before the driver is asked.
    let e = dev.zeros::<f64>(&[1 << 60]).unwrap_err();
    assert!(matches!(e, Error::ShapeOverflow { .. }), "{e}");
    // The device is still usable.
    round_trip(&dev, &[1u8, 2, 3]);
    dev.synchronize().unwrap();
}

pub fn raw_device_pointers(fix: &Fixture) {
    let dev = gpu(fix);
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

pub fn every_argument_kind_arrives(fix: &Fixture) {
    let dev = fixture_gpu(fix);
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
    unsafe { dev.launch_gpu("tl_test_args", "default", fix.args, [1, 1, 1], &args) }.unwrap();
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

pub fn axpy_over_a_2d_grid(fix: &Fixture) {
    let dev = fixture_gpu(fix);
    let n = 100_000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xs = dev.upload(&x, &[n]).unwrap();
    let mut y = dev.zeros::<f32>(&[n]).unwrap();
    for (config, threads) in [("default", 128i64), ("other", 64)] {
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
                unsafe { dev.launch_gpu("tl_test_axpy", config, fix.axpy, grid, &args) }
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
        dev.launch_gpu("tl_test_axpy", "default", fix.axpy, [0, 4, 1], &[])
            .unwrap();
        let e = dev
            .launch_gpu("tl_test_axpy", "nope", fix.axpy, [1, 1, 1], &[])
            .unwrap_err();
        assert!(matches!(e, Error::UnknownConfig { .. }), "{e}");
        let e = dev
            .launch_gpu("tl_test_axpy", "default", fix.foreign, [1, 1, 1], &[])
            .unwrap_err();
        let compiled = format!("compiled: {})", fix.foreign_arch);
        assert!(e.to_string().contains(&compiled), "{e}");
        if fix.backend == Backend::Hip {
            // HIP counts work-items in 32 bits.
            let e = dev
                .launch_gpu("tl_test_axpy", "default", fix.axpy, [1 << 30, 1, 1], &[])
                .unwrap_err();
            assert!(matches!(e, Error::BadGrid { .. }), "{e}");
        }
    }
    dev.synchronize().unwrap();
}

pub fn large_dynamic_shared_memory(fix: &Fixture) {
    let dev = fixture_gpu(fix);
    let out = dev.alloc::<f32>(&[256]).unwrap();
    let args = [KernelArg::Ptr(out.device_ptr())];
    // SAFETY: the arguments match tl_test_smem, which writes 256 floats.
    unsafe { dev.launch_gpu("tl_test_smem", "default", fix.smem, [1, 1, 1], &args) }.unwrap();
    let got = out.to_vec().unwrap();
    // Thread t sums k = t + 256 j over j < 64.
    let want: Vec<f32> = (0..256).map(|t| (64 * t + 256 * 2016) as f32).collect();
    assert_eq!(got, want);
}

pub fn limits_are_checked_before_launch(fix: &Fixture) {
    let dev = fixture_gpu(fix);
    // SAFETY: refused before launching.
    let e = unsafe { dev.launch_gpu("smem", "default", fix.too_much_shared, [1, 1, 1], &[]) }
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ResourceLimit {
                kernel: "smem",
                what: Resource::DynamicSharedMemory,
                requested: 1048576,
                max,
                ..
            } if (65536..1048576).contains(&max)
        ),
        "{e}"
    );
    // SAFETY: refused before launching.
    let e = unsafe { dev.launch_gpu("axpy", "default", fix.too_many_threads, [1, 1, 1], &[]) }
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ResourceLimit {
                kernel: "axpy",
                what: Resource::ThreadsPerBlock,
                requested: 2048,
                max: 1024,
                ..
            }
        ),
        "{e}"
    );
    // The device is still usable.
    dev.synchronize().unwrap();
}

pub fn missing_entry_is_a_driver_error(fix: &Fixture) {
    let dev = fixture_gpu(fix);
    // SAFETY: fails before launching.
    let e =
        unsafe { dev.launch_gpu("bad", "default", fix.missing_entry, [1, 1, 1], &[]) }.unwrap_err();
    let msg = e.to_string();
    match &e {
        Error::Driver {
            backend,
            op,
            context,
            code,
            name,
            ..
        } => {
            assert_eq!(*backend, fix.driver, "{msg}");
            assert_eq!(*op, fix.get_function_op, "{msg}");
            assert!(
                context.contains("bad") && context.contains("no_such_kernel"),
                "{msg}"
            );
            assert_ne!(*code, 0, "{msg}");
            assert!(!name.is_empty(), "{msg}");
            assert!(!e.is_out_of_memory(), "{msg}");
        }
        _ => panic!("expected a driver error: {msg}"),
    }
}

/// Views, reshapes, device-to-device copies and downloads into a caller's buffer
/// (`check_views_and_copies` of `src/tensor.rs`, which the CPU runs too).
pub fn views_and_device_copies(fix: &Fixture) {
    tilelang_rt::check_views_and_copies(&gpu(fix));
}
