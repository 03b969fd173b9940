//! The fuzzer's corpus: the valid kernels written here, and every `#[tile_kernel]` function of
//! `kernels/src/*.rs`.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::PathBuf;

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
pub struct Kernel {
    pub origin: String,
    pub attr: TokenStream,
    pub item: TokenStream,
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

pub fn builtin_corpus() -> Vec<Kernel> {
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
pub fn file_corpus() -> Vec<Kernel> {
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
