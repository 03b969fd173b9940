//! The compiler is pure and deterministic: the same tokens give the same expansion, whatever
//! was compiled before, and one small kernel's expansion is pinned by a snapshot.
//!
//! Snapshot: `tests/snapshots/saxpy.rs` holds the expansion of [`SAXPY`], pretty-printed with
//! `prettyplease`. After an intended change to the generated code, regenerate it with
//! `UPDATE_SNAPSHOTS=1 cargo test -p tilelang-codegen --test determinism` and review the diff.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::PathBuf;

const SAXPY: &str = r#"
/// `c = a + alpha * b`, one tile of `b` staged through shared memory per block.
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = 128,
    configs = [b256(BLOCK = 256), b1024(BLOCK = 1024)],
    defaults = [cpu = b1024],
    requires = [N > 0],
)]
pub fn saxpy<const BLOCK: usize>(
    a: &Tensor<f32, (N,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f32, (N,)>,
    alpha: f32,
) {
    let base = block_idx(0) * BLOCK;
    let mut t = alloc_shared::<f32, (BLOCK,)>();
    copy(b.at((base,)), &mut t);
    for i in parallel(BLOCK) {
        if base + i < N {
            c[base + i] = a[base + i] + alpha * t[i];
        }
    }
}
"#;

/// A larger kernel with every kind of statement, and an invalid one (the error path).
const GEMM: &str = r#"
#[tile_kernel(
    grid = [N.div_ceil(BN), M.div_ceil(BM)],
    threads = 128,
    configs = [t64(BM = 64, BN = 64, BK = 32), t32(BM = 32, BN = 32, BK = 16)],
    requires = [K % BK == 0],
)]
pub fn gemm_relu<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
    c: &mut Tensor<f16, (M, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    let mut rmax = alloc_fragment::<f32, (BM,)>();
    clear(&mut acc);
    for k in pipelined(K / BK, 2) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(b.at((k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    reduce_max(&acc, &mut rmax, 1);
    for (i, j) in parallel(BM, BN) {
        let v = acc[(i, j)];
        acc[(i, j)] = if_then_else(v > 0.0, v / max(rmax[i], 1.0), 0.0);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
"#;

const INVALID: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64, blocks = 2)]
pub fn broken(a: &Tensor<f16, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        c[i] = a[i] * 2.0f32 + undefined;
    }
    while true {}
}
"#;

fn split(src: &str) -> (TokenStream, TokenStream) {
    let file = syn::parse_file(src).unwrap();
    for item in file.items {
        if let syn::Item::Fn(mut f) = item {
            let pos = f
                .attrs
                .iter()
                .position(|a| a.path().is_ident("tile_kernel"))
                .unwrap();
            let attr = match &f.attrs[pos].meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => TokenStream::new(),
            };
            f.attrs.remove(pos);
            return (attr, f.to_token_stream());
        }
    }
    panic!("no kernel in {src}");
}

fn expand(src: &str) -> String {
    let (attr, item) = split(src);
    tilelang_codegen::expand(attr, item).to_string()
}

fn diagnostics(src: &str) -> Vec<String> {
    let (attr, item) = split(src);
    match tilelang_codegen::compile(attr, item) {
        Ok(_) => Vec::new(),
        Err(d) => d.iter().map(|d| d.text()).collect(),
    }
}

#[test]
fn expanding_twice_gives_identical_tokens() {
    for src in [SAXPY, GEMM, INVALID] {
        // The same token stream twice, and a fresh lexing of the same text.
        let (attr, item) = split(src);
        let first = tilelang_codegen::expand(attr.clone(), item.clone()).to_string();
        let second = tilelang_codegen::expand(attr, item).to_string();
        assert_eq!(first, second, "expanding the same tokens twice differs");
        assert_eq!(
            first,
            expand(src),
            "expanding a fresh lexing of the same text differs"
        );
        assert!(!first.is_empty());
    }
    // The error path is deterministic too, diagnostics included (all of them, in order).
    let d = diagnostics(INVALID);
    assert_eq!(d.len(), 4, "{d:#?}");
    assert_eq!(d, diagnostics(INVALID));
}

#[test]
fn expansion_does_not_depend_on_what_was_compiled_before() {
    let saxpy = expand(SAXPY);
    let gemm = expand(GEMM);
    // Interleave with other work, including errors, then expand again.
    for _ in 0..3 {
        expand(INVALID);
        assert_eq!(expand(GEMM), gemm);
        assert_eq!(expand(SAXPY), saxpy);
    }
    // And on other threads (a proc macro may run anywhere).
    let handles: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(|| (expand(SAXPY), expand(GEMM))))
        .collect();
    for h in handles {
        let (s, g) = h.join().unwrap();
        assert_eq!(s, saxpy);
        assert_eq!(g, gemm);
    }
}

#[test]
fn the_kernels_of_the_tutorials_expand_deterministically() {
    // The chapters are written concurrently: whatever parses now is checked; zero is fine.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels/src");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(file) = syn::parse_file(&text) else {
            continue;
        };
        for item in file.items {
            let syn::Item::Fn(mut f) = item else { continue };
            let Some(pos) = f
                .attrs
                .iter()
                .position(|a| a.path().is_ident("tile_kernel"))
            else {
                continue;
            };
            let attr = match &f.attrs[pos].meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => TokenStream::new(),
            };
            f.attrs.remove(pos);
            let item = f.to_token_stream();
            let a = tilelang_codegen::expand(attr.clone(), item.clone()).to_string();
            let b = tilelang_codegen::expand(attr, item).to_string();
            assert_eq!(a, b, "{}: {}", e.path().display(), f.sig.ident);
        }
    }
}

#[test]
fn snapshot_of_saxpy() {
    let (attr, item) = split(SAXPY);
    let tokens = tilelang_codegen::expand(attr, item);
    let file: syn::File = syn::parse2(tokens).expect("the expansion is a valid Rust file");
    let pretty = format!(
        "// @generated by tests/determinism.rs: the expansion of `saxpy`.\n\
         // Regenerate with UPDATE_SNAPSHOTS=1 cargo test -p tilelang-codegen --test determinism\n\n{}",
        prettyplease::unparse(&file)
    );
    assert!(
        !pretty.contains("compile_error"),
        "saxpy must compile:\n{pretty}"
    );

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/saxpy.rs");
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &pretty).unwrap();
        eprintln!("updated {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; create it with UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    if want != pretty {
        // Point at the first differing line rather than dumping two whole files.
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), pretty.lines().collect());
        let i = w
            .iter()
            .zip(&g)
            .position(|(a, b)| a != b)
            .unwrap_or(w.len().min(g.len()));
        let around = |v: &[&str]| v[i.saturating_sub(3)..(i + 4).min(v.len())].join("\n");
        panic!(
            "the expansion of saxpy differs from {} at line {} (snapshot {} lines, now {} lines)\n\
             --- snapshot:\n{}\n--- now:\n{}\n\
             If the change is intended, run with UPDATE_SNAPSHOTS=1 and review the diff.",
            path.display(),
            i + 1,
            w.len(),
            g.len(),
            around(&w),
            around(&g)
        );
    }
}
