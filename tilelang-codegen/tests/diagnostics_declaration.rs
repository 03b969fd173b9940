//! The error catalogue, without trybuild: small invalid kernels go through
//! `tilelang_codegen::compile` and the diagnostics are checked one by one (message substring,
//! hint substring, and their number), including kernels with several independent errors, all of
//! which must be reported. With `proc-macro2`'s `span-locations` feature (a dev-dependency), a
//! few cases also check that the span starts at the offending token. The assertions are in
//! `common/diagnose.rs`.
//!
//! This file: a kernel's declaration, its attribute (`grid`, `threads`, `configs`, `defaults`,
//! `requires`) and its signature, and the limits its configs meet in the lowering (extents,
//! element counts, constants, a target's shared memory and registers). The body's errors:
//! `diagnostics_body.rs`.

mod common;

use common::diagnose::{compiles, diagnostics, expect, expect_span, render, split};
use proc_macro2::TokenStream;
use tilelang_codegen::Diagnostic;

// ---------------------------------------------------------------------------------------------
// The attribute.

#[test]
fn missing_grid_and_threads() {
    expect(
        r#"
#[tile_kernel()]
fn k(a: &mut Tensor<f32, (N,)>) {}
"#,
        &[
            ("missing `grid` in `tile_kernel`", "add `grid = [..]`"),
            ("missing `threads` in `tile_kernel`", "add `threads = 128`"),
        ],
    );
}

#[test]
fn unknown_and_duplicate_keys_with_spans() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4, blocks = 2, grid = [2])]
fn k(a: &mut Tensor<f32, (N,)>) {}
"#;
    let d = expect(
        src,
        &[
            (
                "unknown key `blocks` in `tile_kernel`",
                "the keys are grid, threads, configs, defaults, requires",
            ),
            ("duplicate key `grid`", "give each key once"),
        ],
    );
    expect_span(src, &d[0], "blocks", 0);
    expect_span(src, &d[1], "grid", 1);
}

#[test]
fn attribute_values_of_the_wrong_shape() {
    expect(
        r#"
#[tile_kernel(grid = [1, 1, 1, 1], threads = 4, configs = small, defaults = [cpu], requires = N > 0)]
fn k(a: &mut Tensor<f32, (N,)>) {}
"#,
        &[
            (
                "`grid` has 1 to 3 dimensions, found 4",
                "write `grid = [X]`, `[X, Y]` or `[X, Y, Z]`",
            ),
            (
                "`configs` must be a list of named configs",
                "write `configs = [small(BM = 64, BN = 64)",
            ),
            (
                "expected `arch = config`",
                "write `defaults = [gfx1100 = small, sm_90 = large]`",
            ),
            (
                "`requires` must be a list of conditions",
                "write `requires = [K % BK == 0]`",
            ),
        ],
    );
}

#[test]
fn const_generics_without_configs() {
    let src = r#"
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = THREADS)]
pub fn vadd<const BLOCK: usize, const THREADS: usize>(a: &mut Tensor<f32, (N,)>) {}
"#;
    let d = expect(
        src,
        &[(
            "kernel `vadd` has const generics but no `configs`",
            "add `configs = [default(BLOCK = .., THREADS = ..)]` to the attribute",
        )],
    );
    expect_span(src, &d[0], "vadd", 0);
}

#[test]
fn incomplete_config_and_unknown_const() {
    let src = r#"
#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = THREADS,
    configs = [small(BLOCK = 256), big(BLOCK = 1024, THREADS = 256, EXTRA = 3)],
)]
fn k<const BLOCK: usize, const THREADS: usize>(a: &mut Tensor<f32, (N,)>) {}
"#;
    let d = expect(
        src,
        &[
            (
                "config `small` does not set THREADS",
                "every config gives a value to every const generic",
            ),
            (
                "`EXTRA` is not a const generic of this kernel",
                "the const generics are: BLOCK, THREADS",
            ),
        ],
    );
    expect_span(src, &d[0], "small", 0);
    expect_span(src, &d[1], "EXTRA", 0);
}

#[test]
fn config_values_and_names() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4, configs = [a(B = 2 * 8), a(B = 4), b(B = 1, B = 2), 7])]
fn k<const B: usize>(x: &mut Tensor<f32, (N,)>) {}
"#,
        &[
            (
                "config values must be integer literals",
                "write e.g. `BM = 128`",
            ),
            ("duplicate config `a`", "give each config a different name"),
            ("`B` is given twice in config `b`", "give each const once"),
            (
                "expected a named config",
                "write a config as `name(BM = 128, BN = 64)`",
            ),
            // The rejected value leaves `a` without `B`.
            (
                "config `a` does not set B",
                "every config gives a value to every const generic",
            ),
        ],
    );
}

#[test]
fn defaults_with_unknown_arch_and_config() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4, configs = [a(B = 1)], defaults = [sm_75 = a, cpu = huge, cpu = a])]
fn k<const B: usize>(x: &mut Tensor<f32, (N,)>) {}
"#,
        &[
            (
                "unknown target arch `sm_75`",
                "known archs: cpu, sm_80, sm_86, sm_89, sm_90",
            ),
            (
                "duplicate default for `cpu`",
                "give one default config per arch",
            ),
            ("unknown config `huge`", "the configs are: a"),
        ],
    );
}

#[test]
fn threads_must_be_constant_and_in_range() {
    expect(
        r#"
#[tile_kernel(grid = [N], threads = N)]
fn k(x: &mut Tensor<f32, (N,)>) {}
"#,
        &[(
            "`threads` must be a constant",
            "use a literal or a const generic",
        )],
    );
    let src = r#"
#[tile_kernel(grid = [N], threads = T, configs = [ok(T = 1024), big(T = 2048)])]
fn k<const T: usize>(x: &mut Tensor<f32, (N,)>) {}
"#;
    let d = expect(
        src,
        &[(
            "in config `big`: `threads` is 2048, outside 1..=1024",
            "pick a block size between 1 and 1024 threads",
        )],
    );
    expect_span(src, &d[0], "big", 0);
}

#[test]
fn grid_and_requires_dtypes() {
    expect(
        r#"
#[tile_kernel(grid = [scale], threads = 4, requires = [N, N > 0])]
fn k(x: &mut Tensor<f32, (N,)>, scale: f32) {}
"#,
        &[
            (
                "dtype mismatch: a grid dimension must be usize, found f32",
                "add a cast: `(..) as usize`",
            ),
            (
                "dtype mismatch: a `requires` condition must be bool, found usize",
                "use a comparison",
            ),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// The signature.

#[test]
fn signature_errors_are_all_reported() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
pub async unsafe fn k<T>(a: Tensor<f32, (N,)>, b: &Tensor<i64, (N,)>, s: i64, mut t: f32) -> f32 {}
"#,
        &[
            ("a tile kernel cannot be `async`", "remove `async`"),
            (
                "a tile kernel cannot be `unsafe`",
                "the generated launcher is safe",
            ),
            (
                "a tile kernel returns nothing",
                "write results into a `&mut Tensor` parameter",
            ),
            (
                "only `const NAME: usize` generics are supported",
                "tile sizes are const generics",
            ),
            (
                "tensor parameters are passed by reference",
                "write `&Tensor<f16, (M, N)>` or `&mut Tensor<f16, (M, N)>`",
            ),
            (
                "unsupported tensor element type `i64`",
                "tensors hold f16, bf16, f32, f64, i32, u32 or u8",
            ),
            (
                "unsupported scalar parameter type `i64`",
                "scalars may be f16, bf16, f32, f64, i32, u32, u8 or usize",
            ),
            ("kernel parameters cannot be `mut`", "remove `mut`"),
        ],
    );
}

#[test]
fn parameter_names_and_shape_symbols() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(a: &Tensor<f32, (n, M)>, M: f32, a: f32) {}
"#;
    let d = expect(
        src,
        &[
            (
                "shape symbol `n` should start with an upper-case letter",
                "name dimensions like `M`, `N`, `K`",
            ),
            (
                "parameter `M` has the same name as a shape symbol",
                "rename the parameter",
            ),
            (
                "parameter `a` has the same name as another parameter",
                "rename the parameter",
            ),
        ],
    );
    expect_span(src, &d[0], "n, M", 0);
    expect_span(src, &d[1], "M: f32", 0);
}

#[test]
fn not_a_function() {
    let (attr, _) = split("#[tile_kernel(grid = [1], threads = 1)] fn k() {}");
    let item: TokenStream = "struct S;".parse().unwrap();
    let d = tilelang_codegen::compile(attr, item).unwrap_err();
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].message
            .contains("#[tile_kernel] applies to a function"),
        "{}",
        render(&d)
    );
    assert!(d[0]
        .hint
        .as_deref()
        .unwrap()
        .contains("write `#[tile_kernel(..)] pub fn name(..) { .. }`"));
}

// ---- Limits: extents, shapes and constants (issue: no panic, no silent CPU/GPU difference) ---

/// The diagnostics of a kernel the frontend accepts but whose lowering for `arch` must fail.
fn lowering_diagnostics(src: &str, arch: &str) -> Vec<Diagnostic> {
    let (attr, item) = split(src);
    let k = tilelang_codegen::compile(attr, item)
        .unwrap_or_else(|d| panic!("the frontend rejected it:\n{}", render(&d)));
    let t = tilelang_codegen::target::Target::by_arch(arch).unwrap();
    match tilelang_codegen::launcher::lower(&k, &[t]) {
        Ok(_) => panic!("expected a lowering error for {arch}:\n{src}"),
        Err(d) => d,
    }
}

#[test]
fn parallel_extent_past_the_limit_is_an_error() {
    for extent in ["1 << 24 + 1", "1 << 40", "(1 << 62) * 2"] {
        let src = format!("#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) {{ for i in parallel({extent}) {{ if i < N {{ c[i] = 1.0; }} }} }}");
        let d = diagnostics(&src);
        assert_eq!(d.len(), 1, "{extent}: {}", render(&d));
        assert!(
            d[0].message.contains("`parallel` extent")
                && d[0].hint.as_deref().unwrap().contains("16777216"),
            "{extent}: {}",
            render(&d)
        );
    }
}

#[test]
fn parallel_loop_and_buffer_element_totals_are_limited() {
    let d = diagnostics("#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { for (i, j) in parallel(1 << 13, 1 << 12) { if i < N { c[i] = 1.0; } } }");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(d[0].message.contains("33554432 elements"), "{}", render(&d));
    let d = diagnostics("#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N, N)>) { let mut f = alloc_fragment::<f32>((1 << 24, 1 << 24)); fill(&mut f, 0.0); copy(&f, c.at_mut((0, 0))); }");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].message
            .contains("buffer `f` has 281474976710656 elements"),
        "{}",
        render(&d)
    );
}

#[test]
fn constant_overflow_is_an_error_not_a_wrap() {
    // `(1 << 64) + 4` wraps to 5 at run time (shifts mask their amount, like tl::shl): as an
    // extent it must not be read as 2^64 + 4 (truncated to 4 on the GPU) or as 5.
    for extent in [
        "(1 << 64) + 4",
        "(1 << 63) + 4",
        "(1 << 62) * 4 / 8",
        "((1 << 31) as i32) as usize",
        "0 - 1",
    ] {
        let src = format!("#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) {{ for i in parallel({extent}) {{ if i < N {{ c[i] = 1.0; }} }} }}");
        let d = diagnostics(&src);
        assert_eq!(d.len(), 1, "{extent}: {}", render(&d));
        assert!(
            d[0].message.contains("`parallel` extent"),
            "{extent}: {}",
            render(&d)
        );
    }
    // No wrap on the way: accepted, and the same value everywhere.
    compiles("#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { for i in parallel(((1 << 40) - (1 << 40)) + 4) { if i < N { c[i] = 1.0; } } }").unwrap();
}

#[test]
fn shared_memory_over_a_target_limit_is_an_error_on_the_config() {
    let src = "#[tile_kernel(grid = [1], threads = 128, configs = [small(B = 64), big(B = 224)])]\nfn k<const B: usize>(a: &Tensor<f32, (N, N)>, c: &mut Tensor<f32, (N, N)>) { let mut s = alloc_shared::<f32>((B, B)); copy(a.at((0, 0)), &mut s); copy(&s, c.at_mut((0, 0))); }";
    // With `big` alone nothing fits gfx1100: an error on the config.
    let only_big = src.replace("small(B = 64), ", "");
    let d = lowering_diagnostics(&only_big, "gfx1100");
    assert_eq!(d.len(), 1, "{}", render(&d));
    let m = &d[0];
    assert!(
        m.message.contains("config `big`")
            && m.message.contains("gfx1100")
            && m.message.contains("200704 bytes")
            && m.message.contains("65536"),
        "{}",
        render(&d)
    );
    assert!(
        m.hint.as_deref().unwrap().contains("`s` 200704 bytes"),
        "{}",
        render(&d)
    );
    // On the config's name in `configs = [..]` (line 1).
    let s = m.span.start.start();
    assert_eq!((s.line, s.column), (1, 52), "{}", render(&d));
    // Beside `small`, which fits, `big` is only left out for gfx1100 (the build warns); sm_90
    // has room for both.
    let (attr, item) = split(src);
    let k = tilelang_codegen::compile(attr, item).unwrap();
    let t = |a| tilelang_codegen::target::Target::by_arch(a).unwrap();
    let lowered = tilelang_codegen::launcher::lower(&k, &[t("sm_90"), t("gfx1100")]).unwrap();
    let built: Vec<(&str, usize)> = lowered.iter().map(|l| (l.target.arch, l.config)).collect();
    assert_eq!(built, [("sm_90", 0), ("sm_90", 1), ("gfx1100", 0)]);
    // A default that names it there is an error, which says what is compiled there.
    let with_default = src.replace("])]", "], defaults = [gfx1100 = big])]");
    let d = lowering_diagnostics(&with_default, "gfx1100");
    assert_eq!(d.len(), 1, "{}", render(&d));
    assert!(
        d[0].message.contains("`defaults` names `big` for gfx1100")
            && d[0].message.contains("200704 bytes")
            && d[0]
                .hint
                .as_deref()
                .unwrap()
                .contains("compiled there: `small`"),
        "{}",
        render(&d)
    );
}

#[test]
fn register_fragments_over_a_target_limit_are_an_error_on_the_config() {
    // 64 × 64 f32 over 4 threads: 1024 registers per thread.
    let src = "#[tile_kernel(grid = [1], threads = 4, configs = [t(B = 64)])]\nfn k<const B: usize>(a: &Tensor<f32, (N, N)>, c: &mut Tensor<f32, (N, N)>) { let mut f = alloc_fragment::<f32>((B, B)); copy(a.at((0, 0)), &mut f); copy(&f, c.at_mut((0, 0))); }";
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let d = lowering_diagnostics(src, arch);
        assert_eq!(d.len(), 1, "{}", render(&d));
        assert!(
            d[0].message.contains("1024 32-bit registers per thread")
                && d[0].message.contains(arch)
                && d[0].hint.as_deref().unwrap().contains("`f` 1024"),
            "{}",
            render(&d)
        );
    }
}

#[test]
fn lowering_errors_are_compile_errors_in_the_expansion() {
    let (attr, item) = split("#[tile_kernel(grid = [1], threads = 128, configs = [big(B = 256)])]\nfn k<const B: usize>(a: &Tensor<f32, (N, N)>, c: &mut Tensor<f32, (N, N)>) { let mut s = alloc_shared::<f32>((B, B)); copy(a.at((0, 0)), &mut s); copy(&s, c.at_mut((0, 0))); }");
    let t = tilelang_codegen::target::Target::by_arch("gfx1100").unwrap();
    let out = tilelang_codegen::expand_for(attr, item, &[t]).to_string();
    assert!(
        out.contains("compile_error") && out.contains("gfx1100"),
        "{out}"
    );
    // And still a launcher of the same name, so the rest of the crate type-checks.
    assert!(out.contains("fn k"), "{out}");
}
