//! # Chapter 02: vector add and fused multiply + ReLU
//!
//! Two element-wise kernels over `N = 4,194,304` half-precision values: `C = A + B` and
//! `C = max(0, A·B)`. Each block takes `BLOCK` consecutive elements; the `parallel` loop spreads
//! them over the block's threads. The multiply and the ReLU happen in registers in one pass, so
//! the fused kernel moves exactly as many bytes as the plain add: 2 reads and 1 write per
//! element. Both are bandwidth-bound; the best a kernel can do is run at the memory's speed.
//!
//! The last block may run past `N` (a tail); the `if g < N` guard skips those elements.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: vector_add
/// `c = a + b`.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = THREADS,
    configs = [b1024(BLOCK = 1024, THREADS = 256), b256(BLOCK = 256, THREADS = 256), b4096(BLOCK = 4096, THREADS = 512)],
    defaults = [gfx1100 = b1024, gfx1151 = b1024, gfx1201 = b1024, gfx90a = b1024, gfx942 = b1024, sm_90 = b1024, cpu = b4096],
)]
pub fn vector_add<const BLOCK: usize, const THREADS: usize>(
    a: &Tensor<f16, (N,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (N,)>,
) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        let g = base + i;
        if g < N {
            c[g] = a[g] + b[g];
        }
    }
}
// ANCHOR_END: vector_add

// ANCHOR: mul_relu
/// `c = max(0, a·b)`, fused: the product never leaves registers.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = THREADS,
    configs = [b1024(BLOCK = 1024, THREADS = 256), b4096(BLOCK = 4096, THREADS = 512)],
    defaults = [gfx1100 = b1024, gfx1151 = b1024, gfx1201 = b1024, gfx90a = b1024, gfx942 = b1024, sm_90 = b1024, cpu = b4096],
)]
pub fn mul_relu<const BLOCK: usize, const THREADS: usize>(
    a: &Tensor<f16, (N,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (N,)>,
) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        let g = base + i;
        if g < N {
            c[g] = max(a[g] * b[g], 0.0);
        }
    }
}
// ANCHOR_END: mul_relu

/// The float64 references.
pub fn reference_add(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}
pub fn reference_mul_relu(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| (x * y).max(0.0)).collect()
}

// ANCHOR: tolerance
/// f16 results are rounded once from an exact f64 value: half an ulp, 2^-11 relative.
const RTOL: f64 = 1.0 / 1024.0;
const ATOL: f64 = 1e-6;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let n = match scale {
        Scale::Tutorial | Scale::Reduced => 4_194_304,
    };
    let mut rng = Rng::new(seed);
    let (av, bv) = (rng.vec::<f16>(n, -4.0, 4.0), rng.vec::<f16>(n, -4.0, 4.0));
    let (a64, b64) = (check::to_f64(&av), check::to_f64(&bv));
    let a = dev.upload(&av, &[n])?;
    let b = dev.upload(&bv, &[n])?;
    let mut c = dev.alloc::<f16>(&[n])?;
    let (want_add, want_mul_relu) = (reference_add(&a64, &b64), reference_mul_relu(&a64, &b64));
    let add = Problem {
        chapter: "02",
        size: format!("N={n}"),
        work: Work::Bytes(3.0 * 2.0 * n as f64),
        reps: check::reps_for(dev, n as f64),
        want: &want_add,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = add.sweep(dev, "vector add", &mut c, |cfg, c| {
        vector_add::launch(dev, cfg, &a, &b, c)
    })?;
    let mul_relu_p = Problem {
        want: &want_mul_relu,
        ..add
    };
    cases.extend(mul_relu_p.sweep(dev, "mul+ReLU", &mut c, |cfg, c| {
        mul_relu::launch(dev, cfg, &a, &b, c)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(n: usize, seed: u64) -> (Vec<f16>, Vec<f16>) {
        let mut rng = Rng::new(seed);
        (rng.vec(n, -4.0, 4.0), rng.vec(n, -4.0, 4.0))
    }

    #[test]
    fn every_config_matches_the_reference_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        for n in [1, 255, 1000, 4097, 10_001] {
            let (av, bv) = inputs(n, seed ^ n as u64);
            let (a64, b64) = (check::to_f64(&av), check::to_f64(&bv));
            let a = dev.upload(&av, &[n]).unwrap();
            let b = dev.upload(&bv, &[n]).unwrap();
            let mut c = dev.alloc::<f16>(&[n]).unwrap();
            for cfg in vector_add::Config::ALL {
                c.poison().unwrap();
                vector_add::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("vector_add[{cfg}] n={n}"),
                    &c,
                    &reference_add(&a64, &b64),
                    ATOL,
                    RTOL,
                    seed,
                );
            }
            for cfg in mul_relu::Config::ALL {
                c.poison().unwrap();
                mul_relu::launch(&dev, cfg, &a, &b, &mut c).unwrap();
                check::assert_close(
                    &format!("mul_relu[{cfg}] n={n}"),
                    &c,
                    &reference_mul_relu(&a64, &b64),
                    ATOL,
                    RTOL,
                    seed,
                );
            }
        }
    }

    /// Every finite f16 bit pattern, subnormals and values whose sum overflows included: sums
    /// and products are the correctly rounded f16 results, bit for bit (the exact f64 value
    /// rounded once), as on the CPU backend, whatever instructions the GPU uses for them.
    #[test]
    fn f16_sums_and_products_are_correctly_rounded() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        let mut rng = Rng::new(seed);
        let n = 10_001;
        let mut finite = || loop {
            let h = f16::from_bits((rng.uniform(0.0, 65536.0) as u32).min(65535) as u16);
            if h.is_finite() {
                return h;
            }
        };
        let av: Vec<f16> = (0..n).map(|_| finite()).collect();
        let bv: Vec<f16> = (0..n).map(|_| finite()).collect();
        let a = dev.upload(&av, &[n]).unwrap();
        let b = dev.upload(&bv, &[n]).unwrap();
        let mut c = dev.alloc::<f16>(&[n]).unwrap();
        let exact = |got: &[f16], want: &dyn Fn(f64, f64) -> f64, what: &str| {
            for (i, g) in got.iter().enumerate() {
                let w = f16::from_f64(want(av[i].to_f64(), bv[i].to_f64()));
                assert!(
                    *g == w,
                    "{what}: {} and {} gave {g}, not {w} (TILELANG_SEED={seed})",
                    av[i],
                    bv[i]
                );
            }
        };
        for cfg in vector_add::Config::ALL {
            c.poison().unwrap();
            vector_add::launch(&dev, cfg, &a, &b, &mut c).unwrap();
            exact(
                &c.to_vec().unwrap(),
                &|x, y| x + y,
                &format!("vector_add[{cfg}]"),
            );
        }
        for cfg in mul_relu::Config::ALL {
            c.poison().unwrap();
            mul_relu::launch(&dev, cfg, &a, &b, &mut c).unwrap();
            exact(
                &c.to_vec().unwrap(),
                &|x, y| (x * y).max(0.0),
                &format!("mul_relu[{cfg}]"),
            );
        }
    }

    #[test]
    fn mismatched_lengths_are_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[100]).unwrap();
        let b = dev.zeros::<f16>(&[101]).unwrap();
        let mut c = dev.alloc::<f16>(&[100]).unwrap();
        let err = vector_add(&dev, &a, &b, &mut c).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ShapeMismatch {
                    symbol: "N",
                    expected: 100,
                    found: 101,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            c.to_vec().unwrap().iter().all(|x| x.is_nan()),
            "nothing may be written"
        );
    }

    #[test]
    fn type_erased_launch_checks_dtypes_and_arguments() {
        use tilelang::{AnyScalar, AnyTensor, Arg};
        let dev = crate::check::test_device();
        let a = AnyTensor::from(dev.upload(&[f16::ONE; 8], &[8]).unwrap());
        let b32 = AnyTensor::from(dev.upload(&[1.0f32; 8], &[8]).unwrap());
        let b = AnyTensor::from(dev.upload(&[f16::ONE; 8], &[8]).unwrap());
        let mut c = AnyTensor::from(dev.alloc::<f16>(&[8]).unwrap());

        let err = vector_add::launch_dyn(
            &dev,
            "b256",
            vec![Arg::In(&a), Arg::In(&b32), Arg::Out(&mut c)],
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                Error::DtypeMismatch {
                    tensor: "b",
                    expected: tilelang::Dtype::F16,
                    found: tilelang::Dtype::F32,
                    ..
                }
            ),
            "{err}"
        );
        let err = vector_add::launch_dyn(
            &dev,
            "b256",
            vec![
                Arg::In(&a),
                Arg::Scalar(AnyScalar::F32(1.0)),
                Arg::Out(&mut c),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, Error::BadArgument { arg: "b", .. }), "{err}");
        let err = vector_add::launch_dyn(&dev, "b256", vec![Arg::In(&a), Arg::In(&b)]).unwrap_err();
        assert!(matches!(err, Error::BadArgument { .. }), "{err}");
        assert!(
            c.get::<f16>()
                .unwrap()
                .to_vec()
                .unwrap()
                .iter()
                .all(|x| x.is_nan()),
            "nothing may be written"
        );

        vector_add::launch_dyn(
            &dev,
            "b256",
            vec![Arg::In(&a), Arg::In(&b), Arg::Out(&mut c)],
        )
        .unwrap();
        assert!(c
            .get::<f16>()
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .all(|x| x.to_f32() == 2.0));
    }
}
