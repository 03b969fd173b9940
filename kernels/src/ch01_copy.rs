//! # Chapter 01: copy, three ways
//!
//! `B = A` for `N = 524,288` half-precision values (1 MiB in, 1 MiB out). Nothing is computed,
//! so a copy measures one thing only: how much of the machine a kernel puts to work moving
//! memory. The three variants differ in exactly that.
//!
//! 1. **One block, one thread** (`grid = [1]`, `threads = 1`): a serial loop over all `N`
//!    elements. It is correct and hopeless on a GPU: one thread of one compute unit issues one
//!    load and one store at a time, and each waits hundreds of cycles for memory.
//! 2. **One block of `THREADS` threads** (`grid = [1]`): the block walks the array in chunks of
//!    `THREADS` elements; the `parallel` loop hands one element of a chunk to each thread. Now
//!    a whole block issues loads at once, but a single block still runs on a single compute
//!    unit while the other hundred-odd sit idle. The last chunk may run past `N`; the
//!    `if g < N` guard skips those elements.
//! 3. **Many blocks**: the grid has `N.div_ceil(BLOCK)` blocks, block `b` moving elements
//!    `b·BLOCK .. (b+1)·BLOCK`. The body is just two tile copies, global → fragment →
//!    global. `copy` handles the tail itself: reading past `N` gives zeros and writing past
//!    `N` is skipped, so the kernel needs no guard. Every compute unit works, and a GPU can
//!    issue wide (vectorised) loads for a contiguous tile. This is the one that runs at the
//!    memory's speed.
//!
//! A copy must be exact: the check compares with atol = rtol = 0 and the tests compare bits.

use crate::check::{self, Case, Problem, Rng, Scale, Work};
use tilelang::prelude::*;

// ANCHOR: copy_one_thread
/// Variant 1: one block of one thread copies everything, one element at a time.
#[tile_kernel(grid = [1], threads = 1)]
pub fn copy_one_thread(a: &Tensor<f16, (N,)>, b: &mut Tensor<f16, (N,)>) {
    for i in serial(N) {
        b[i] = a[i];
    }
}
// ANCHOR_END: copy_one_thread

// ANCHOR: copy_one_block
/// Variant 2: one block; each step of the serial loop copies `THREADS` elements in parallel.
#[tile_kernel(
    grid = [1],
    threads = THREADS,
    configs = [t256(THREADS = 256), t1024(THREADS = 1024)],
    defaults = [gfx1100 = t256, gfx1151 = t256, gfx1201 = t256, gfx90a = t256, gfx942 = t256, sm_90 = t1024, cpu = t256],
)]
pub fn copy_one_block<const THREADS: usize>(a: &Tensor<f16, (N,)>, b: &mut Tensor<f16, (N,)>) {
    for chunk in serial(N.div_ceil(THREADS)) {
        for t in parallel(THREADS) {
            let g = chunk * THREADS + t;
            if g < N {
                b[g] = a[g];
            }
        }
    }
}
// ANCHOR_END: copy_one_block

// ANCHOR: copy_tiled
/// Variant 3: one block per `BLOCK` elements; a tile goes global → fragment → global.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = THREADS,
    configs = [b1024(BLOCK = 1024, THREADS = 128), b2048(BLOCK = 2048, THREADS = 256), b8192(BLOCK = 8192, THREADS = 512)],
    defaults = [gfx1100 = b2048, gfx1151 = b1024, gfx1201 = b2048, gfx90a = b2048, gfx942 = b2048, sm_90 = b1024, cpu = b8192],
)]
pub fn copy_tiled<const BLOCK: usize, const THREADS: usize>(
    a: &Tensor<f16, (N,)>,
    b: &mut Tensor<f16, (N,)>,
) {
    let base = block_idx(0) * BLOCK;
    let mut tile = alloc_fragment::<f16, (BLOCK,)>();
    copy(a.at((base,)), &mut tile);
    copy(&tile, b.at_mut((base,)));
}
// ANCHOR_END: copy_tiled

/// The float64 reference: the input itself.
pub fn reference_copy(a: &[f64]) -> Vec<f64> {
    a.to_vec()
}

/// `n` finite f16 values with random bit patterns: every exponent (subnormals and ±0 included)
/// and every mantissa occurs, so a copy that converts or rounds anything shows up.
pub fn random_finite_f16(rng: &mut Rng, n: usize) -> Vec<f16> {
    (0..n)
        .map(|_| loop {
            let x = f16::from_bits(rng.next_u64() as u16);
            if x.is_finite() {
                break x;
            }
        })
        .collect()
}

// ANCHOR: tolerance
/// A copy is exact.
const ATOL: f64 = 0.0;
const RTOL: f64 = 0.0;
// ANCHOR_END: tolerance

pub fn run(dev: &Device, scale: Scale, seed: u64) -> tilelang::Result<Vec<Case>> {
    let n = match scale {
        Scale::Tutorial | Scale::Reduced => 524_288,
    };
    let mut rng = Rng::new(seed);
    let av = random_finite_f16(&mut rng, n);
    let want = reference_copy(&check::to_f64(&av));
    let a = dev.upload(&av, &[n])?;
    let mut b = dev.alloc::<f16>(&[n])?;
    let p = Problem {
        chapter: "01",
        size: format!("N={n}"),
        work: Work::Bytes(2.0 * 2.0 * n as f64),
        reps: check::reps_for(dev, n as f64),
        want: &want,
        atol: ATOL,
        rtol: RTOL,
    };
    let mut cases = p.sweep(dev, "1 block x 1 thread", &mut b, |cfg, b| {
        copy_one_thread::launch(dev, cfg, &a, b)
    })?;
    cases.extend(p.sweep(dev, "1 block x THREADS", &mut b, |cfg, b| {
        copy_one_block::launch(dev, cfg, &a, b)
    })?);
    cases.extend(p.sweep(dev, "many blocks (tiles)", &mut b, |cfg, b| {
        copy_tiled::launch(dev, cfg, &a, b)
    })?);
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-for-bit equality (the float comparison would accept −0 for +0).
    fn assert_bits(what: &str, got: &Tensor<f16>, want: &[f16], seed: u64) {
        let got = got.to_vec().unwrap();
        assert_eq!(got.len(), want.len(), "{what}: length");
        if let Some(i) = (0..want.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
            panic!(
                "{what}: element {i} is {:#06x}, want {:#06x} (TILELANG_SEED={seed})",
                got[i].to_bits(),
                want[i].to_bits()
            );
        }
    }

    type Launch = fn(&Device, &str, &Tensor<f16>, &mut Tensor<f16>) -> tilelang::Result<()>;
    const KERNELS: [(&str, &[&str], Launch); 3] = [
        (
            "copy_one_thread",
            copy_one_thread::CONFIGS,
            copy_one_thread::launch_named,
        ),
        (
            "copy_one_block",
            copy_one_block::CONFIGS,
            copy_one_block::launch_named,
        ),
        ("copy_tiled", copy_tiled::CONFIGS, copy_tiled::launch_named),
    ];

    #[test]
    fn every_config_copies_exactly_with_tails() {
        let dev = crate::check::test_device();
        let seed = Rng::fresh_seed();
        for n in [1, 255, 1025, 4097, 20_001] {
            let av = random_finite_f16(&mut Rng::new(seed ^ n as u64), n);
            let a = dev.upload(&av, &[n]).unwrap();
            let mut b = dev.alloc::<f16>(&[n]).unwrap();
            for (name, configs, launch) in KERNELS {
                for cfg in configs {
                    b.poison().unwrap();
                    launch(&dev, cfg, &a, &mut b).unwrap();
                    assert_bits(&format!("{name}[{cfg}] n={n}"), &b, &av, seed);
                    check::assert_close(
                        &format!("{name}[{cfg}] n={n}"),
                        &b,
                        &reference_copy(&check::to_f64(&av)),
                        ATOL,
                        RTOL,
                        seed,
                    );
                }
            }
        }
    }

    /// Signed zeros, the extremes, subnormals and infinities. (NaNs are left out: a NaN
    /// compares unequal to itself, and which NaN bits a copy keeps is not part of this chapter.)
    #[test]
    fn special_values_survive() {
        let dev = crate::check::test_device();
        let av: Vec<f16> = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            65504.0,
            -65504.0,
            6.0e-8,
            -6.0e-8,
            6.1e-5,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
        let n = av.len();
        let a = dev.upload(&av, &[n]).unwrap();
        let mut b = dev.alloc::<f16>(&[n]).unwrap();
        for (name, configs, launch) in KERNELS {
            for cfg in configs {
                b.poison().unwrap();
                launch(&dev, cfg, &a, &mut b).unwrap();
                assert_bits(&format!("{name}[{cfg}]"), &b, &av, 0);
            }
        }
    }

    #[test]
    fn mismatched_lengths_are_refused_before_any_write() {
        let dev = crate::check::test_device();
        let a = dev.zeros::<f16>(&[100]).unwrap();
        let mut b = dev.alloc::<f16>(&[99]).unwrap();
        let err = copy_tiled(&dev, &a, &mut b).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { symbol: "N", .. }),
            "{err}"
        );
        assert!(
            b.to_vec().unwrap().iter().all(|x| x.is_nan()),
            "nothing may be written"
        );
    }
}
