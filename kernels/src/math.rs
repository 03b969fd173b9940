//! The math library's functions (`tanh`, `erf`, `sigmoid`, `sin`, `cos`, `floor`, `ceil`, `pow`,
//! `fma`) on every float dtype, against float64 at the accuracy `docs/language.md` documents
//! ("Math functions"), on fresh random inputs, at an odd size, into poisoned outputs. Not a
//! chapter: these kernels exist to check the library on each backend (the CPU here, the GPU
//! with `TILELANG_TEST_DEVICE=gpu`, where the device compilers' forms run: CUDA's math library,
//! `tanh.approx` and `ex2.approx` for halves on NVIDIA).

use tilelang::prelude::*;

/// The nine functions on f16: row `r` of `out` is function `r` of the inputs.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)], requires = [F == 9])]
pub fn math_f16<const BLOCK: usize>(
    x: &Tensor<f16, (N,)>,
    p: &Tensor<f16, (N,)>,
    q: &Tensor<f16, (N,)>,
    out: &mut Tensor<f16, (F, N)>,
) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            out[(0, g)] = tanh(a);
            out[(1, g)] = erf(a);
            out[(2, g)] = sigmoid(a);
            out[(3, g)] = sin(a);
            out[(4, g)] = cos(a);
            out[(5, g)] = floor(a);
            out[(6, g)] = ceil(a);
            out[(7, g)] = pow(p[g], q[g]);
            out[(8, g)] = fma(a, p[g], q[g]);
        }
    }
}

/// The nine functions on bf16: row `r` of `out` is function `r` of the inputs.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)], requires = [F == 9])]
pub fn math_bf16<const BLOCK: usize>(
    x: &Tensor<bf16, (N,)>,
    p: &Tensor<bf16, (N,)>,
    q: &Tensor<bf16, (N,)>,
    out: &mut Tensor<bf16, (F, N)>,
) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            out[(0, g)] = tanh(a);
            out[(1, g)] = erf(a);
            out[(2, g)] = sigmoid(a);
            out[(3, g)] = sin(a);
            out[(4, g)] = cos(a);
            out[(5, g)] = floor(a);
            out[(6, g)] = ceil(a);
            out[(7, g)] = pow(p[g], q[g]);
            out[(8, g)] = fma(a, p[g], q[g]);
        }
    }
}

/// The nine functions on f32: row `r` of `out` is function `r` of the inputs.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)], requires = [F == 9])]
pub fn math_f32<const BLOCK: usize>(
    x: &Tensor<f32, (N,)>,
    p: &Tensor<f32, (N,)>,
    q: &Tensor<f32, (N,)>,
    out: &mut Tensor<f32, (F, N)>,
) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            out[(0, g)] = tanh(a);
            out[(1, g)] = erf(a);
            out[(2, g)] = sigmoid(a);
            out[(3, g)] = sin(a);
            out[(4, g)] = cos(a);
            out[(5, g)] = floor(a);
            out[(6, g)] = ceil(a);
            out[(7, g)] = pow(p[g], q[g]);
            out[(8, g)] = fma(a, p[g], q[g]);
        }
    }
}

/// The nine functions on f64: row `r` of `out` is function `r` of the inputs.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)], requires = [F == 9])]
pub fn math_f64<const BLOCK: usize>(
    x: &Tensor<f64, (N,)>,
    p: &Tensor<f64, (N,)>,
    q: &Tensor<f64, (N,)>,
    out: &mut Tensor<f64, (F, N)>,
) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            out[(0, g)] = tanh(a);
            out[(1, g)] = erf(a);
            out[(2, g)] = sigmoid(a);
            out[(3, g)] = sin(a);
            out[(4, g)] = cos(a);
            out[(5, g)] = floor(a);
            out[(6, g)] = ceil(a);
            out[(7, g)] = pow(p[g], q[g]);
            out[(8, g)] = fma(a, p[g], q[g]);
        }
    }
}

/// The occupancy attributes (`min_blocks`, `max_registers`, docs/language.md) on kernels that
/// run: GELU in its tanh form, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`, asking for 12
/// blocks of 128 threads a multiprocessor (NVIDIA: `__launch_bounds__(128, 12)`, at most 40
/// registers; 12 is what sm_86 and sm_89 hold, 1536 threads) and for 32 registers
/// (`__maxnreg__(32)`). A request changes the device code's
/// register allocation, never what it computes: both are checked against float64 like the
/// functions above, on every backend.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)], min_blocks = 12)]
pub fn gelu_min_blocks<const BLOCK: usize>(x: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            y[g] = 0.5 * a * (1.0 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
        }
    }
}

/// [`gelu_min_blocks()`] under `max_registers = 32` with 256 threads.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 256, configs = [d(BLOCK = 1024)], max_registers = 32)]
pub fn gelu_max_registers<const BLOCK: usize>(x: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let a = x[g];
            y[g] = 0.5 * a * (1.0 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
        }
    }
}

/// A product feeding a subtraction, `d = a·b − c`, in f32 and in f16: the form a device
/// compiler may contract into one fused multiply-add (`docs/language.md`, "Fused
/// multiply-add"). With `c` the product rounded, the CPU backend's two roundings give 0 and a
/// fused operation gives the product's rounding error `a·b − c` exactly; the test accepts
/// those two values and nothing else, and says which one each backend gave.
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [d(BLOCK = 512)])]
pub fn mul_sub<const BLOCK: usize>(
    a: &Tensor<f32, (N,)>,
    b: &Tensor<f32, (N,)>,
    c: &Tensor<f32, (N,)>,
    d: &mut Tensor<f32, (N,)>,
    ah: &Tensor<f16, (N,)>,
    bh: &Tensor<f16, (N,)>,
    ch: &Tensor<f16, (N,)>,
    dh: &mut Tensor<f16, (N,)>,
) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            d[g] = a[g] * b[g] - c[g];
            dh[g] = ah[g] * bh[g] - ch[g];
        }
    }
}

/// GELU (tanh form) in float64, the reference of [`gelu_min_blocks()`] and [`gelu_max_registers()`].
pub fn gelu64(x: f64) -> f64 {
    0.5 * x * (1.0 + (0.7978845608028654 * (x + 0.044715 * x * x * x)).tanh())
}

/// The functions, in the rows of `out`.
pub const FUNCTIONS: [&str; 9] = [
    "tanh", "erf", "sigmoid", "sin", "cos", "floor", "ceil", "pow", "fma",
];

/// The float64 value of function `f` (a row of `out`) at one element's inputs.
pub fn reference(f: usize, x: f64, p: f64, q: f64) -> f64 {
    match f {
        0 => x.tanh(),
        1 => erf64(x),
        2 => {
            // e^-|x| / (1 + e^-|x|) below 0, where e^-x would overflow.
            let e = (-x.abs()).exp();
            if x >= 0.0 {
                1.0 / (1.0 + e)
            } else {
                e / (1.0 + e)
            }
        }
        3 => x.sin(),
        4 => x.cos(),
        5 => x.floor(),
        6 => x.ceil(),
        7 => p.powf(q),
        _ => x.mul_add(p, q),
    }
}

/// erf in float64 (std has none), written independently of the backends: the series
/// 2/sqrt(pi)·sum (-1)^n x^(2n+1) / (n! (2n+1)) for |x| < 1 (summed while terms matter), and
/// 1 - erfc beyond, erfc(s) = exp(-s^2) / (sqrt(pi) f) with f the continued fraction
/// s + (1/2)/(s + 1/(s + (3/2)/(..))) evaluated backwards from 8 + 300/s^2 terms: within a few
/// ulp, far below the tolerances here (`the_reference_erf_is_accurate`).
pub fn erf64(x: f64) -> f64 {
    let s = x.abs();
    let r = if s < 1.0 {
        let (z, mut term, mut sum) = (s * s, s, s);
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= -z / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() < 1e-18 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if s < 6.0 {
        let mut f = s;
        for k in (1..=8 + (300.0 / (s * s)) as u32).rev() {
            f = s + 0.5 * k as f64 / f;
        }
        1.0 - (-s * s).exp() / (std::f64::consts::PI.sqrt() * f)
    } else {
        1.0
    };
    r.copysign(x)
}

/// The accuracy each dtype is checked to (`docs/language.md`): relative, plus an absolute
/// floor at the dtype's smallest subnormal scale; `pow` in f64 looser, for AMD without ROCm's
/// device library (exp(y·log x): |y·ln x|·2^-52 relative).
pub fn tolerance(dtype: &str, f: usize) -> (f64, f64) {
    match (dtype, FUNCTIONS[f]) {
        ("f16", _) => (2f64.powi(-23), 2f64.powi(-9)),
        ("bf16", _) => (1e-38, 2f64.powi(-6)),
        ("f32", _) => (1e-40, 2f64.powi(-20)),
        (_, "pow") => (1e-300, 2f64.powi(-40)),
        _ => (1e-300, 2f64.powi(-49)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{compare, test_device, Rng};
    use tilelang::{Device, Element};

    /// Inputs: `x` mostly within [-6, 6] (where tanh, erf and sigmoid are not yet flat), every
    /// eighth element within [-1000, 1000] (sin and cos after a long reduction), every
    /// sixteenth within [-104, -80] (where `e^-x` overflows f32 while sigmoid and `e^x` are
    /// subnormal, f32's and bf16's, not zero); `pow` with a
    /// positive base and any exponent, or a negative base and an integer exponent (the sign
    /// rule); `fma` of the same three.
    fn inputs<T: Element>(rng: &mut Rng, n: usize) -> [Vec<T>; 3] {
        let mut x = Vec::with_capacity(n);
        let (mut p, mut q) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let (lo, hi) = match i % 16 {
                7 | 15 => (-1000.0, 1000.0),
                11 => (-104.0, -80.0),
                _ => (-6.0, 6.0),
            };
            x.push(T::from_f64(rng.uniform(lo, hi)));
            if i % 2 == 0 {
                p.push(T::from_f64(rng.uniform(0.25, 4.0)));
                q.push(T::from_f64(rng.uniform(-4.0, 4.0)));
            } else {
                p.push(T::from_f64(rng.uniform(-4.0, -0.25)));
                q.push(T::from_f64(rng.uniform(-5.0, 5.0).round()));
            }
        }
        [x, p, q]
    }

    fn check<T: Element>(
        dev: &Device,
        dtype: &str,
        launch: impl Fn(&Tensor<T>, &Tensor<T>, &Tensor<T>, &mut Tensor<T>) -> tilelang::Result<()>,
    ) {
        let seed = Rng::fresh_seed();
        let mut rng = Rng::new(seed);
        let n = 3 * 512 + 77; // a tail block
        let [x, p, q] = inputs::<T>(&mut rng, n);
        let (xt, pt, qt) = (
            dev.upload(&x, &[n]).unwrap(),
            dev.upload(&p, &[n]).unwrap(),
            dev.upload(&q, &[n]).unwrap(),
        );
        let mut out = dev.alloc::<T>(&[9, n]).unwrap();
        launch(&xt, &pt, &qt, &mut out).unwrap();
        let got = out.to_vec().unwrap();
        for (f, name) in FUNCTIONS.iter().enumerate() {
            let want: Vec<f64> = (0..n)
                .map(|i| reference(f, x[i].to_f64(), p[i].to_f64(), q[i].to_f64()))
                .collect();
            let (atol, rtol) = tolerance(dtype, f);
            let cmp = compare(&got[f * n..(f + 1) * n], &want, atol, rtol);
            assert!(
                cmp.passed(),
                "{name} on {dtype} ({:?}), seed {seed}: {cmp}",
                dev.backend()
            );
        }
    }

    #[test]
    fn math_on_f16_within_its_documented_accuracy() {
        let dev = test_device();
        check::<f16>(&dev, "f16", |x, p, q, o| math_f16(&dev, x, p, q, o));
    }

    #[test]
    fn math_on_bf16_within_its_documented_accuracy() {
        let dev = test_device();
        check::<bf16>(&dev, "bf16", |x, p, q, o| math_bf16(&dev, x, p, q, o));
    }

    #[test]
    fn math_on_f32_within_its_documented_accuracy() {
        let dev = test_device();
        check::<f32>(&dev, "f32", |x, p, q, o| math_f32(&dev, x, p, q, o));
    }

    #[test]
    fn math_on_f64_within_its_documented_accuracy() {
        let dev = test_device();
        check::<f64>(&dev, "f64", |x, p, q, o| math_f64(&dev, x, p, q, o));
    }

    /// GELU under each occupancy request against float64, at a tail size with poisoned outputs:
    /// f32 throughout, so within a few f32 ulps of the value's scale (`|x|`, where
    /// `1 + tanh(..)` cancels for negative `x`).
    #[test]
    fn occupancy_requests_leave_the_results_alone() {
        let dev = test_device();
        let seed = Rng::fresh_seed();
        let mut rng = Rng::new(seed);
        let n = 5 * 1024 + 333;
        let x: Vec<f32> = (0..n).map(|_| rng.uniform(-8.0, 8.0) as f32).collect();
        let xt = dev.upload(&x, &[n]).unwrap();
        let want: Vec<f64> = x.iter().map(|&v| gelu64(v as f64)).collect();
        type Launch<'a> = &'a dyn Fn(&Tensor<f32>, &mut Tensor<f32>) -> tilelang::Result<()>;
        let runs: [(&str, Launch); 2] = [
            ("min_blocks", &|x, y| gelu_min_blocks(&dev, x, y)),
            ("max_registers", &|x, y| gelu_max_registers(&dev, x, y)),
        ];
        for (name, launch) in runs {
            let mut y = dev.upload(&vec![f32::NAN; n], &[n]).unwrap();
            launch(&xt, &mut y).unwrap();
            let got = y.to_vec().unwrap();
            let cmp = compare(&got, &want, 4e-6, 2f64.powi(-20));
            assert!(
                cmp.passed(),
                "gelu_{name} ({:?}), seed {seed}: {cmp}",
                dev.backend()
            );
        }
    }

    /// `a·b − c` with `c = a·b` rounded: 0 where the product is rounded first (the CPU
    /// backend, always), the exact rounding error `a·b − c` where the device fused the two
    /// (one rounding, of a value the format holds exactly: products of values in [1, 2) have
    /// at most 2·24 (f32) or 2·11 (f16) significant bits, and the error of rounding one to
    /// its format is a multiple of the product's last bit below half an ulp). Nothing else
    /// is right.
    #[test]
    fn a_product_feeding_a_subtraction_rounds_once_or_twice() {
        let dev = test_device();
        let seed = Rng::fresh_seed();
        let mut rng = Rng::new(seed);
        let n = 2 * 512 + 31;
        let a: Vec<f32> = (0..n).map(|_| rng.uniform(1.0, 2.0) as f32).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.uniform(1.0, 2.0) as f32).collect();
        let c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let ah: Vec<f16> = rng.vec(n, 1.0, 2.0);
        let bh: Vec<f16> = rng.vec(n, 1.0, 2.0);
        let ch: Vec<f16> = ah.iter().zip(&bh).map(|(x, y)| *x * *y).collect();
        let up = |v: &[f32]| dev.upload(v, &[n]).unwrap();
        let uph = |v: &[f16]| dev.upload(v, &[n]).unwrap();
        let mut d = dev.upload(&vec![f32::NAN; n], &[n]).unwrap();
        let mut dh = dev.upload(&vec![f16::NAN; n], &[n]).unwrap();
        mul_sub(
            &dev,
            &up(&a),
            &up(&b),
            &up(&c),
            &mut d,
            &uph(&ah),
            &uph(&bh),
            &uph(&ch),
            &mut dh,
        )
        .unwrap();
        let (d, dh) = (d.to_vec().unwrap(), dh.to_vec().unwrap());
        let mut fused = [0usize; 2];
        for i in 0..n {
            let exact = f64::from(a[i]) * f64::from(b[i]) - f64::from(c[i]);
            let exact_h = ah[i].to_f64() * bh[i].to_f64() - ch[i].to_f64();
            for (k, got, residual) in [(0, f64::from(d[i]), exact), (1, dh[i].to_f64(), exact_h)] {
                assert!(
                    got == 0.0 || got == residual,
                    "element {i} ({}): got {got}, want 0 (two roundings) or {residual} (one) \
                     (TILELANG_SEED={seed})",
                    ["f32", "f16"][k]
                );
                fused[k] += usize::from(got != 0.0);
            }
        }
        println!(
            "{:?}: fused a·b − c in {} of {n} f32 and {} of {n} f16 elements",
            dev.backend(),
            fused[0],
            fused[1]
        );
        if dev.backend() == tilelang::Backend::Cpu {
            assert_eq!(fused, [0, 0], "the CPU backend rounds every operation");
        }
    }

    /// The reference's own erf, against values from 40-digit arithmetic (mpmath), rounded.
    #[test]
    #[allow(clippy::excessive_precision)] // the digits as computed
    fn the_reference_erf_is_accurate() {
        for (x, want) in [
            (0.1, 0.1124629160182848984047123),
            (0.9, 0.7969082124228321396646662),
            (2.5, 0.9995930479825550410604358),
            (2.9999, 0.9999778955735178390909574),
            (3.5, 0.9999992569016276585872545),
            (-1.7, -0.9837904585907745608413129),
            (5.0, 0.999999999998462540205572),
            (0.999, 0.8422852702064969416389683),
            (1.001, 0.8431154854780762790335591),
        ] {
            let got = erf64(x);
            assert!(
                (got - want).abs() <= 2f64.powi(-50) * want.abs(),
                "erf64({x}) = {got}, want {want}"
            );
        }
    }
}
