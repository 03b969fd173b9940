//! Property test: the frontend and the GPU lowering never panic, whatever tokens they are given.
//!
//! The corpus is a set of valid kernels written below (together they use every construct of the
//! kernel language) plus every `#[tile_kernel]` function found in `kernels/src/*.rs` at test
//! time. Each mutant applies 1 to 3 token-level mutations to one corpus kernel (attribute or
//! function) and runs `compile` and `expand` under `catch_unwind`. Properties checked:
//!
//! - no panic, in `compile`, in the GPU lowering (`launcher::lower`: `lower::emit` for every
//!   config and every target in `target::TARGETS`) or in `expand_for` (which runs both);
//! - `compile` and the lowering are `Ok` exactly when `expand_for` emits no `compile_error!`
//!   (a target limit is a diagnostic, on the config's name), except for tokens that
//!   are not a Rust item at all: those get no diagnostic and expand to nothing (rustc reports
//!   the syntax error itself);
//! - an `Ok` kernel's expansion re-parses as a `syn::File` (valid Rust tokens), and so does the
//!   error path's (diagnostics + fallback launcher), on a sample;
//! - every diagnostic has a non-empty message.
//!
//! Mutant `i` uses the seed `mix(BASE_SEED + i)`: a failure prints the seed and the mutant's
//! text; `FUZZ_SEED=<seed>` replays that single mutant (with the same `kernels/src`), and
//! `FUZZ_N=<count>` changes the count (default 5000), `FUZZ_THREADS` the threads (default up to
//! 4) and `FUZZ_KERNELS_SRC` where the tutorial kernels are read from.
//!
//! Cost: in a dev build almost all the time is `syn` parsing unoptimised (about 5 ms of CPU per
//! mutant); the mutants run on up to 4 threads.

use proc_macro2::{Delimiter, Group, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

// ---------------------------------------------------------------------------------------------
// The corpus.

/// Valid kernels. Between them: copy (region→buffer, buffer→region, buffer→buffer with a dtype
/// change), fill, clear, gemm, reduce_sum / reduce_max (1-D and 2-D), serial (1 and 2 bounds),
/// pipelined, parallel 1-D and 2-D, if / else if / else, if_then_else, every math function,
/// casts between all dtypes, bit operations and shifts, every compound assignment, unary `-`
/// and `!`, atomic_add on tensors and shared buffers, alloc_local, alloc with a shape argument,
/// tuple `let`, typed `let`, scalar parameters of every dtype, const-generic tensor dimensions,
/// 1-, 2- and 3-D grids, `requires`, `configs`, `defaults`, and kernels without const generics.
const CORPUS: &[&str] = &[
    // 1. Element-wise, 1-D parallel, scalar parameter, casts, configs and defaults.
    r#"
    /// y = alpha * x + y
    #[tile_kernel(
        grid = [N.div_ceil(BLOCK)],
        threads = THREADS,
        configs = [small(BLOCK = 256, THREADS = 64), large(BLOCK = 1024, THREADS = 256)],
        defaults = [gfx1100 = small, sm_90 = large, cpu = large],
    )]
    pub fn axpy<const BLOCK: usize, const THREADS: usize>(
        x: &Tensor<f16, (N,)>,
        y: &mut Tensor<f16, (N,)>,
        alpha: f32,
    ) {
        let base = block_idx(0) * BLOCK;
        for i in parallel(BLOCK) {
            let g = base + i;
            if g < N {
                y[g] = ((x[g] as f32) * alpha + (y[g] as f32)) as f16;
            }
        }
    }
    "#,
    // 2. Tiled GEMM: shared + fragment buffers, pipelined, gemm, tuple let, requires.
    r#"
    #[tile_kernel(
        grid = [N.div_ceil(BN), M.div_ceil(BM)],
        threads = 128,
        configs = [t64(BM = 64, BN = 64, BK = 32, STAGES = 2), t128(BM = 128, BN = 128, BK = 32, STAGES = 3)],
        defaults = [sm_90 = t128, cpu = t64],
        requires = [K % BK == 0],
    )]
    pub fn matmul<const BM: usize, const BN: usize, const BK: usize, const STAGES: usize>(
        a: &Tensor<f16, (M, K)>,
        b: &Tensor<f16, (K, N)>,
        c: &mut Tensor<f16, (M, N)>,
    ) {
        let (bx, by) = (block_idx(0), block_idx(1));
        let mut a_s = alloc_shared::<f16, (BM, BK)>();
        let mut b_s = alloc_shared::<f16, (BK, BN)>();
        let mut acc = alloc_fragment::<f32, (BM, BN)>();
        clear(&mut acc);
        for k in pipelined(K.div_ceil(BK), STAGES) {
            copy(a.at((by * BM, k * BK)), &mut a_s);
            copy(b.at((k * BK, bx * BN)), &mut b_s);
            gemm(&a_s, &b_s, &mut acc);
        }
        copy(&acc, c.at_mut((by * BM, bx * BN)));
    }
    "#,
    // 3. Row softmax: reduce_max / reduce_sum along dim 1, exp, fill, 2-D parallel.
    r#"
    #[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r4(BM = 4, BN = 64)], requires = [N <= BN])]
    pub fn softmax<const BM: usize, const BN: usize>(x: &Tensor<f32, (M, N)>, y: &mut Tensor<f32, (M, N)>) {
        let row = block_idx(0) * BM;
        let mut tile = alloc_shared::<f32, (BM, BN)>();
        let mut frag = alloc_fragment::<f32, (BM, BN)>();
        let mut mx = alloc_fragment::<f32, (BM,)>();
        let mut sum = alloc_fragment::<f32, (BM,)>();
        copy(x.at((row, 0)), &mut tile);
        copy(&tile, &mut frag);
        for (i, j) in parallel(BM, BN) {
            if j >= N {
                frag[(i, j)] = -1e30;
            }
        }
        reduce_max(&frag, &mut mx, 1);
        for (i, j) in parallel(BM, BN) {
            frag[(i, j)] = exp(frag[(i, j)] - mx[i]);
        }
        fill(&mut sum, 0.0);
        reduce_sum(&frag, &mut sum, 1);
        for (i, j) in parallel(BM, BN) {
            frag[(i, j)] = frag[(i, j)] / sum[i];
        }
        copy(&frag, y.at_mut((row, 0)));
    }
    "#,
    // 4. W4A16: u8 tensor, nibble unpacking with shifts and masks, shape given as an argument.
    r#"
    #[tile_kernel(
        grid = [N.div_ceil(BN), M.div_ceil(BM)],
        threads = 128,
        configs = [base(BM = 32, BN = 32, BK = 32)],
        requires = [K % BK == 0, N % 2 == 0],
    )]
    pub fn w4a16<const BM: usize, const BN: usize, const BK: usize>(
        a: &Tensor<f16, (M, K)>,
        q: &Tensor<u8, (K, NH)>,
        scale: &Tensor<f16, (N,)>,
        c: &mut Tensor<f16, (M, N)>,
    ) {
        let (bx, by) = (block_idx(0), block_idx(1));
        let mut a_s = alloc_shared::<f16, (BM, BK)>();
        let mut q_s = alloc_shared::<u8>((BK, BN / 2));
        let mut b_s = alloc_shared::<f16, (BK, BN)>();
        let mut acc = alloc_fragment::<f32, (BM, BN)>();
        clear(&mut acc);
        for k in serial(K / BK) {
            copy(a.at((by * BM, k * BK)), &mut a_s);
            copy(q.at((k * BK, bx * BN / 2)), &mut q_s);
            for (i, j) in parallel(BK, BN) {
                let byte = q_s[(i, j / 2)];
                let nib = if_then_else(j % 2 == 0, byte & 15, (byte >> 4) & 0xF);
                let v = ((nib as i32) - 8) as f16;
                b_s[(i, j)] = v * scale[bx * BN + j];
            }
            gemm(&a_s, &b_s, &mut acc);
        }
        copy(&acc, c.at_mut((by * BM, bx * BN)));
    }
    "#,
    // 5. Split column sum with atomic_add on a tensor, grid over a scalar, serial(start, end).
    r#"
    #[tile_kernel(grid = [N.div_ceil(256), splits], threads = 256, requires = [splits > 0])]
    pub fn col_sum_atomic(x: &Tensor<f32, (M, N)>, out: &mut Tensor<f32, (N,)>, splits: usize) {
        let col0 = block_idx(0) * 256;
        let part = block_idx(1);
        let rows = M.div_ceil(splits);
        for j in parallel(256) {
            let col = col0 + j;
            if col < N {
                let mut acc = 0.0f32;
                for r in serial(part * rows, min(part * rows + rows, M)) {
                    acc += x[(r, col)];
                }
                atomic_add(&mut out[col], acc);
            }
        }
    }
    "#,
    // 6. Histogram: atomic_add on a shared buffer, const-generic tensor dimension, u8→usize cast.
    r#"
    #[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = BLOCK, configs = [b128(BLOCK = 128, BINS = 16)])]
    pub fn histogram<const BLOCK: usize, const BINS: usize>(x: &Tensor<u8, (N,)>, hist: &mut Tensor<u32, (BINS,)>) {
        let mut local_hist = alloc_shared::<u32, (BINS,)>();
        clear(&mut local_hist);
        let base = block_idx(0) * BLOCK;
        for i in parallel(BLOCK) {
            let g = base + i;
            if g < N {
                let bin = (x[g] >> 4) as usize;
                atomic_add(&mut local_hist[bin], 1);
            }
        }
        for b in parallel(BINS) {
            atomic_add(&mut hist[b], local_hist[b]);
        }
    }
    "#,
    // 7. RMS norm: alloc_local, rsqrt, 1-D reduce into (1,), bf16, f32 scalar, nested serial.
    r#"
    #[tile_kernel(grid = [M], threads = 64, configs = [v4(VEC = 4), v2(VEC = 2)], defaults = [gfx1151 = v2])]
    pub fn rms_norm<const VEC: usize>(
        x: &Tensor<bf16, (M, N)>,
        w: &Tensor<bf16, (N,)>,
        y: &mut Tensor<bf16, (M, N)>,
        eps: f32,
    ) {
        let row = block_idx(0);
        let mut ss = alloc_fragment::<f32>((64,));
        let mut total = alloc_fragment::<f32>((1,));
        for t in parallel(64) {
            let mut acc = 0.0f32;
            let mut tmp = alloc_local::<f32, (VEC,)>();
            for c in serial(N.div_ceil(64 * VEC)) {
                for v in serial(VEC) {
                    let col = (c * 64 + t) * VEC + v;
                    tmp[v] = if_then_else(col < N, x[(row, col)] as f32, 0.0);
                }
                for v in serial(VEC) {
                    acc += tmp[v] * tmp[v];
                }
            }
            ss[t] = acc;
        }
        reduce_sum(&ss, &mut total, 0);
        for j in parallel(64) {
            let inv = rsqrt(total[0] / (N as f32) + eps);
            for c in serial(N.div_ceil(64)) {
                let col = c * 64 + j;
                if col < N && !(col >= N) {
                    y[(row, col)] = ((x[(row, col)] as f32) * inv * (w[col] as f32)) as bf16;
                }
            }
        }
    }
    "#,
    // 8. Integer and bit operations, scalar parameters of every dtype, abs / max / min.
    r#"
    #[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
    pub fn bits(
        a: &Tensor<u32, (N,)>,
        b: &Tensor<i32, (N,)>,
        out: &mut Tensor<u32, (N,)>,
        out2: &mut Tensor<i32, (N,)>,
        mask: u32,
        shift: u8,
        bias: i32,
        h: f16,
        g: bf16,
        d: f64,
        n: usize,
    ) {
        for i in parallel(64) {
            let idx = block_idx(0) * 64 + i;
            if idx < N && idx < n {
                let x = a[idx];
                let y = ((x << (shift as u32)) | (x >> 3)) ^ mask;
                let z = !(y & 0xFFFF_0000u32);
                out[idx] = z % 7 + (y / 3);
                let s = -b[idx] + bias;
                out2[idx] = abs(s) - max(s, 0) + min(s, 1) + (((h as f32) + (g as f32)) as f64 * d) as i32;
            } else {
                if idx < N {
                    out[idx] = 0;
                }
            }
        }
    }
    "#,
    // 9. Conv1d: 3-D grid, 3-D tensors, negative tile offsets, serial(0, KW), else if.
    r#"
    #[tile_kernel(
        grid = [L.div_ceil(BL), C, B],
        threads = BL,
        configs = [k3(BL = 128, KW = 3)],
        defaults = [cpu = k3],
        requires = [KW % 2 == 1],
    )]
    pub fn conv1d<const BL: usize, const KW: usize>(
        x: &Tensor<f32, (B, C, L)>,
        w: &Tensor<f32, (C, KW)>,
        y: &mut Tensor<f32, (B, C, L)>,
    ) {
        let (l0, ch, bt) = (block_idx(0) * BL, block_idx(1), block_idx(2));
        let mut xs = alloc_shared::<f32>((1, 1, BL + KW - 1));
        copy(x.at((bt, ch, l0 - KW / 2)), &mut xs);
        for i in parallel(BL) {
            let mut acc = 0.0;
            for t in serial(0, KW) {
                acc += xs[(0, 0, i + t)] * w[(ch, t)];
            }
            if l0 + i < L {
                y[(bt, ch, l0 + i)] = acc;
            } else if i == 0 {
            } else {
            }
        }
    }
    "#,
    // 10. No const generics, literal threads, typed lets, bool, f64, a private kernel.
    r#"
    #[tile_kernel(grid = [M, N.div_ceil(32)], threads = 32)]
    fn copy2d(src: &Tensor<f64, (M, N)>, dst: &mut Tensor<f64, (M, N)>) {
        let mut t = alloc_shared::<f64>((1, 32));
        let row = block_idx(0);
        let col = block_idx(1) * 32;
        copy(src.at((row, col)), &mut t);
        let flag: bool = true;
        let scale: f64 = 2.0;
        if flag || false {
            for j in parallel(32) {
                t[(0, j)] *= scale;
            }
        }
        copy(&t, dst.at_mut((row, col)));
    }
    "#,
    // 11. Flash attention: online softmax with fragments, exp2, buffer→buffer copy f32→f16.
    r#"
    #[tile_kernel(grid = [S.div_ceil(BM)], threads = 128, configs = [a32(BM = 32, BN = 64, D = 64)])]
    pub fn attention<const BM: usize, const BN: usize, const D: usize>(
        q: &Tensor<f16, (S, D)>,
        kt: &Tensor<f16, (D, T)>,
        v: &Tensor<f16, (T, D)>,
        o: &mut Tensor<f16, (S, D)>,
        sm_scale: f32,
    ) {
        let row = block_idx(0) * BM;
        let mut q_s = alloc_shared::<f16, (BM, D)>();
        let mut k_s = alloc_shared::<f16, (D, BN)>();
        let mut v_s = alloc_shared::<f16, (BN, D)>();
        let mut p_s = alloc_shared::<f16, (BM, BN)>();
        let mut s = alloc_fragment::<f32, (BM, BN)>();
        let mut o_acc = alloc_fragment::<f32, (BM, D)>();
        let mut m = alloc_fragment::<f32, (BM,)>();
        let mut m_new = alloc_fragment::<f32, (BM,)>();
        let mut l = alloc_fragment::<f32, (BM,)>();
        let mut l_blk = alloc_fragment::<f32, (BM,)>();
        copy(q.at((row, 0)), &mut q_s);
        clear(&mut o_acc);
        fill(&mut m, -1e30);
        clear(&mut l);
        let n_blocks = T.div_ceil(BN);
        for kb in serial(n_blocks) {
            copy(kt.at((0, kb * BN)), &mut k_s);
            copy(v.at((kb * BN, 0)), &mut v_s);
            clear(&mut s);
            gemm(&q_s, &k_s, &mut s);
            for (i, j) in parallel(BM, BN) {
                s[(i, j)] = if_then_else(kb * BN + j < T, s[(i, j)] * sm_scale, -1e30);
            }
            reduce_max(&s, &mut m_new, 1);
            for (i, j) in parallel(BM, BN) {
                s[(i, j)] = exp2(s[(i, j)] - max(m[i], m_new[i]));
            }
            reduce_sum(&s, &mut l_blk, 1);
            for i in parallel(BM) {
                let mx = max(m[i], m_new[i]);
                let alpha = exp2(m[i] - mx);
                l[i] = l[i] * alpha + l_blk[i];
                m[i] = mx;
                for d in serial(D) {
                    o_acc[(i, d)] *= alpha;
                }
            }
            copy(&s, &mut p_s);
            gemm(&p_s, &v_s, &mut o_acc);
        }
        for (i, d) in parallel(BM, D) {
            o_acc[(i, d)] = o_acc[(i, d)] / l[i];
        }
        copy(&o_acc, o.at_mut((row, 0)));
    }
    "#,
    // 12. Every compound assignment, comparisons, logic, math functions on f64, u8 arithmetic.
    r#"
    #[tile_kernel(grid = [N.div_ceil(32)], threads = 32)]
    pub fn ops(
        a: &Tensor<i32, (N,)>,
        o: &mut Tensor<i32, (N,)>,
        f: &mut Tensor<f64, (N,)>,
        bytes: &mut Tensor<u8, (N,)>,
    ) {
        for i in parallel(32) {
            let g = block_idx(0) * 32 + i;
            if !(g >= N) {
                let mut x: i32 = a[g];
                x += 1;
                x -= 2;
                x *= 3;
                x /= 2;
                x %= 1000;
                x &= 0x7fff;
                x |= 1;
                x ^= 5;
                x <<= 2;
                x >>= 1;
                let mut y = x as f64;
                y = sqrt(abs(y)) + log(y * y + 1.0) + exp(-y / 1000.0) + exp2(1.5) + rsqrt(4.0);
                y = tanh(y) + erf(y) + sigmoid(y) + pow(y, 3.0) + sin(y) * cos(y) + floor(y) - ceil(y);
                y = fma(y, 0.5, pow(2.0, y));
                o[g] = if_then_else(x == 0 || x != 1 && x <= 2 || x > 3 && x >= 4, x, -x);
                f[g] = y;
                let b8: u8 = (x & 255) as u8;
                bytes[g] = b8 * 2u8 + 1;
            } else if g == N {
            } else {
            }
        }
    }
    "#,
    // 13. Row sum: pipelined with a const-generic stage count, 1-D copy out, shared accumulator.
    r#"
    #[tile_kernel(
        grid = [M.div_ceil(BM)],
        threads = BM,
        configs = [s(BM = 32, BK = 64, ST = 1), d(BM = 64, BK = 128, ST = 2)],
        defaults = [gfx942 = d, gfx90a = d, sm_90a = s],
    )]
    pub fn row_sum<const BM: usize, const BK: usize, const ST: usize>(
        x: &Tensor<f16, (M, K)>,
        y: &mut Tensor<f32, (M,)>,
    ) {
        let row = block_idx(0) * BM;
        let mut xs = alloc_shared::<f16, (BM, BK)>();
        let mut xf = alloc_fragment::<f32, (BM, BK)>();
        let mut part = alloc_fragment::<f32, (BM,)>();
        let mut total = alloc_shared::<f32, (BM,)>();
        clear(&mut total);
        for kb in pipelined(K.div_ceil(BK), ST) {
            copy(x.at((row, kb * BK)), &mut xs);
            copy(&xs, &mut xf);
            reduce_sum(&xf, &mut part, 1);
            for i in parallel(BM) {
                total[i] += part[i];
            }
        }
        copy(&total, y.at_mut((row,)));
    }
    "#,
];

/// One kernel: the attribute's tokens and the function item (without the `tile_kernel` attribute).
#[derive(Clone)]
struct Kernel {
    origin: String,
    attr: TokenStream,
    item: TokenStream,
}

fn is_tile_kernel(a: &syn::Attribute) -> bool {
    a.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tile_kernel")
}

/// Every `#[tile_kernel]` function in a file, including those inside inline modules.
fn extract(origin: &str, file: &syn::File) -> Vec<Kernel> {
    fn walk(origin: &str, items: &[syn::Item], out: &mut Vec<Kernel>) {
        for it in items {
            match it {
                syn::Item::Fn(f) => {
                    let Some(pos) = f.attrs.iter().position(is_tile_kernel) else {
                        continue;
                    };
                    let attr = match &f.attrs[pos].meta {
                        syn::Meta::List(l) => l.tokens.clone(),
                        _ => TokenStream::new(),
                    };
                    let mut f = f.clone();
                    f.attrs.remove(pos);
                    out.push(Kernel {
                        origin: format!("{origin}::{}", f.sig.ident),
                        attr,
                        item: f.to_token_stream(),
                    });
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        walk(origin, items, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(origin, &file.items, &mut out);
    out
}

fn builtin_corpus() -> Vec<Kernel> {
    CORPUS
        .iter()
        .enumerate()
        .flat_map(|(i, src)| {
            let file =
                syn::parse_file(src).unwrap_or_else(|e| panic!("corpus kernel {}: {e}", i + 1));
            let ks = extract(&format!("corpus#{}", i + 1), &file);
            assert_eq!(ks.len(), 1, "corpus entry {} holds one kernel", i + 1);
            ks
        })
        .collect()
}

/// The kernels of `kernels/src/*.rs`. Those files are written concurrently by others: a file
/// that cannot be read or parsed right now is skipped, and any number of kernels is fine.
fn file_corpus() -> Vec<Kernel> {
    // `FUZZ_KERNELS_SRC` for a test binary run away from its checkout (e.g. on a machine with
    // more cores: `cargo test --release --no-run`, then the binary from the repository root).
    let dir = std::env::var_os("FUZZ_KERNELS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels/src"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let Ok(src) = std::fs::read_to_string(&p) else {
            continue;
        };
        match syn::parse_file(&src) {
            Ok(file) => out.extend(extract(&name, &file)),
            Err(e) => eprintln!("note: skipping {name} (does not parse right now: {e})"),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// A small deterministic PRNG (splitmix64).

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------------
// Token trees that can be edited in place.

#[derive(Clone)]
enum Tok {
    Leaf(TokenTree),
    Group(Delimiter, Span, Vec<Tok>),
}

fn to_toks(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), g.span(), to_toks(g.stream())),
            other => Tok::Leaf(other),
        })
        .collect()
}

fn from_toks(v: &[Tok]) -> TokenStream {
    v.iter()
        .map(|t| match t {
            Tok::Leaf(l) => l.clone(),
            Tok::Group(d, s, inner) => {
                let mut g = Group::new(*d, from_toks(inner));
                g.set_span(*s);
                TokenTree::Group(g)
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Ident,
    Literal,
    Punct,
    Group,
}

fn kind(t: &Tok) -> Kind {
    match t {
        Tok::Leaf(TokenTree::Ident(_)) => Kind::Ident,
        Tok::Leaf(TokenTree::Literal(_)) => Kind::Literal,
        Tok::Leaf(TokenTree::Punct(_)) => Kind::Punct,
        _ => Kind::Group,
    }
}

/// Paths (indices from the root down) of every node, with its kind.
fn nodes(v: &[Tok], prefix: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Kind)>) {
    for (i, t) in v.iter().enumerate() {
        prefix.push(i);
        out.push((prefix.clone(), kind(t)));
        if let Tok::Group(_, _, inner) = t {
            nodes(inner, prefix, out);
        }
        prefix.pop();
    }
}

/// The sequence that holds the node at `path`, and the node's index in it.
fn parent_mut<'a>(root: &'a mut Vec<Tok>, path: &[usize]) -> (&'a mut Vec<Tok>, usize) {
    let (last, init) = path.split_last().unwrap();
    let mut seq = root;
    for &i in init {
        seq = match &mut seq[i] {
            Tok::Group(_, _, inner) => inner,
            Tok::Leaf(_) => unreachable!(),
        };
    }
    (seq, *last)
}

fn parent_ref<'a>(root: &'a [Tok], path: &[usize]) -> (&'a [Tok], usize) {
    let (last, init) = path.split_last().unwrap();
    let mut seq = root;
    for &i in init {
        seq = match &seq[i] {
            Tok::Group(_, _, inner) => inner,
            Tok::Leaf(_) => unreachable!(),
        };
    }
    (seq, *last)
}

const KEYWORDS: &[&str] = &[
    "let",
    "mut",
    "for",
    "in",
    "if",
    "else",
    "fn",
    "pub",
    "const",
    "usize",
    "f16",
    "bf16",
    "f32",
    "f64",
    "i32",
    "u32",
    "u8",
    "bool",
    "i8",
    "i64",
    "u64",
    "String",
    "Tensor",
    "self",
    "Self",
    "super",
    "crate",
    "return",
    "break",
    "continue",
    "while",
    "loop",
    "match",
    "async",
    "unsafe",
    "impl",
    "struct",
    "as",
    "where",
    "move",
    "ref",
    "true",
    "false",
    "parallel",
    "serial",
    "pipelined",
    "copy",
    "fill",
    "clear",
    "gemm",
    "reduce_sum",
    "reduce_max",
    "atomic_add",
    "alloc_shared",
    "alloc_fragment",
    "alloc_local",
    "block_idx",
    "if_then_else",
    "exp",
    "exp2",
    "log",
    "sqrt",
    "rsqrt",
    "abs",
    "max",
    "min",
    "tanh",
    "erf",
    "sigmoid",
    "pow",
    "sin",
    "cos",
    "floor",
    "ceil",
    "fma",
    "div_ceil",
    "at",
    "at_mut",
    "grid",
    "threads",
    "configs",
    "defaults",
    "requires",
    "min_blocks",
    "max_registers",
    "cpu",
    "sm_90",
    "gfx1100",
    "default",
    "r#type",
    "r#match",
    "_",
    "__KERNEL",
    "__dev",
    "config",
    "__launch",
    "__cpu",
    "__grid",
    "index",
    "N",
    "M",
    "K",
];

const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "15",
    "16",
    "31",
    "64",
    "127",
    "128",
    "255",
    "256",
    "1024",
    "1025",
    "65536",
    "16777216",
    "16777217",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211455",
    "0.0",
    "0.5",
    "1.0",
    "1.5",
    "-1",
    "-1.0",
    "1e30",
    "1e400",
    "1e-400",
    "f32::INFINITY",
    "f16::NEG_INFINITY",
    "bf16::NAN",
    "f32::MAX",
    "i32::NAN",
    "f32::NAN::NAN",
    "3.4e38f32",
    "1e10f16",
    "1.0f16",
    "2.0bf16",
    "1f32",
    "1f64",
    "2u8",
    "300u8",
    "256u8",
    "7i32",
    "-7i32",
    "3usize",
    "5u32",
    "1i64",
    "1u64",
    "1isize",
    "1_000",
    "0x10",
    "0xFF_u8",
    "0b1010",
    "0o17",
    "1e3",
    "1.",
    "'c'",
    "b'x'",
    "\"s\"",
    "b\"bytes\"",
    "r\"raw\"",
    "c\"cstr\"",
];

const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "!", "<", ">", "=", ".", ",", ";", ":", "#", "?", "@",
    "$", "~", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "<<=", ">>=", "..", "..=", "::", "->", "=>", "&mut", "'a", "..",
];

fn tokens(s: &str) -> Vec<Tok> {
    match TokenStream::from_str(s) {
        Ok(ts) => to_toks(ts),
        // Some literals (e.g. `-1`) are not one token: build them directly.
        Err(_) => vec![Tok::Leaf(TokenTree::Literal(Literal::string(s)))],
    }
}

fn literal(s: &str) -> Vec<Tok> {
    if let Some(rest) = s.strip_prefix('-') {
        // A negative literal token, as a proc macro can produce one (`Literal::i64_unsuffixed(-1)`).
        if let Ok(v) = rest.parse::<i64>() {
            return vec![Tok::Leaf(TokenTree::Literal(Literal::i64_unsuffixed(-v)))];
        }
        if let Ok(v) = rest.parse::<f64>() {
            return vec![Tok::Leaf(TokenTree::Literal(Literal::f64_unsuffixed(-v)))];
        }
    }
    tokens(s)
}

/// Identifiers of the corpus, for replacements.
fn corpus_idents(ks: &[Kernel]) -> Vec<String> {
    fn walk(ts: TokenStream, out: &mut Vec<String>) {
        for t in ts {
            match t {
                TokenTree::Ident(i) => out.push(i.to_string()),
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for k in ks {
        walk(k.attr.clone(), &mut out);
        walk(k.item.clone(), &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Expression fragments that probe edge cases (overflow, division by zero, odd shapes and
/// types); they replace an identifier or a literal.
const EXPR_SNIPPETS: &[&str] = &[
    "(1 << 127)",
    "-(1 << 127)",
    "(1 << 126).div_ceil(1 << 126)",
    "(1 << 127).div_ceil(0 - 1)",
    "(0 - 1)",
    "N.div_ceil(0)",
    "(1 / 0)",
    "(5 % 0)",
    "(1 << 64)",
    "(1 << 200)",
    "(1 << 63)",
    "((1 << 62) * 4)",
    "(x as bool)",
    "(a, b)",
    "&mut c[(0, 0)]",
    "c.at((0,))",
    "c.at_mut(())",
    "if_then_else(true, 1, 2)",
    "block_idx(3)",
    "block_idx(18446744073709551615)",
    "max(1, 2)",
    "min(1.0, 2)",
    "exp(1)",
    "(!1.0)",
    "(-(1u8))",
    "(1u8 << 9)",
    "(255u8 + 1)",
    "a[(0, 0, 0, 0, 0)]",
    "a[()]",
    "alloc_shared::<f16, (4,)>()",
    "alloc_local::<f32>((0,))",
    "alloc_fragment::<f32>(())",
    "alloc_shared::<f32>((1, 2, 3, 4, 5))",
    "parallel(0)",
    "serial(1, 2, 3)",
    "pipelined(4, 9)",
    "r#type",
    "self",
    "(1..2)",
    "[1, 2]",
    "{ 1 }",
    "|x| x",
    "println!()",
    "x.0",
    "(*x)",
    "(1e400 as f16)",
    "(-1e400)",
    "(2.5 as usize)",
    "0xFFFFFFFFFFFFFFFF",
    "((1 << 127) + (1 << 127))",
    "(-(-(1 << 127)))",
    "(true as f32)",
    "(1 as bool)",
    "exp2(-1e400)",
    "abs(-(1 << 63))",
    "(0u8 - 1)",
    "rsqrt(0.0)",
    "pow(-8.0, 1.0 / 3.0)",
    "fma(1, 2, 3)",
    "sin(1e300)",
    "(1.5).mul_add(2.0, 3.0)",
    "a.at",
];

/// Statements that probe edge cases; inserted into a brace group.
const STMT_SNIPPETS: &[&str] = &[
    "for i in parallel(-(1 << 127)) {}",
    "for i in parallel((1 << 126).div_ceil(1 << 126)) {}",
    "for i in parallel(1 << 127) {}",
    "let mut s = alloc_shared::<f32>((-(1 << 127),));",
    "let mut s = alloc_shared::<f32>(((1 << 127).div_ceil(0 - 1),));",
    "let mut s = alloc_shared::<f32>((0,));",
    "for k in pipelined(4, -(1 << 127)) {}",
    "for k in pipelined(4, 0) {}",
    "copy(&s, &mut s);",
    "return;",
    "loop {}",
    "let _ = 1;",
    "let x;",
    "let (a, b) = (1, 2, 3);",
    "let (a, b) = 1;",
    "gemm(&a_s, &a_s, &mut a_s);",
    "reduce_sum(&s, &mut s, 5);",
    "reduce_max(&s, &mut t, 18446744073709551615);",
    "fn inner() {}",
    "for (i, j, k, l) in parallel(1, 2, 3, 4) {}",
    "for () in serial(1) {}",
    "for i in serial() {}",
    "atomic_add(&mut x, 1);",
    "fill(&mut acc, -(1 << 127));",
    "let r#type = 1;",
    "let v = block_idx(0) as u8 as i32 as f16 as bf16 as f64 as u32 as usize;",
];

/// The mutations, weighted by repetition: those that usually keep the function syntactically
/// valid (measured: literal 100%, stmt-snippet 97%, drop-group 90%, ident 65%, expr-snippet
/// 53%) come more often than those that usually break it (swap 8%, splice 15%, delete 30%).
const OPS: &[&str] = &[
    "literal",
    "literal",
    "literal",
    "stmt-snippet",
    "stmt-snippet",
    "stmt-snippet",
    "ident",
    "ident",
    "ident",
    "expr-snippet",
    "expr-snippet",
    "expr-snippet",
    "drop-group",
    "drop-group",
    "punct",
    "punct",
    "delete",
    "duplicate",
    "swap",
    "double-group",
    "delimiter",
    "splice",
];

/// Binary operators, to replace one another (this keeps the syntax valid more often than an
/// arbitrary punctuation does).
const BINOPS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", ">", "<=", ">=", "&&",
    "||",
];

/// Applies one mutation to `target`; `donor` is another kernel's tokens for splicing.
/// Returns a short description.
fn mutate(rng: &mut Rng, target: &mut Vec<Tok>, donor: &[Tok], idents: &[String]) -> String {
    let mut all = Vec::new();
    nodes(target, &mut Vec::new(), &mut all);
    let of_kind = |k: Kind| -> Vec<Vec<usize>> {
        all.iter()
            .filter(|(_, kk)| *kk == k)
            .map(|(p, _)| p.clone())
            .collect()
    };
    let op = *rng.pick(OPS);
    if all.is_empty() {
        // Nothing to edit: insert something.
        target.extend(tokens(rng.pick::<&str>(KEYWORDS)));
        return "insert into empty".into();
    }
    let any = rng.pick(&all).0.clone();
    match op {
        "delete" => {
            let (seq, i) = parent_mut(target, &any);
            seq.remove(i);
        }
        "duplicate" => {
            let (seq, i) = parent_mut(target, &any);
            let t = seq[i].clone();
            seq.insert(i, t);
        }
        "swap" => {
            let (seq, i) = parent_mut(target, &any);
            if i + 1 < seq.len() {
                seq.swap(i, i + 1);
            } else if i > 0 {
                seq.swap(i - 1, i);
            }
        }
        "ident" => {
            let ids = of_kind(Kind::Ident);
            let path = if ids.is_empty() {
                any
            } else {
                rng.pick(&ids).clone()
            };
            let new = if rng.chance(1, 2) {
                rng.pick(idents).clone()
            } else {
                rng.pick(KEYWORDS).to_string()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, tokens(&new));
        }
        "literal" => {
            let lits = of_kind(Kind::Literal);
            let path = if lits.is_empty() {
                any
            } else {
                rng.pick(&lits).clone()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, literal(rng.pick::<&str>(LITERALS)));
        }
        "punct" => {
            let ps = of_kind(Kind::Punct);
            let path = if ps.is_empty() {
                any
            } else {
                rng.pick(&ps).clone()
            };
            let binop = rng.chance(1, 2);
            let (seq, i) = parent_mut(target, &path);
            let is_op = matches!(&seq[i], Tok::Leaf(TokenTree::Punct(p))
                if "+-*/%^".contains(p.as_char()) && p.spacing() == Spacing::Alone);
            let new = if binop && is_op {
                *rng.pick(BINOPS)
            } else {
                *rng.pick(PUNCTS)
            };
            seq.splice(i..=i, tokens(new));
        }
        "drop-group" | "double-group" | "delimiter" => {
            let gs = of_kind(Kind::Group);
            if gs.is_empty() {
                let (seq, i) = parent_mut(target, &any);
                seq.remove(i);
                return format!("{op} (no group: delete)");
            }
            let path = rng.pick(&gs).clone();
            let delims = [
                Delimiter::Parenthesis,
                Delimiter::Bracket,
                Delimiter::Brace,
                Delimiter::None,
            ];
            let new_delim = *rng.pick(&delims);
            let (seq, i) = parent_mut(target, &path);
            if let Tok::Group(d, _, inner) = &mut seq[i] {
                match op {
                    "drop-group" => inner.clear(),
                    "double-group" => {
                        let copy = inner.clone();
                        if rng.chance(1, 2) {
                            inner
                                .push(Tok::Leaf(TokenTree::Punct(Punct::new(',', Spacing::Alone))));
                        }
                        inner.extend(copy);
                    }
                    _ => *d = new_delim,
                }
            }
        }
        "expr-snippet" => {
            let leaves: Vec<Vec<usize>> = all
                .iter()
                .filter(|(_, k)| matches!(k, Kind::Ident | Kind::Literal))
                .map(|(p, _)| p.clone())
                .collect();
            let path = if leaves.is_empty() {
                any
            } else {
                rng.pick(&leaves).clone()
            };
            let (seq, i) = parent_mut(target, &path);
            seq.splice(i..=i, tokens(rng.pick::<&str>(EXPR_SNIPPETS)));
        }
        "stmt-snippet" => {
            let braces: Vec<Vec<usize>> = all
                .iter()
                .filter(|(p, k)| {
                    *k == Kind::Group && {
                        let (seq, i) = parent_ref(target, p);
                        matches!(&seq[i], Tok::Group(Delimiter::Brace, _, _))
                    }
                })
                .map(|(p, _)| p.clone())
                .collect();
            let snippet = tokens(rng.pick::<&str>(STMT_SNIPPETS));
            if braces.is_empty() {
                target.extend(snippet);
                return "stmt-snippet (appended)".into();
            }
            let path = rng.pick(&braces).clone();
            let (seq, i) = parent_mut(target, &path);
            if let Tok::Group(_, _, inner) = &mut seq[i] {
                // At the start, or after a `;` or a `}` of the group.
                let mut spots = vec![0];
                for (j, t) in inner.iter().enumerate() {
                    match t {
                        Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ';' => spots.push(j + 1),
                        Tok::Group(Delimiter::Brace, _, _) => spots.push(j + 1),
                        _ => {}
                    }
                }
                let at = *rng.pick(&spots);
                inner.splice(at..at, snippet);
            }
        }
        "splice" => {
            let mut dn = Vec::new();
            nodes(donor, &mut Vec::new(), &mut dn);
            if dn.is_empty() {
                return "splice (empty donor)".into();
            }
            // A run of 1..=8 consecutive siblings from the donor.
            let from = rng.pick(&dn).0.clone();
            let mut seq: &[Tok] = donor;
            for &j in &from[..from.len() - 1] {
                seq = match &seq[j] {
                    Tok::Group(_, _, inner) => inner,
                    Tok::Leaf(_) => unreachable!(),
                };
            }
            let start = *from.last().unwrap();
            let len = 1 + rng.below(8);
            let run: Vec<Tok> = seq[start..(start + len).min(seq.len())].to_vec();
            let replace = rng.chance(1, 2);
            let (tseq, i) = parent_mut(target, &any);
            if replace {
                tseq.splice(i..=i, run);
            } else {
                tseq.splice(i..i, run);
            }
        }
        _ => unreachable!(),
    }
    op.to_string()
}

/// A mutant. Many token edits break the function's syntax, and tokens that are not an item
/// never reach the kernel compiler (rustc reports them; see `check_one`): so for 7 mutants in 8,
/// one whose function no longer parses is replaced once by a fresh one (deterministically).
fn mutant(
    rng: &mut Rng,
    corpus: &[Kernel],
    idents: &[String],
) -> (usize, TokenStream, TokenStream, Vec<String>) {
    let want_fn = !rng.chance(1, 8);
    let mut attempt = 0;
    loop {
        let m = mutant_once(rng, corpus, idents);
        attempt += 1;
        if !want_fn || attempt == 2 || syn::parse2::<syn::ItemFn>(m.2.clone()).is_ok() {
            return m;
        }
    }
}

fn mutant_once(
    rng: &mut Rng,
    corpus: &[Kernel],
    idents: &[String],
) -> (usize, TokenStream, TokenStream, Vec<String>) {
    let ki = rng.below(corpus.len());
    let k = &corpus[ki];
    let donor = &corpus[rng.below(corpus.len())];
    let mut attr = to_toks(k.attr.clone());
    let mut item = to_toks(k.item.clone());
    let donor_toks = if rng.chance(1, 4) {
        to_toks(donor.attr.clone())
    } else {
        to_toks(donor.item.clone())
    };
    // 1 mutation half of the time, 2 or 3 otherwise.
    let n = [1, 1, 1, 1, 1, 2, 2, 2, 3, 3][rng.below(10)];
    let mut ops = Vec::new();
    for _ in 0..n {
        // Mutate the attribute or the function, roughly in proportion to their sizes (the
        // attribute is small but dense with meaning: give it at least a quarter of the edits).
        let in_attr = rng.chance(1, 4);
        let desc = if in_attr {
            mutate(rng, &mut attr, &donor_toks, idents)
        } else {
            mutate(rng, &mut item, &donor_toks, idents)
        };
        ops.push(format!("{}:{desc}", if in_attr { "attr" } else { "item" }));
    }
    (ki, from_toks(&attr), from_toks(&item), ops)
}

// ---------------------------------------------------------------------------------------------
// Running the frontend with panics caught.

thread_local! {
    static CATCHING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that, on a thread that is catching, records the panic message
/// with its location instead of printing it; other threads get the default hook.
fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let handled = CATCHING.with(|c| {
                let mut c = c.borrow_mut();
                match c.as_mut() {
                    Some(slot) => {
                        *slot = info.to_string();
                        true
                    }
                    None => false,
                }
            });
            if !handled {
                default(info);
            }
        }));
    });
}

fn catching<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    CATCHING.with(|c| *c.borrow_mut() = Some(String::new()));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    let msg = CATCHING.with(|c| c.borrow_mut().take()).unwrap_or_default();
    r.map_err(|_| msg)
}

#[derive(Default)]
struct Tally {
    ok: usize,
    err: usize,
    /// Mutants whose item is not even a Rust item: left to rustc's parser.
    syntax: usize,
    /// (config, target) pairs lowered to HIP C++ for accepted kernels.
    lowered: usize,
    /// Distinct failures (by panic location / property), each with the first seed that showed it.
    failures: Vec<(String, u64, String)>,
    /// Expansions of Ok kernels already re-parsed.
    parsed: std::collections::HashSet<String>,
    /// With `FUZZ_DUMP_OK=<file>`: the source of each distinct Ok mutant, to type-check the
    /// generated code with rustc offline (a kernel that compiles here but whose expansion
    /// rustc rejects is a missing diagnostic).
    dump: Vec<(u64, String)>,
}

impl Tally {
    fn fail(&mut self, key: String, seed: u64, detail: String) {
        if !self.failures.iter().any(|(k, _, _)| *k == key) {
            self.failures.push((key, seed, detail));
        }
    }
}

/// Runs one input through `expand` (and `compile`) and checks the properties.
///
/// `expand` runs the whole of `compile` and then the emitters, so it runs on every input.
/// `compile` runs on every input whose expansion has no `compile_error!` (to confirm it is
/// `Ok`), on every input where `expand` panicked, and on a deterministic eighth of the others
/// (to confirm `Err`): this nearly halves the cost per mutant, and `compile` being pure (see
/// `determinism.rs`) the other seven eighths would repeat work already done inside `expand`.
/// The error-path expansion is re-parsed on the same eighth.
fn check_one(
    t: &mut Tally,
    seed: u64,
    attr: TokenStream,
    item: TokenStream,
    what: &str,
    full: bool,
) {
    let text = || format!("{what}\n  attr: {attr}\n  item: {item}");
    let targets = tilelang_codegen::target::TARGETS;
    let expanded =
        match catching(|| tilelang_codegen::expand_for(attr.clone(), item.clone(), targets)) {
            Ok(e) => Some(e),
            Err(msg) => {
                t.fail(
                    first_line_key(&msg),
                    seed,
                    format!("expand panicked: {msg}\n{}", text()),
                );
                None
            }
        };
    let has_compile_error = expanded.as_ref().map(emits_compile_error);
    let run_compile = full || has_compile_error != Some(true);
    let compiled = if run_compile {
        // The frontend, then the GPU lowering of every config for every target.
        let lowered = || {
            let k = tilelang_codegen::compile(attr.clone(), item.clone())?;
            tilelang_codegen::launcher::lower(&k, targets).map(|l| l.len())
        };
        match catching(lowered) {
            Ok(Ok(n)) => {
                t.lowered += n;
                Some(Ok(()))
            }
            Ok(Err(d)) => Some(Err(d)),
            Err(msg) => {
                t.fail(
                    first_line_key(&msg),
                    seed,
                    format!("compile panicked: {msg}\n{}", text()),
                );
                None
            }
        }
    } else {
        None
    };
    let Some(expanded) = expanded else { return };
    let has_compile_error = has_compile_error.unwrap();
    // Tokens that are not an item at all: rustc reports the syntax error itself, so the
    // frontend adds no diagnostic and expands to nothing (a documented choice in `lib.rs`).
    if !has_compile_error && matches!(&compiled, Some(Err(d)) if d.is_empty()) {
        if syn::parse2::<syn::Item>(item.clone()).is_ok() {
            t.fail(
                "silent-err-on-an-item".into(),
                seed,
                format!(
                    "compile() is Err with no diagnostic for tokens that are an item\n{}",
                    text()
                ),
            );
        } else if !expanded.is_empty() {
            t.fail(
                "syntax-error-with-output".into(),
                seed,
                format!(
                    "tokens that are not an item expanded to `{expanded}`\n{}",
                    text()
                ),
            );
        }
        t.syntax += 1;
        return;
    }
    if has_compile_error {
        t.err += 1;
    } else {
        t.ok += 1;
    }
    match &compiled {
        Some(Ok(())) if has_compile_error => t.fail(
            "ok-but-compile_error".into(),
            seed,
            format!(
                "compile() is Ok but expand() emitted compile_error!\n{}",
                text()
            ),
        ),
        Some(Err(diags)) if !has_compile_error => t.fail(
            "err-without-compile_error".into(),
            seed,
            format!(
                "compile() is Err ({diags:?}) but expand() emitted no compile_error!\n{}",
                text()
            ),
        ),
        Some(Err(diags)) => {
            if diags.is_empty() {
                t.fail(
                    "err-without-diagnostics".into(),
                    seed,
                    format!("compile() is Err with no diagnostic\n{}", text()),
                );
            }
            if let Some(d) = diags.iter().find(|d| d.message.trim().is_empty()) {
                t.fail(
                    "empty-message".into(),
                    seed,
                    format!("a diagnostic has an empty message ({d:?})\n{}", text()),
                );
            }
        }
        _ => {}
    }
    if !has_compile_error {
        // compile() was Ok: the expansion must be valid Rust. (An expansion already parsed, by
        // another mutant that differs only where it does not matter, is not parsed again.)
        if !t.parsed.insert(expanded.to_string()) {
            return;
        }
        if std::env::var_os("FUZZ_DUMP_OK").is_some() {
            // Without the function's own attributes (docs): rustc checks those itself.
            let mut f: syn::ItemFn = syn::parse2(item.clone()).unwrap();
            f.attrs.clear();
            t.dump.push((
                seed,
                format!("#[tile_kernel({attr})]\n{}", f.to_token_stream()),
            ));
        }
        if let Err(e) = syn::parse2::<syn::File>(expanded.clone()) {
            t.fail(
                format!("ok-expansion-does-not-parse: {e}"),
                seed,
                format!("expansion of an Ok kernel is not a valid Rust file: {e}\n{}\n  expansion: {expanded}", text()),
            );
        }
    } else if full {
        // The error path (compile_error! + fallback launcher) must also be valid Rust, so the
        // user sees the diagnostics rather than a syntax error in generated code.
        if let Err(e) = syn::parse2::<syn::File>(expanded.clone()) {
            t.fail(
                format!("err-expansion-does-not-parse: {e}"),
                seed,
                format!(
                    "error expansion is not a valid Rust file: {e}\n{}\n  expansion: {expanded}",
                    text()
                ),
            );
        }
    }
}

/// Whether an expansion reports errors: a `::core::compile_error! { .. }` at its top level.
fn emits_compile_error(ts: &TokenStream) -> bool {
    ts.clone()
        .into_iter()
        .any(|t| matches!(t, TokenTree::Ident(i) if i == "compile_error"))
}

/// A panic message's location line, so that one bug found by many mutants is reported once.
fn first_line_key(msg: &str) -> String {
    // "panicked at src/x.rs:10:5:\nmessage"
    let loc = msg.lines().next().unwrap_or("").to_string();
    let what = msg.lines().nth(1).unwrap_or("").to_string();
    format!("panic {loc} {what}")
}

const BASE_SEED: u64 = 0x7115_1A96_0000_0000;

#[test]
fn corpus_kernels_compile_without_diagnostics() {
    let corpus = builtin_corpus();
    assert!(corpus.len() >= 12);
    let mut failed = Vec::new();
    for k in &corpus {
        match tilelang_codegen::compile(k.attr.clone(), k.item.clone()) {
            Ok(ir) => {
                let targets = tilelang_codegen::target::TARGETS;
                if let Err(d) = tilelang_codegen::launcher::lower(&ir, targets) {
                    failed.push(format!(
                        "{}: does not lower: {:#?}",
                        k.origin,
                        d.iter().map(|d| d.text()).collect::<Vec<_>>()
                    ));
                }
                let out = tilelang_codegen::expand_for(k.attr.clone(), k.item.clone(), targets);
                if let Err(e) = syn::parse2::<syn::File>(out) {
                    failed.push(format!("{}: expansion does not parse: {e}", k.origin));
                }
            }
            Err(d) => failed.push(format!(
                "{}: {:#?}",
                k.origin,
                d.iter().map(|d| d.text()).collect::<Vec<_>>()
            )),
        }
    }
    assert!(
        failed.is_empty(),
        "valid corpus kernels were rejected:\n{}",
        failed.join("\n")
    );

    // The tutorial kernels are being written concurrently: report, do not fail.
    for k in file_corpus() {
        if let Err(d) = tilelang_codegen::compile(k.attr.clone(), k.item.clone()) {
            eprintln!(
                "note: {} does not compile right now: {:?}",
                k.origin,
                d.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn mutants_never_panic() {
    let mut corpus = builtin_corpus();
    let files = file_corpus();
    let nfiles = files.len();
    corpus.extend(files);
    let idents = corpus_idents(&corpus);
    let n: u64 = std::env::var("FUZZ_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let only: Option<u64> = std::env::var("FUZZ_SEED").ok().and_then(|s| {
        let s = s.trim_start_matches("0x");
        u64::from_str_radix(s, 16).ok()
    });
    let seeds: Vec<u64> = match only {
        Some(s) => vec![s],
        None => (0..n).map(|i| mix(BASE_SEED.wrapping_add(i))).collect(),
    };

    let start = Instant::now();
    let mut t = Tally::default();
    // The unmutated corpus first (the file kernels may be mid-edit: they only need not panic).
    for k in &corpus {
        check_one(
            &mut t,
            0,
            k.attr.clone(),
            k.item.clone(),
            &format!("unmutated {}", k.origin),
            true,
        );
    }
    // The mutants, over a few threads; each chunk's tally is merged in order, so the report
    // does not depend on the number of threads.
    let threads = std::env::var("FUZZ_THREADS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 4)
        })
        .max(1);
    let chunk = seeds.len().div_ceil(threads).max(1);
    // Token streams are not `Send`: each thread re-lexes the corpus from its text.
    let texts: Vec<(String, String, String)> = corpus
        .iter()
        .map(|k| (k.origin.clone(), k.attr.to_string(), k.item.to_string()))
        .collect();
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let handles: Vec<_> = seeds
            .chunks(chunk)
            .map(|seeds| {
                let (texts, idents) = (&texts, &idents);
                sc.spawn(move || {
                    let corpus: Vec<Kernel> = texts
                        .iter()
                        .map(|(o, a, i)| Kernel {
                            origin: o.clone(),
                            attr: TokenStream::from_str(a).unwrap(),
                            item: TokenStream::from_str(i).unwrap(),
                        })
                        .collect();
                    let corpus = &corpus;
                    let mut t = Tally::default();
                    for &seed in seeds {
                        let mut rng = Rng(seed);
                        let (ki, attr, item, ops) = mutant(&mut rng, corpus, idents);
                        let what = format!(
                            "seed {seed:#018x}: {} with {}",
                            corpus[ki].origin,
                            ops.join(", ")
                        );
                        if only.is_some() {
                            eprintln!("{what}\n  attr: {attr}\n  item: {item}");
                            match catching(|| tilelang_codegen::compile(attr.clone(), item.clone()))
                            {
                                Ok(Ok(_)) => eprintln!("  => Ok"),
                                Ok(Err(d)) => d.iter().for_each(|d| eprintln!("  => {}", d.text())),
                                Err(p) => eprintln!("  => panic: {p}"),
                            }
                        }
                        check_one(
                            &mut t,
                            seed,
                            attr,
                            item,
                            &what,
                            only.is_some() || seed % 8 == 0,
                        );
                    }
                    t
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut distinct = t.parsed.len();
    let mut dump = std::mem::take(&mut t.dump);
    for tt in tallies {
        dump.extend(tt.dump);
        distinct += tt.parsed.len();
        t.ok += tt.ok;
        t.err += tt.err;
        t.syntax += tt.syntax;
        t.lowered += tt.lowered;
        for (k, s, d) in tt.failures {
            t.fail(k, s, d);
        }
    }
    let elapsed = start.elapsed();
    if let Some(path) = std::env::var_os("FUZZ_DUMP_OK") {
        let mut out = String::from("#![allow(unused, non_snake_case, clippy::all)]\n");
        for (i, (seed, src)) in dump.iter().enumerate() {
            out.push_str(&format!(
                "\n/// seed {seed:#018x}\npub mod m{i} {{\n    use tilelang::prelude::*;\n    {src}\n}}\n"
            ));
        }
        std::fs::write(&path, out).unwrap();
        eprintln!(
            "wrote {} Ok mutants to {}",
            dump.len(),
            path.to_string_lossy()
        );
    }
    eprintln!(
        "fuzz: {} corpus kernels ({} from kernels/src) + {} mutants in {:.2?} on {threads} threads (counts include the corpus): {} compiled ({} distinct expansions re-parsed, {} (config, target) pairs lowered for the {} GPU targets), {} rejected with diagnostics, {} not Rust items (left to rustc), {} distinct failures",
        corpus.len(),
        nfiles,
        seeds.len(),
        elapsed,
        t.ok,
        distinct,
        t.lowered,
        tilelang_codegen::target::TARGETS.len(),
        t.err,
        t.syntax,
        t.failures.len()
    );
    if !t.failures.is_empty() {
        let mut report = String::new();
        for (key, seed, detail) in &t.failures {
            report.push_str(&format!(
                "\n=== {key}\n(replay: FUZZ_SEED={seed:x} cargo test -p tilelang-codegen --test fuzz mutants_never_panic)\n{detail}\n"
            ));
        }
        panic!("{} distinct failures:{report}", t.failures.len());
    }
}
