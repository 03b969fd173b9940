//! Launch-time checks of the generated launchers: every failed check returns a typed
//! [`Error`] and, where the check runs before the launch, leaves every tensor untouched.
//! Also the generated config API: `CONFIGS`, `DEFAULTS`, `default_config(arch)`, `launch`, and
//! `KERNEL`, the same metadata as one value.

use tilelang::prelude::*;

/// `c = a + b` over `N` elements; one config, no const generics.
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn add(a: &Tensor<f32, (N,)>, b: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * 64;
    for i in parallel(64) {
        let g = base + i;
        if g < N {
            c[g] = a[g] + b[g];
        }
    }
}

/// Two outputs: `c = a`, `d = 2a`.
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn split(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>, d: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * 64;
    for i in parallel(64) {
        let g = base + i;
        if g < N {
            c[g] = a[g];
            d[g] = a[g] * 2.0;
        }
    }
}

/// `c = a^T` for an `(M, N)` matrix: a 2-D kernel whose symbols come from two tensors.
#[tile_kernel(grid = [M, N.div_ceil(32)], threads = 32)]
pub fn transpose(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (N, M)>) {
    let (row, base) = (block_idx(0), block_idx(1) * 32);
    for j in parallel(32) {
        if base + j < N {
            c[(base + j, row)] = a[(row, base + j)];
        }
    }
}

/// One block of exactly `BM` elements: the tensors' dimension is the config's const generic.
#[tile_kernel(
    grid = [1],
    threads = 32,
    configs = [four(BM = 4), eight(BM = 8)],
)]
pub fn tile_copy<const BM: usize>(a: &Tensor<f32, (BM,)>, c: &mut Tensor<f32, (BM,)>) {
    for i in parallel(BM) {
        c[i] = a[i] + 1.0;
    }
}

/// Refuses tails: `N` must be a multiple of the block.
#[tile_kernel(
    grid = [N / BLOCK],
    threads = BLOCK,
    configs = [b4(BLOCK = 4), b8(BLOCK = 8)],
    requires = [N % BLOCK == 0],
)]
pub fn scale_exact<const BLOCK: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>, s: f32) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        c[base + i] = a[base + i] * s;
    }
}

/// A buggy kernel: reads one element past the end of `a` (no tail guard, shifted index).
#[tile_kernel(grid = [N.div_ceil(8)], threads = 8)]
pub fn shifted(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * 8;
    for i in parallel(8) {
        let g = base + i;
        if g < N {
            c[g] = a[g + 1];
        }
    }
}

/// Integer division by a scalar parameter.
#[tile_kernel(grid = [N.div_ceil(8)], threads = 8)]
pub fn int_div(a: &Tensor<i32, (N,)>, c: &mut Tensor<i32, (N,)>, d: i32) {
    let base = block_idx(0) * 8;
    for i in parallel(8) {
        let g = base + i;
        if g < N {
            c[g] = a[g] / d;
        }
    }
}

/// Three configs with per-arch defaults; `cpu` picks the second one.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = THREADS,
    configs = [small(BLOCK = 16, THREADS = 16), medium(BLOCK = 64, THREADS = 32), large(BLOCK = 256, THREADS = 128)],
    defaults = [gfx1100 = small, cpu = medium, sm_90 = large],
)]
pub fn axpy<const BLOCK: usize, const THREADS: usize>(
    x: &Tensor<f32, (N,)>,
    y: &Tensor<f32, (N,)>,
    out: &mut Tensor<f32, (N,)>,
    alpha: f32,
) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        let g = base + i;
        if g < N {
            out[g] = alpha * x[g] + y[g];
        }
    }
}

/// Configs without `defaults`: every arch gets the first config.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = 32,
    configs = [first(BLOCK = 32), second(BLOCK = 128)],
)]
pub fn negate<const BLOCK: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        let g = base + i;
        if g < N {
            c[g] = -a[g];
        }
    }
}

fn all_nan(t: &Tensor<f32>) -> bool {
    t.to_vec().unwrap().iter().all(|x| x.is_nan())
}

fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn symbols_that_disagree_are_a_shape_mismatch() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(10), &[10]).unwrap();
    let b = dev.upload(&ramp(11), &[11]).unwrap();
    let mut c = dev.alloc::<f32>(&[10]).unwrap();
    let err = add(&dev, &a, &b, &mut c).unwrap_err();
    match &err {
        Error::ShapeMismatch {
            kernel,
            tensor,
            dim,
            symbol,
            expected,
            found,
            bound_by,
        } => {
            assert_eq!(
                (*kernel, *tensor, *dim, *symbol),
                ("add", "b", 0, "N"),
                "{err}"
            );
            assert_eq!((*expected, *found), (10, 11), "{err}");
            assert_eq!(bound_by, "dimension 0 of `a`", "{err}");
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    assert!(all_nan(&c), "nothing may be written before the checks pass");
    // The output disagrees too (c is checked after a and b).
    let b = dev.upload(&ramp(10), &[10]).unwrap();
    let mut c = dev.alloc::<f32>(&[12]).unwrap();
    let err = add(&dev, &a, &b, &mut c).unwrap_err();
    assert!(
        matches!(
            err,
            Error::ShapeMismatch {
                tensor: "c",
                expected: 10,
                found: 12,
                ..
            }
        ),
        "{err}"
    );
    assert!(all_nan(&c));
}

#[test]
fn a_symbol_bound_in_one_dimension_is_checked_in_another() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(6), &[2, 3]).unwrap();
    // c must be (N, M) = (3, 2); (2, 3) has N = 2 where 3 is bound.
    let mut c = dev.alloc::<f32>(&[2, 3]).unwrap();
    let err = transpose(&dev, &a, &mut c).unwrap_err();
    match &err {
        Error::ShapeMismatch {
            tensor,
            dim,
            symbol,
            expected,
            found,
            bound_by,
            ..
        } => {
            assert_eq!(
                (*tensor, *dim, *symbol, *expected, *found),
                ("c", 0, "N", 3, 2),
                "{err}"
            );
            assert_eq!(bound_by, "dimension 1 of `a`", "{err}");
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    assert!(all_nan(&c));
    // With the right shape it runs and transposes.
    let mut c = dev.alloc::<f32>(&[3, 2]).unwrap();
    transpose(&dev, &a, &mut c).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

#[test]
fn a_const_generic_dimension_must_equal_the_config_value() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(4), &[4]).unwrap();
    let mut c = dev.alloc::<f32>(&[4]).unwrap();
    // `four` fits; `eight` wants 8 elements.
    tile_copy::launch(&dev, tile_copy::Config::Four, &a, &mut c).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    c.poison().unwrap();
    let err = tile_copy::launch(&dev, tile_copy::Config::Eight, &a, &mut c).unwrap_err();
    match &err {
        Error::ShapeMismatch {
            kernel,
            tensor,
            dim,
            symbol,
            expected,
            found,
            bound_by,
        } => {
            assert_eq!(
                (*kernel, *tensor, *dim, *symbol),
                ("tile_copy", "a", 0, "BM"),
                "{err}"
            );
            assert_eq!((*expected, *found), (8, 4), "{err}");
            assert_eq!(bound_by, "the config", "{err}");
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    assert!(all_nan(&c));
    // The default config (no `defaults`: the first) is `four`.
    assert_eq!(tile_copy::default_config(dev.arch()), "four");
}

#[test]
fn a_tensor_of_the_wrong_rank_is_refused() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(8), &[2, 4]).unwrap();
    let b = dev.upload(&ramp(8), &[8]).unwrap();
    let mut c = dev.alloc::<f32>(&[8]).unwrap();
    let err = add(&dev, &a, &b, &mut c).unwrap_err();
    assert_eq!(
        err,
        Error::RankMismatch {
            kernel: "add",
            tensor: "a",
            expected: 1,
            found: 2
        },
        "{err}"
    );
    assert!(all_nan(&c));
    // Output of the wrong rank.
    let a = dev.upload(&ramp(8), &[8]).unwrap();
    let mut c = dev.alloc::<f32>(&[8, 1]).unwrap();
    let err = add(&dev, &a, &b, &mut c).unwrap_err();
    assert_eq!(
        err,
        Error::RankMismatch {
            kernel: "add",
            tensor: "c",
            expected: 1,
            found: 2
        }
    );
    assert!(all_nan(&c));
    // 2-D kernel given 1-D.
    let mut t = dev.alloc::<f32>(&[8]).unwrap();
    let err = transpose(&dev, &b, &mut t).unwrap_err();
    assert!(
        matches!(
            err,
            Error::RankMismatch {
                tensor: "a",
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(all_nan(&t));
}

#[test]
fn an_output_overlapping_an_input_is_refused() {
    let dev = Device::cpu();
    // One host buffer of 12 floats; `a` views [0, 8), `c` views [4, 12).
    let mut host: Vec<f32> = ramp(12);
    let before = host.clone();
    let ptr = host.as_mut_ptr();
    // SAFETY: both views lie inside `host`, which outlives them and is not touched while they
    // live; the launcher must refuse to run with them, so nothing reads or writes through them.
    let a = unsafe { Tensor::from_raw_parts(&dev, ptr, &[8]) }.unwrap();
    let mut c = unsafe { Tensor::from_raw_parts(&dev, ptr.wrapping_add(4), &[8]) }.unwrap();
    let b = dev.upload(&ramp(8), &[8]).unwrap();
    let err = add(&dev, &a, &b, &mut c).unwrap_err();
    assert_eq!(
        err,
        Error::Aliasing {
            kernel: "add",
            output: "c",
            other: "a"
        },
        "{err}"
    );
    // Exactly the same memory as input and output.
    let mut c2 = unsafe { Tensor::from_raw_parts(&dev, ptr, &[8]) }.unwrap();
    let err = add(&dev, &b, &a, &mut c2).unwrap_err();
    assert_eq!(
        err,
        Error::Aliasing {
            kernel: "add",
            output: "c",
            other: "b"
        },
        "{err}"
    );
    drop((a, c, c2));
    assert_eq!(host, before, "a refused launch writes nothing");

    // Adjacent, non-overlapping views are fine.
    let mut host: Vec<f32> = vec![1.0; 16];
    let ptr = host.as_mut_ptr();
    let a = unsafe { Tensor::from_raw_parts(&dev, ptr, &[8]) }.unwrap();
    let mut c = unsafe { Tensor::from_raw_parts(&dev, ptr.wrapping_add(8), &[8]) }.unwrap();
    add(&dev, &a, &b, &mut c).unwrap();
    drop((a, c));
    let want: Vec<f32> = (0..16)
        .map(|i| if i < 8 { 1.0 } else { 1.0 + (i - 8) as f32 })
        .collect();
    assert_eq!(host, want);
}

#[test]
fn two_overlapping_outputs_are_refused() {
    let dev = Device::cpu();
    let mut host: Vec<f32> = vec![f32::NAN; 10];
    let ptr = host.as_mut_ptr();
    let a = dev.upload(&ramp(8), &[8]).unwrap();
    // SAFETY: both views lie inside `host`, which outlives them; the launch is refused.
    let mut c = unsafe { Tensor::from_raw_parts(&dev, ptr, &[8]) }.unwrap();
    let mut d = unsafe { Tensor::from_raw_parts(&dev, ptr.wrapping_add(2), &[8]) }.unwrap();
    let err = split(&dev, &a, &mut c, &mut d).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Aliasing {
                kernel: "split",
                output: "c",
                other: "d"
            }
        ),
        "{err}"
    );
    assert!(all_nan(&c) && all_nan(&d));
    drop((c, d));
    assert!(
        host.iter().all(|x| x.is_nan()),
        "a refused launch writes nothing"
    );
}

#[test]
fn a_failed_requirement_names_the_condition_and_the_values() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(10), &[10]).unwrap();
    let mut c = dev.alloc::<f32>(&[10]).unwrap();
    let err = scale_exact::launch(&dev, scale_exact::Config::B4, &a, &mut c, 2.0).unwrap_err();
    let Error::Requirement {
        kernel,
        config,
        condition,
        values,
    } = &err
    else {
        panic!("expected Requirement, got {err:?}");
    };
    assert_eq!((*kernel, *config), ("scale_exact", "b4"));
    // The condition is rendered from the parsed expression (possibly with extra parentheses
    // around sub-expressions), not copied from the source text.
    assert_eq!(condition.replace(['(', ')'], ""), "N % BLOCK == 0", "{err}");
    assert_eq!(values, "N = 10, BLOCK = 4", "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!("`{condition}`")) && text.contains(values.as_str()),
        "{text}"
    );
    assert!(all_nan(&c));

    // 12 is a multiple of 4 but not of 8: `b4` runs, `b8` is refused.
    let a = dev.upload(&ramp(12), &[12]).unwrap();
    let mut c = dev.alloc::<f32>(&[12]).unwrap();
    let err = scale_exact::launch(&dev, scale_exact::Config::B8, &a, &mut c, 2.0).unwrap_err();
    assert!(
        matches!(&err, Error::Requirement { config: "b8", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("BLOCK = 8"), "{err}");
    assert!(all_nan(&c));
    scale_exact::launch(&dev, scale_exact::Config::B4, &a, &mut c, 2.0).unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        (0..12).map(|i| 2.0 * i as f32).collect::<Vec<_>>()
    );
}

#[test]
fn an_unknown_config_name_lists_the_configs_and_suggests_the_nearest() {
    let dev = Device::cpu();
    let x = dev.upload(&ramp(5), &[5]).unwrap();
    let mut out = dev.alloc::<f32>(&[5]).unwrap();
    let err = axpy::launch_named(&dev, "huge", &x, &x, &mut out, 1.0).unwrap_err();
    assert_eq!(
        err,
        Error::UnknownConfig {
            kernel: "axpy",
            config: "huge".to_string(),
            available: vec!["small", "medium", "large"],
        }
    );
    assert!(err.to_string().contains("small, medium, large"), "{err}");
    assert!(!err.to_string().contains("did you mean"), "{err}");
    assert!(all_nan(&out));
    // Config names are case-sensitive; a near miss is suggested.
    let err = axpy::launch_named(&dev, "Small", &x, &x, &mut out, 1.0).unwrap_err();
    assert!(matches!(err, Error::UnknownConfig { .. }));
    assert!(err.to_string().contains("did you mean `small`?"), "{err}");
    let err = axpy::Config::from_name("meduim").unwrap_err();
    assert!(err.to_string().contains("did you mean `medium`?"), "{err}");
    // The type-erased path takes names too.
    use tilelang::{AnyScalar, AnyTensor, Arg};
    let (xa, ya) = (
        AnyTensor::from(dev.upload(&ramp(5), &[5]).unwrap()),
        AnyTensor::from(dev.upload(&ramp(5), &[5]).unwrap()),
    );
    let mut oa = AnyTensor::from(dev.alloc::<f32>(&[5]).unwrap());
    let args = vec![
        Arg::In(&xa),
        Arg::In(&ya),
        Arg::Out(&mut oa),
        Arg::Scalar(AnyScalar::F32(1.0)),
    ];
    let err = axpy::launch_dyn(&dev, "larg", args).unwrap_err();
    assert!(err.to_string().contains("did you mean `large`?"), "{err}");
    assert!(all_nan(&out));
}

#[test]
fn an_out_of_bounds_access_is_an_error_not_a_panic() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(10), &[10]).unwrap();
    let mut c = dev.alloc::<f32>(&[10]).unwrap();
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shifted(&dev, &a, &mut c)));
    let err = result.expect("the launcher must not panic").unwrap_err();
    match &err {
        Error::OutOfBounds {
            kernel,
            buffer,
            index,
            shape,
        } => {
            assert_eq!((*kernel, *buffer), ("shifted", "a"), "{err}");
            assert_eq!(
                (index.as_slice(), shape.as_slice()),
                (&[10i64][..], &[10i64][..]),
                "{err}"
            );
        }
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
    // The check happens while the kernel runs, so earlier elements may have been written;
    // the element whose read failed was not.
    assert!(c.to_vec().unwrap()[9].is_nan());
}

#[test]
fn integer_division_by_zero_is_an_error() {
    let dev = Device::cpu();
    let a = dev.upload(&[7i32, -8, 9], &[3]).unwrap();
    let mut c = dev.upload(&[i32::MIN; 3], &[3]).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        int_div(&dev, &a, &mut c, 0)
    }));
    let err = result.expect("the launcher must not panic").unwrap_err();
    assert_eq!(err, Error::DivisionByZero { kernel: "int_div" });
    assert_eq!(
        c.to_vec().unwrap()[0],
        i32::MIN,
        "the failing store did not happen"
    );
    // A non-zero divisor works (truncating division, as in Rust and C).
    int_div(&dev, &a, &mut c, 2).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![3, -4, 4]);
}

#[test]
fn configs_defaults_and_explicit_launch() {
    assert_eq!(axpy::NAME, "axpy");
    assert_eq!(axpy::CONFIGS, &["small", "medium", "large"]);
    assert_eq!(
        axpy::DEFAULTS,
        &[("gfx1100", "small"), ("cpu", "medium"), ("sm_90", "large")]
    );
    assert_eq!(axpy::SYMBOLS, &["N"]);
    assert_eq!(axpy::default_config("gfx1100"), "small");
    assert_eq!(axpy::default_config("cpu"), "medium");
    assert_eq!(axpy::default_config("sm_90"), "large");
    // An arch without an entry gets the first config.
    assert_eq!(axpy::default_config("gfx942"), "small");
    assert_eq!(axpy::default_config("no-such-arch"), "small");

    assert_eq!(negate::CONFIGS, &["first", "second"]);
    assert!(negate::DEFAULTS.is_empty());
    for arch in ["cpu", "sm_90", "gfx1100"] {
        assert_eq!(negate::default_config(arch), "first");
    }
    // A kernel without const generics has one config, `default`.
    assert_eq!(add::CONFIGS, &["default"]);
    assert_eq!(add::default_config("cpu"), "default");
    assert_eq!(transpose::SYMBOLS, &["M", "N"]);

    let dev = Device::cpu();
    assert_eq!(dev.arch(), "cpu");
    // Odd size: a tail in every config.
    let n = 301;
    let xv: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.0).collect();
    let yv: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let want: Vec<f32> = xv.iter().zip(&yv).map(|(x, y)| 0.5 * x + y).collect();
    let x = dev.upload(&xv, &[n]).unwrap();
    let y = dev.upload(&yv, &[n]).unwrap();
    let mut out = dev.alloc::<f32>(&[n]).unwrap();
    for cfg in axpy::Config::ALL {
        out.poison().unwrap();
        axpy::launch(&dev, cfg, &x, &y, &mut out, 0.5).unwrap();
        // 0.5·x + y with small integers is exact in f32.
        assert_eq!(out.to_vec().unwrap(), want, "config {cfg}");
    }
    // The plain launcher uses the default config for the device's arch.
    out.poison().unwrap();
    axpy(&dev, &x, &y, &mut out, 0.5).unwrap();
    assert_eq!(out.to_vec().unwrap(), want);
    for cfg in negate::Config::ALL {
        out.poison().unwrap();
        negate::launch(&dev, cfg, &x, &mut out).unwrap();
        assert_eq!(
            out.to_vec().unwrap(),
            xv.iter().map(|v| -v).collect::<Vec<_>>(),
            "config {cfg}"
        );
    }
}

/// `Config` carries each config's name and const values; `ALL` is the attribute's order.
#[test]
fn typed_configs_carry_their_names_and_values() {
    assert_eq!(
        axpy::Config::ALL,
        [
            axpy::Config::Small,
            axpy::Config::Medium,
            axpy::Config::Large
        ]
    );
    assert_eq!(axpy::Config::Medium.name(), "medium");
    assert_eq!(axpy::Config::Medium.to_string(), "medium");
    assert_eq!(axpy::Config::Large.BLOCK(), 256);
    assert_eq!(axpy::Config::Large.THREADS(), 128);
    assert_eq!(
        axpy::Config::Small.values(),
        &[("BLOCK", 16), ("THREADS", 16)]
    );
    assert_eq!(
        axpy::Config::from_name("large").unwrap(),
        axpy::Config::Large
    );
    assert_eq!(axpy::Config::default_for("cpu"), axpy::Config::Medium);
    assert_eq!(axpy::Config::default_for("gfx942"), axpy::Config::Small);
    // A kernel without const generics has one config, `default`.
    assert_eq!(add::Config::ALL, [add::Config::Default]);
    assert!(add::Config::Default.values().is_empty());
    // The trait generic code takes.
    fn names<C: tilelang::KernelConfig>() -> Vec<&'static str> {
        C::ALL.iter().map(|c| c.name()).collect()
    }
    assert_eq!(names::<axpy::Config>(), axpy::CONFIGS);
    assert_eq!(
        <axpy::Config as tilelang::KernelConfig>::KERNEL.name,
        "axpy"
    );
}

/// `launch_auto` launches the first config whose conditions hold: the arch's default first,
/// then the others in order; what no config can fix is returned at once.
#[test]
fn launch_auto_takes_the_first_config_that_holds() {
    let dev = Device::cpu();
    // `tile_copy`'s tensors are exactly `BM` long: 8 elements fit `eight` only.
    let a = dev.upload(&ramp(8), &[8]).unwrap();
    let mut c = dev.alloc::<f32>(&[8]).unwrap();
    assert_eq!(
        tile_copy::launch_auto(&dev, &a, &mut c).unwrap(),
        tile_copy::Config::Eight
    );
    assert_eq!(
        c.to_vec().unwrap(),
        (1..=8).map(|i| i as f32).collect::<Vec<_>>()
    );
    // `scale_exact` requires N % BLOCK == 0: 12 elements take `b4` (the default), 16 too.
    let a = dev.upload(&ramp(12), &[12]).unwrap();
    let mut c = dev.alloc::<f32>(&[12]).unwrap();
    assert_eq!(
        scale_exact::launch_auto(&dev, &a, &mut c, 2.0).unwrap(),
        scale_exact::Config::B4
    );
    // 6 elements fit neither: every config's reason is reported, nothing is written.
    let a = dev.upload(&ramp(6), &[6]).unwrap();
    let mut c = dev.alloc::<f32>(&[6]).unwrap();
    let err = scale_exact::launch_auto(&dev, &a, &mut c, 2.0).unwrap_err();
    match &err {
        Error::NoConfigFits { kernel, reasons } => {
            assert_eq!(*kernel, "scale_exact");
            let tried: Vec<&str> = reasons.iter().map(|r| r.0).collect();
            assert_eq!(tried, ["b4", "b8"]);
            assert!(reasons[1].1.contains("N % BLOCK == 0"), "{err}");
        }
        other => panic!("expected NoConfigFits, got {other:?}"),
    }
    assert!(all_nan(&c));
    // A wrong rank is the arguments' fault: returned at once, not tried per config.
    let m = dev.upload(&ramp(8), &[2, 4]).unwrap();
    let mut c = dev.alloc::<f32>(&[8]).unwrap();
    assert!(matches!(
        tile_copy::launch_auto(&dev, &m, &mut c),
        Err(Error::RankMismatch { .. })
    ));
}

#[test]
fn kernel_info_holds_the_attributes_configs_defaults_and_symbols() {
    use tilelang::{ConfigInfo, KernelInfo};
    const K: KernelInfo = axpy::KERNEL;
    assert_eq!(K.name, "axpy");
    assert_eq!(
        K.configs,
        &[
            ConfigInfo {
                name: "small",
                values: &[("BLOCK", 16), ("THREADS", 16)]
            },
            ConfigInfo {
                name: "medium",
                values: &[("BLOCK", 64), ("THREADS", 32)]
            },
            ConfigInfo {
                name: "large",
                values: &[("BLOCK", 256), ("THREADS", 128)]
            },
        ]
    );
    assert_eq!(K.config("medium").and_then(|c| c.value("BLOCK")), Some(64));
    assert_eq!(K.config("large").and_then(|c| c.value("NOPE")), None);
    assert!(K.config("huge").is_none());
    // The module's consts are the value's fields.
    assert_eq!(K.config_names, axpy::CONFIGS);
    assert_eq!(K.defaults, axpy::DEFAULTS);
    assert_eq!(K.symbols, &["N"]);
    assert!(
        K.objects.is_empty(),
        "the tests crate compiles no device code"
    );
    for arch in ["gfx1100", "cpu", "sm_90", "gfx942"] {
        assert_eq!(K.default_config(arch), axpy::default_config(arch), "{arch}");
    }
    // Without const generics: one config, `default`, with no values.
    assert_eq!(
        add::KERNEL.configs,
        &[ConfigInfo {
            name: "default",
            values: &[]
        }]
    );
    assert_eq!(transpose::KERNEL.symbols, &["M", "N"]);
    let debug = format!("{K:?}");
    assert!(
        debug.contains("\"axpy\"") && debug.contains("THREADS"),
        "{debug}"
    );

    // The type-erased launcher launches the kernel.
    let dev = Device::cpu();
    let x = tilelang::AnyTensor::from(dev.upload(&[1.0f32, 2.0, 3.0], &[3]).unwrap());
    let y = tilelang::AnyTensor::from(dev.upload(&[10.0f32, 20.0, 30.0], &[3]).unwrap());
    let mut out = tilelang::AnyTensor::from(dev.alloc::<f32>(&[3]).unwrap());
    let args = vec![
        tilelang::Arg::In(&x),
        tilelang::Arg::In(&y),
        tilelang::Arg::Out(&mut out),
        tilelang::Arg::Scalar(tilelang::AnyScalar::F32(2.0)),
    ];
    (K.launch_dyn)(&dev, "large", args).unwrap();
    let out = out.get::<f32>().unwrap().to_vec().unwrap();
    assert_eq!(out, vec![12.0, 24.0, 36.0]);
}

#[test]
fn empty_tensors_launch_no_blocks() {
    let dev = Device::cpu();
    let a = dev.upload::<f32>(&[], &[0]).unwrap();
    let mut c = dev.alloc::<f32>(&[0]).unwrap();
    add(&dev, &a, &a, &mut c).unwrap();
    assert!(c.to_vec().unwrap().is_empty());
}

/// Parameters named like the module's functions do not shadow them in the generated code.
#[tile_kernel(grid = [N.div_ceil(32)], threads = 32)]
pub fn shadowing(launch: &Tensor<f32, (N,)>, launch_named: &mut Tensor<f32, (N,)>) {
    for i in parallel(32) {
        let g = block_idx(0) * 32 + i;
        if g < N {
            launch_named[g] = launch[g] * 2.0;
        }
    }
}

#[test]
fn parameters_named_like_the_launchers_work() {
    let dev = Device::cpu();
    let a = dev.upload(&ramp(40), &[40]).unwrap();
    let mut c = dev.alloc::<f32>(&[40]).unwrap();
    assert_eq!(
        shadowing::launch_auto(&dev, &a, &mut c).unwrap(),
        shadowing::Config::Default
    );
    shadowing::launch_named(&dev, "default", &a, &mut c).unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        (0..40).map(|i| 2.0 * i as f32).collect::<Vec<_>>()
    );
}

/// A 1-D tile of a 2-D tensor (rank-dropping copies), one row per block, with one block past
/// the last row: it reads zeros and writes nothing.
#[tile_kernel(grid = [BATCH + 1], threads = 32)]
pub fn rows_plus_one(a: &Tensor<f32, (BATCH, N)>, c: &mut Tensor<f32, (BATCH, N)>) {
    let bi = block_idx(0);
    let mut s = alloc_shared::<f32>((32,));
    copy(a.at((bi, 0)), &mut s);
    for i in parallel(32) {
        s[i] = s[i] + 1.0;
    }
    copy(&s, c.at_mut((bi, 0)));
}

#[test]
fn a_tile_may_drop_leading_dimensions_with_the_usual_tails() {
    let dev = Device::cpu();
    let (batch, n) = (3, 20);
    let a = dev.upload(&ramp(batch * n), &[batch, n]).unwrap();
    let mut c = dev.alloc::<f32>(&[batch, n]).unwrap();
    rows_plus_one(&dev, &a, &mut c).unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        (0..batch * n).map(|i| i as f32 + 1.0).collect::<Vec<_>>()
    );
}

/// Views are kernel inputs: a row of a 2-D tensor viewed as 1-D, without copying or uploading
/// the data twice.
#[test]
fn views_of_one_upload_are_kernel_inputs() {
    let dev = Device::cpu();
    let (rows, n) = (3, 50);
    let data = ramp(rows * n);
    let m = dev.upload(&data, &[rows, n]).unwrap();
    let flat = m.view(&[rows * n]).unwrap();
    let mut c = dev.alloc::<f32>(&[n]).unwrap();
    for r in 0..rows {
        let row = m.slice(r..r + 1).unwrap();
        let row = row.view(&[n]).unwrap();
        add(&dev, &row, &row, &mut c).unwrap();
        let want: Vec<f32> = data[r * n..(r + 1) * n].iter().map(|x| 2.0 * x).collect();
        assert_eq!(c.to_vec().unwrap(), want);
    }
    // A view of the wrong shape is refused like any tensor.
    assert!(matches!(
        add(&dev, &flat, &flat, &mut c),
        Err(Error::ShapeMismatch { .. })
    ));
}
