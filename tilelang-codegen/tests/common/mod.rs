//! What the codegen tests share: a `#[tile_kernel]` function in a string compiled to the IR or
//! to HIP C++, the kernels that several test files lower, and the error catalogue's assertions
//! (`diagnose`).

// Each test binary uses a part of these.
#![allow(dead_code)]

pub mod diagnose;
pub mod host;

use tilelang_codegen::ir::Kernel;
use tilelang_codegen::lower::{emit, HipKernel};
use tilelang_codegen::target::Target;

/// The IR of the first item of `src`, a function with a `#[tile_kernel(..)]` attribute; panics
/// with the diagnostics when it does not compile.
pub fn kernel(src: &str) -> Kernel {
    let file = syn::parse_file(src).expect("test source parses");
    let syn::Item::Fn(mut f) = file.items.into_iter().next().unwrap() else {
        panic!("a function")
    };
    let i = f
        .attrs
        .iter()
        .position(|a| a.path().is_ident("tile_kernel"))
        .unwrap();
    let attr = f.attrs.remove(i);
    let syn::Meta::List(list) = attr.meta else {
        panic!("attribute list")
    };
    tilelang_codegen::compile(list.tokens, quote::ToTokens::into_token_stream(f))
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| d.text()).collect::<Vec<_>>()))
}

/// The HIP C++ of `src`'s kernel, config `config`, for `arch`.
pub fn hip(src: &str, config: usize, arch: &str) -> HipKernel {
    emit(&kernel(src), config, &Target::by_arch(arch).unwrap(), None).unwrap()
}

/// A tiled GEMM with a ReLU epilogue in a 2-stage pipelined loop: the snapshots' kernel, and the
/// one most GEMM tests lower.
pub const GEMM: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 128, configs = [t64(BM = 64, BN = 64, BK = 32)])]
pub fn gemm<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), 2) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(b.at((k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    for (i, j) in parallel(BM, BN) {
        acc[(i, j)] = max(acc[(i, j)], 0.0);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
"#;

/// The maximum of each row, a tile of `BN` columns at a time (also a snapshot).
pub const ROWMAX: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r4(BM = 4, BN = 256)])]
pub fn rowmax<const BM: usize, const BN: usize>(a: &Tensor<f32, (M, N)>, out: &mut Tensor<f32, (M,)>) {
    let row0 = block_idx(0) * BM;
    let mut t = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut best = alloc_fragment::<f32, (BM,)>();
    fill(&mut best, -1.0e30);
    for c in serial(N.div_ceil(BN)) {
        copy(a.at((row0, c * BN)), &mut t);
        reduce_max(&t, &mut m, 1);
        for i in parallel(BM) {
            best[i] = max(best[i], m[i]);
        }
    }
    copy(&best, out.at_mut((row0,)));
}
"#;

/// The GEMM kernel with another element type, block size and tile.
pub fn gemm_variant(dtype: &str, threads: u32, bm: u32, bn: u32, bk: u32) -> String {
    GEMM.replace("threads = 128", &format!("threads = {threads}"))
        .replace(
            "BM = 64, BN = 64, BK = 32",
            &format!("BM = {bm}, BN = {bn}, BK = {bk}"),
        )
        .replace("f16", dtype)
}

/// A transpose through a shared tile, under five tile shapes.
pub const TRANSPOSE: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = T, configs = [a(BM = 64, BN = 64, T = 256), b(BM = 32, BN = 32, T = 128), c(BM = 64, BN = 128, T = 256), d(BM = 128, BN = 64, T = 256), e(BM = 24, BN = 40, T = 64)])]
pub fn transpose<const BM: usize, const BN: usize, const T: usize>(x: &Tensor<f16, (M, N)>, y: &mut Tensor<f16, (N, M)>) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut s = alloc_shared::<f16, (BM, BN)>();
    let mut t = alloc_fragment::<f16, (BN, BM)>();
    copy(x.at((r0, c0)), &mut s);
    for (j, i) in parallel(BN, BM) {
        t[(j, i)] = s[(i, j)];
    }
    copy(&t, y.at_mut((c0, r0)));
}
"#;

/// A row `b` added to every row of a tile, under three tile widths.
pub const BIAS: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = T, configs = [c(BM = 2, BN = 256, T = 128), s(BM = 2, BN = 64, T = 128), odd(BM = 2, BN = 24, T = 32)])]
pub fn bias<const BM: usize, const BN: usize, const T: usize>(x: &Tensor<f32, (M, N)>, b: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut b_f = alloc_fragment::<f32, (BN,)>();
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(b.at((t * BN,)), &mut b_f);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = tile[(i, j)] + b_f[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}
"#;

/// Row sums of tiles loaded through shared memory (sequentially and pipelined), then the rows
/// scaled by `w` and shifted by `b` read through shared tiles.
pub const STAGED_ROWS: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r2(BM = 2, BN = 256)])]
pub fn staged<const BM: usize, const BN: usize>(x: &Tensor<f16, (M, N)>, w: &Tensor<f16, (N,)>, b: &Tensor<f16, (N,)>, y: &mut Tensor<f16, (M, N)>, s: &mut Tensor<f32, (M,)>) {
    let row0 = block_idx(0) * BM;
    let mut x_s = alloc_shared::<f32, (BM, BN)>();
    let mut p_s = alloc_shared::<f16, (BM, BN)>();
    let mut w_s = alloc_shared::<f32, (BN,)>();
    let mut b_s = alloc_shared::<f32, (BN,)>();
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut acc = alloc_fragment::<f32, (BM,)>();
    clear(&mut acc);
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut x_s);
        reduce_sum(&x_s, &mut part, 1);
        for i in parallel(BM) {
            acc[i] += part[i];
        }
    }
    for t in pipelined(N.div_ceil(BN), 2) {
        copy(x.at((row0, t * BN)), &mut p_s);
        copy(&p_s, &mut tile);
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            acc[i] += part[i];
        }
    }
    copy(&acc, s.at_mut((row0,)));
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(w.at((t * BN,)), &mut w_s);
        copy(b.at((t * BN,)), &mut b_s);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = tile[(i, j)] * w_s[j] + b_s[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}
"#;

/// Attention written the way the docs teach (issue 39's "natural kernel", `docs/design/
/// attention.md` §0): online softmax over key blocks, `S = Q·Kᵀ` through `.t()`, `O += P·V`.
pub const ATTENTION: &str = r#"
#[tile_kernel(grid = [S.div_ceil(BM), BH], threads = THREADS, configs = [d128(BM = 128, BN = 64, D = 128, THREADS = 256, STAGES = 2), d64(BM = 64, BN = 64, D = 64, THREADS = 128, STAGES = 2)])]
pub fn attention<const BM: usize, const BN: usize, const D: usize, const THREADS: usize, const STAGES: usize>(q: &Tensor<f16, (BH, S, D)>, k: &Tensor<f16, (BH, S, D)>, v: &Tensor<f16, (BH, S, D)>, o: &mut Tensor<f16, (BH, S, D)>, c: f32) {
    let (r0, bh) = (block_idx(0) * BM, block_idx(1));
    let mut q_s = alloc_shared::<f16, (BM, D)>();
    let mut k_s = alloc_shared::<f16, (BN, D)>();
    let mut v_s = alloc_shared::<f16, (BN, D)>();
    let mut s = alloc_fragment::<f32, (BM, BN)>();
    let mut p = alloc_fragment::<f16, (BM, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, D)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut mx = alloc_fragment::<f32, (BM,)>();
    let mut alpha = alloc_fragment::<f32, (BM,)>();
    let mut l = alloc_fragment::<f32, (BM,)>();
    let mut rs = alloc_fragment::<f32, (BM,)>();
    copy(q.at((bh, r0, 0)), &mut q_s);
    fill(&mut m, f32::NEG_INFINITY);
    clear(&mut l);
    clear(&mut acc);
    for kb in pipelined(S.div_ceil(BN), STAGES) {
        copy(k.at((bh, kb * BN, 0)), &mut k_s);
        copy(v.at((bh, kb * BN, 0)), &mut v_s);
        clear(&mut s);
        gemm(&q_s, &k_s.t(), &mut s);
        reduce_max(&s, &mut mx, 1);
        for i in parallel(BM) {
            mx[i] = max(m[i], mx[i] * c);
            alpha[i] = exp2(m[i] - mx[i]);
            m[i] = mx[i];
        }
        for (i, j) in parallel(BM, BN) {
            s[(i, j)] = exp2(s[(i, j)] * c - m[i]);
        }
        reduce_sum(&s, &mut rs, 1);
        for i in parallel(BM) {
            l[i] = l[i] * alpha[i] + rs[i];
        }
        copy(&s, &mut p);
        for (i, d) in parallel(BM, D) {
            acc[(i, d)] *= alpha[i];
        }
        gemm(&p, &v_s, &mut acc);
    }
    for (i, d) in parallel(BM, D) {
        acc[(i, d)] /= l[i];
    }
    copy(&acc, o.at_mut((bh, r0, 0)));
}
"#;
