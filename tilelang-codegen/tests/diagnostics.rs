//! The error catalogue, without trybuild: small invalid kernels go through
//! `tilelang_codegen::compile` and the diagnostics are checked one by one (message substring,
//! hint substring, and their number), including kernels with several independent errors, all of
//! which must be reported. With `proc-macro2`'s `span-locations` feature (a dev-dependency), a
//! few cases also check that the span starts at the offending token.
//!
//! Tests named `regression_*` pin frontend bugs found by these tests and the fuzzer, now fixed.

use proc_macro2::TokenStream;
use quote::ToTokens;
use tilelang_codegen::Diagnostic;

/// Splits `#[tile_kernel(..)] fn ..` source into the attribute's tokens and the item's tokens,
/// keeping the spans of `src` (line 1 is the first line of `src`).
fn split(src: &str) -> (TokenStream, TokenStream) {
    let file =
        syn::parse_file(src).unwrap_or_else(|e| panic!("test source does not parse: {e}\n{src}"));
    let mut found = None;
    for item in file.items {
        if let syn::Item::Fn(mut f) = item {
            let pos = f
                .attrs
                .iter()
                .position(|a| a.path().is_ident("tile_kernel"))
                .expect("a #[tile_kernel] attribute");
            let attr = match &f.attrs[pos].meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => TokenStream::new(),
            };
            f.attrs.remove(pos);
            assert!(found.is_none(), "one kernel per test source");
            found = Some((attr, f.to_token_stream()));
        }
    }
    found.expect("a kernel")
}

/// The diagnostics of a kernel that must be rejected.
fn diagnostics(src: &str) -> Vec<Diagnostic> {
    let (attr, item) = split(src);
    match tilelang_codegen::compile(attr, item) {
        Ok(_) => panic!("expected diagnostics, but the kernel compiled:\n{src}"),
        Err(d) => d,
    }
}

fn render(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|d| {
            let s = d.span.start.start();
            format!(
                "  {}:{}: {}",
                s.line,
                s.column,
                d.text().replace('\n', "\n    ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts the diagnostics, in order: each `(message, hint)` pair is a pair of substrings.
#[track_caller]
fn expect(src: &str, want: &[(&str, &str)]) -> Vec<Diagnostic> {
    let got = diagnostics(src);
    let ok = got.len() == want.len()
        && got.iter().zip(want).all(|(d, (m, h))| {
            d.message.contains(m) && d.hint.as_deref().is_some_and(|hint| hint.contains(h))
        });
    assert!(
        ok,
        "expected {} diagnostic(s):\n{}\ngot {}:\n{}\nfor:\n{src}",
        want.len(),
        want.iter()
            .map(|(m, h)| format!("  {m}  [help: {h}]"))
            .collect::<Vec<_>>()
            .join("\n"),
        got.len(),
        render(&got)
    );
    got
}

/// Asserts that `d`'s span starts at the `nth` (0-based) occurrence of `needle` in `src`.
#[track_caller]
fn expect_span(src: &str, d: &Diagnostic, needle: &str, nth: usize) {
    let offset = src
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", nth + 1))
        .0;
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count();
    let got = d.span.start.start();
    assert_eq!(
        (got.line, got.column),
        (line, column),
        "the span of `{}` should start at `{needle}` (occurrence {nth}), line {line} column {column}\n{src}",
        d.message
    );
}

/// Asserts that `d`'s range covers exactly the `nth` occurrence of `needle` in `src` (needle on
/// one line): it starts at its first character and ends after its last.
#[track_caller]
fn expect_range(src: &str, d: &Diagnostic, needle: &str, nth: usize) {
    expect_span(src, d, needle, nth);
    let offset = src.match_indices(needle).nth(nth).unwrap().0 + needle.len();
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count();
    let got = d.span.end.end();
    assert_eq!(
        (got.line, got.column),
        (line, column),
        "the range of `{}` should end after `{needle}`, line {line} column {column}\n{src}",
        d.message
    );
}

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

// ---------------------------------------------------------------------------------------------
// Statements the parser rejects.

#[test]
fn unsupported_rust_is_rejected_statement_by_statement() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(x: &mut Tensor<f32, (N,)>) {
    while true {}
    loop {}
    match 1 { _ => {} }
    return;
    println!("hi");
    let y = x[0].sqrt();
    let z = |v| v;
    for i in 0..4 {}
    x[0] = 1.0;
}
"#;
    let d = expect(
        src,
        &[
            (
                "`while` loops are not supported",
                "use `for i in serial(n)`",
            ),
            ("`loop` is not supported", "use `for i in serial(n)`"),
            ("`match` is not supported", "use `if` / `else`"),
            ("`return` is not supported", "guard the work with `if`"),
            (
                "macro `println!` is not supported inside a tile kernel",
                "only the kernel language is available",
            ),
            (
                "method `.sqrt()` is not supported in a tile kernel",
                "call the built-in function instead: `sqrt(x)`",
            ),
            ("closures are not supported", "write the computation inline"),
            (
                "plain ranges do not say how a loop maps to threads",
                "write `serial(n)`",
            ),
        ],
    );
    expect_span(src, &d[0], "while", 0);
    expect_span(src, &d[5], "sqrt", 0);
    expect_span(src, &d[7], "0..4", 0);
}

#[test]
fn unknown_functions_and_iterators() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(x: &mut Tensor<f32, (N,)>) {
    let y = gelu(x[0]);
    for i in threads(4) {}
    sync_threads();
    exp(1.0);
    let z = copy(1, 2);
}
"#,
        &[
            (
                "unknown loop iterator `threads`",
                "iterate over `parallel(..)`, `serial(..)` or `pipelined(n, stages)`",
            ),
            (
                "unknown function `gelu`",
                "the functions are exp, exp2, log",
            ),
            (
                "unknown primitive `sync_threads`",
                "the primitives are copy, fill, clear",
            ),
            (
                "the value of `exp(..)` is unused",
                "bind it: `let x = exp(..);`",
            ),
            (
                "`copy` is a statement and has no value",
                "call it on its own line",
            ),
        ],
    );
}

#[test]
fn lets_and_tuples() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(x: &mut Tensor<f32, (N,)>) {
    let (a, b) = (1, 2, 3);
    let c;
    let _ = 1;
    let d: Vec<f32> = 1;
    let t = (1, 2);
}
"#,
        &[
            (
                "expected a tuple of 2 values, found 3",
                "give one value per name",
            ),
            (
                "a `let` in a tile kernel needs a value",
                "write `let x = value;`",
            ),
            ("`let _ = ...` has no effect", "remove the statement"),
            ("unsupported type annotation", "annotate scalars with f16"),
            (
                "tuples are only supported on the right of `let (a, b) = (x, y);`",
                "use separate variables",
            ),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// The tile model's rules.

#[test]
fn writes_need_mutable_tensors_and_buffers() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let s = alloc_shared::<f32>((4,));
    a[0] = 1.0;
    fill(&mut s, 0.0);
    copy(&s, a.at_mut((0,)));
    copy(c.at_mut((0,)), &mut s);
}
"#;
    let d = expect(
        src,
        &[
            (
                "cannot write to `a`: it is a read-only tensor",
                "declare the parameter as `a: &mut Tensor<..>`",
            ),
            (
                "cannot write to buffer `s`: it is not declared `mut`",
                "declare it `let mut s = ...`",
            ),
            (
                "cannot write to `a`: it is a read-only tensor",
                "declare the parameter as `a: &mut Tensor<..>`",
            ),
            (
                "the source of `copy` is read, not written",
                "write `c.at((..))`",
            ),
            (
                "cannot write to buffer `s`: it is not declared `mut`",
                "declare it `let mut s = ...`",
            ),
        ],
    );
    expect_span(src, &d[0], "a[0]", 0);
    expect_span(src, &d[1], "s, 0.0", 0);
    expect_range(src, &d[3], "c.at_mut((0,))", 0);
}

#[test]
fn data_race_and_fragment_rules() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>) {
    let mut acc = 0.0f32;
    let mut f = alloc_fragment::<f32>((4,));
    for i in parallel(4) {
        acc += 1.0;
        f[i] = acc;
    }
    f[0] = 2.0;
    c[0] = f[1];
}
"#;
    let d = expect(
        src,
        &[
            (
                "`acc` is declared outside this `parallel` loop; assigning to it from the loop is a data race",
                "declare the variable inside the loop, store into a buffer element",
            ),
            ("fragment `f` is indexed outside a `parallel` loop", "index it inside `for .. in parallel(..)`"),
            ("fragment `f` is indexed outside a `parallel` loop", "or use a shared buffer"),
        ],
    );
    expect_span(src, &d[0], "acc += 1.0", 0);
    expect_span(src, &d[1], "f[0]", 0);
    expect_span(src, &d[2], "f[1]", 0);
}

#[test]
fn loops_extents_and_nesting() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>, n: usize) {
    for i in parallel(N) {}
    for i in parallel(4) {
        for j in parallel(2) {}
        for k in pipelined(4, 2) {}
    }
    for k in pipelined(n, n) {}
    for (i, j) in parallel(4) {}
    for i in serial(1, 2, 3) {}
}
"#,
        &[
            // The parser's error first, then the checker's.
            (
                "`serial` takes 1 or 2 arguments, found 3",
                "write `serial(n)` or `serial(start, end)`",
            ),
            (
                "a `parallel` extent must be a constant",
                "use literals and const generics",
            ),
            (
                "`parallel` loops cannot be nested",
                "use one multi-dimensional loop",
            ),
            (
                "`pipelined` loops cannot be inside a `parallel` loop",
                "pipeline the block-level loop",
            ),
            (
                "the number of pipeline stages must be a constant",
                "use a literal or a const generic",
            ),
            (
                "`parallel` has 1 extent but 2 loop variables",
                "give one variable per extent",
            ),
        ],
    );
}

#[test]
fn allocation_placement() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>, n: usize) {
    let mut l = alloc_local::<f32>((4,));
    for k in serial(4) {
        let mut s = alloc_shared::<f32>((4,));
    }
    let mut d = alloc_shared::<f32>((n,));
    let mut e = alloc_shared::<f32>((1, 2, 3, 4, 5));
    let mut b = alloc_shared::<bool>((4,));
}
"#,
        &[
            // The parser's errors first, then the checker's.
            (
                "tile buffers have 1 to 4 dimensions",
                "alloc_shared::<f16, (BM, BK)>()",
            ),
            (
                "unsupported buffer element type",
                "buffers hold f16, bf16, f32, f64, i32, u32 or u8",
            ),
            (
                "`alloc_local` is per-thread storage and must be inside a `parallel` loop",
                "allocate it inside `for i in parallel(..)`",
            ),
            (
                "shared buffers are allocated once per block, outside every loop",
                "move the allocation to the top level",
            ),
            (
                "buffer dimensions must be constants",
                "use literals and const generics",
            ),
        ],
    );
}

#[test]
fn gemm_operands() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>) {
    let mut a = alloc_shared::<f16>((16, 16));
    let mut b = alloc_shared::<f32>((16, 16));
    let mut s = alloc_shared::<f32>((16, 16));
    let mut acc = alloc_fragment::<f32>((16, 16));
    gemm(&a, &b, &mut s);
    gemm(&a, &a, &mut a);
    gemm(a, &a, &acc);
}
"#,
        &[
            (
                "`gemm` accumulates into a fragment, but `s` is a shared buffer",
                "allocate `s` with `alloc_fragment::<f32, (BM, BN)>()`",
            ),
            (
                "`gemm` operands have different dtypes: f16 and f32",
                "convert one operand",
            ),
            (
                "the accumulator `a` is also an operand of `gemm`",
                "accumulate into a separate fragment",
            ),
            ("`gemm` takes the A tile by reference", "write `&a`"),
            ("`gemm` writes the accumulator", "pass it as `&mut acc`"),
        ],
    );
}

#[test]
fn per_config_shape_checks() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4, configs = [good(BM = 16, BK = 16), bad(BM = 16, BK = 8)])]
fn k<const BM: usize, const BK: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut a = alloc_shared::<f16, (BM, BK)>();
    let mut b = alloc_shared::<f16, (BM, BM)>();
    let mut acc = alloc_fragment::<f32, (BM, BM)>();
    let mut row = alloc_fragment::<f32, (BK,)>();
    gemm(&a, &b, &mut acc);
    reduce_sum(&acc, &mut row, 1);
    for i in parallel(BK - 8) {}
}
"#;
    let d = expect(
        src,
        &[
            ("in config `bad`: `gemm` shapes do not agree: A is (16, 8), B is (16, 16), C is (16, 16)", "A is (M, K), B is (K, N)"),
            ("in config `bad`: reducing (16, 16) along dimension 1 gives (16), but the destination is (8)", "make the destination's shape"),
            ("in config `bad`: `parallel` extent is 0", "extents must be constants between 1 and 16777216"),
        ],
    );
    expect_range(src, &d[0], "gemm(&a, &b, &mut acc)", 0);
}

#[test]
fn reductions() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>, d: usize) {
    let mut s = alloc_shared::<f32>((4, 4));
    let mut r = alloc_shared::<f32>((4, 4));
    let mut h = alloc_shared::<f16>((4,));
    reduce_sum(&s, &mut r, 1);
    reduce_max(&s, &mut h, 0);
    reduce_sum(&s, &mut h, 2);
    reduce_sum(&s, &mut h, d);
    reduce_max(&s, &mut s, 0);
}
"#,
        &[
            (
                "reducing a 2-D tile gives a 1-D result, but `r` has 2 dimensions",
                "drop the reduced dimension",
            ),
            (
                "`reduce_max` source is f32 but destination is f16",
                "reduce into a buffer of the same dtype",
            ),
            ("there is no dimension 2", "reduce along 0..2"),
            (
                "the reduced dimension must be an integer literal",
                "write `reduce_sum(&src, &mut dst, 1)`",
            ),
            (
                "`reduce_max` reads and writes the same buffer `s`",
                "reduce into a separate buffer",
            ),
        ],
    );
}

#[test]
fn copies() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (M, N)>) {
    let mut s = alloc_shared::<f32>((4, 4));
    copy(a.at((0, 0)), c.at_mut((0, 0)));
    copy(a, &mut s);
    copy(a.at((0,)), &mut s);
    copy(&s, &mut s);
    copy(s.at((0, 0)), &mut s);
}
"#,
        &[
            (
                "`copy` between two global tensors is not supported",
                "stage the tile through a shared or fragment buffer",
            ),
            (
                "`copy` moves tiles; pass a tile of `a`",
                "write `a.at((row, col))`",
            ),
            (
                "`a` has 2 dimensions, but 1 offset",
                "give one offset per dimension: `a.at((0, 0))`",
            ),
            (
                "`copy` from `s` into itself",
                "copy into a different buffer",
            ),
            (
                "`.at()` applies to global tensors; `s` is a tile buffer",
                "pass the buffer itself: `&s`",
            ),
        ],
    );
}

#[test]
fn dtypes_and_literals() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(a: &Tensor<f16, (N,)>, c: &mut Tensor<f32, (N,)>) {
    c[0] = a[0] + c[1];
    let x: u8 = 300;
    let y = 1.5 + 1u32;
    let u = 2u32;
    let v = -u;
    let w = !1.0;
    let b = true + false;
    let s = 1.0 << 2.0;
    c[1] = block_idx(0);
}
"#;
    let d = expect(
        src,
        &[
            (
                "dtype mismatch in `+`: left is f16, right is f32",
                "the kernel language never converts implicitly; cast one side",
            ),
            (
                "literal `300` does not fit in u8",
                "use a smaller value or a wider type",
            ),
            ("float literal where u32 is expected", "write an integer"),
            (
                "cannot negate a value of type u32",
                "cast to a signed type first",
            ),
            ("`!` cannot be applied to f32", "`!` is logical not on bool"),
            (
                "operator `+` cannot be applied to bool",
                "arithmetic applies to numbers, not booleans",
            ),
            (
                "operator `<<` cannot be applied to f32",
                "bit operations apply to integers",
            ),
            (
                "dtype mismatch: this store must be f32, found usize",
                "add a cast: `(..) as f32`",
            ),
        ],
    );
    expect_range(src, &d[0], "a[0] + c[1]", 0);
    expect_span(src, &d[1], "300", 0);
}

#[test]
fn float_constants_and_out_of_range_literals() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>) {
    let a = f32::MAX;
    let b = i32::NAN;
    let x = 1e400;
    c[0] = f16::NAN;
    c[1] = 3.5e38f32;
}
"#;
    let d = expect(
        src,
        &[
            (
                "paths like `f32::MAX` are not supported",
                "`f32::INFINITY`, `f32::NEG_INFINITY` and `f32::NAN`",
            ),
            (
                "paths like `i32::NAN` are not supported",
                "(likewise for f16, bf16 and f64)",
            ),
            (
                "float literal `1e400` is out of the range of f64",
                "`f32::INFINITY`",
            ),
            (
                "dtype mismatch: this store must be f32, found f16",
                "add a cast",
            ),
            ("is out of the range of f32", "use a smaller value"),
        ],
    );
    expect_span(src, &d[0], "f32::MAX", 0);
    expect_span(src, &d[2], "1e400", 0);
    // Every constant of every float type is a literal of that type, which the CPU code spells
    // with f64's constants.
    let ok = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(a: &mut Tensor<f32, (N,)>, b: &mut Tensor<f16, (N,)>, c: &mut Tensor<bf16, (N,)>, d: &mut Tensor<f64, (N,)>) {
    a[0] = max(f32::NEG_INFINITY, -f32::INFINITY) + f32::NAN;
    b[0] = f16::INFINITY - f16::NEG_INFINITY * f16::NAN;
    c[0] = if_then_else(bf16::NAN == bf16::INFINITY, bf16::NEG_INFINITY, 1.0);
    d[0] = f64::INFINITY + f64::NEG_INFINITY + f64::NAN;
}
"#;
    compiles(ok).unwrap_or_else(|e| panic!("{e}"));
    let (attr, item) = split(ok);
    let cpu = tilelang_codegen::expand(attr, item).to_string();
    for c in ["f64 :: INFINITY", "f64 :: NEG_INFINITY", "f64 :: NAN"] {
        assert_eq!(cpu.matches(c).count(), 4, "{c} in {cpu}");
    }
}

#[test]
fn names_and_assignments() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>, scale: f32) {
    let x = 1.0;
    x = 2.0;
    scale = 1.0;
    N = 3;
    c = 1.0;
    c[0] = y;
    c[1] = BLOCK as f32;
    let z = c;
    c[(0, 0)] = 1.0;
    c[2] = block_idx(1) as f32;
}
"#;
    let d = expect(
        src,
        &[
            (
                "cannot assign twice to immutable variable `x`",
                "declare it `let mut x`",
            ),
            (
                "cannot assign to `scale`: it is a parameter, shape symbol or const generic",
                "copy it into a local first: `let mut scale = scale;`",
            ),
            (
                "cannot assign to `N`: it is a parameter, shape symbol or const generic",
                "let mut n = N;",
            ),
            (
                "cannot assign to `c` as a whole",
                "or use `fill(&mut c, value)`",
            ),
            (
                "unknown name `y`",
                "declare it with `let` before this point",
            ),
            (
                "unknown name `BLOCK`",
                "shape symbols come from tensor types",
            ),
            ("`c` is a tile, not a value", "index it (`c[(i, j)]`)"),
            (
                "`c` has 1 dimension, but 2 indexes are given",
                "write 1 index: `c[i]`",
            ),
            (
                "the grid has 1 dimension; there is no `block_idx(1)`",
                "add a grid dimension in the attribute",
            ),
        ],
    );
    expect_span(src, &d[0], "x = 2.0", 0);
    expect_span(src, &d[4], "y;", 0);
}

#[test]
fn atomics() {
    expect(
        r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>) {
    let mut f = alloc_fragment::<f32>((4,));
    for i in parallel(4) {
        atomic_add(&mut f[i], 1.0);
        atomic_add(c[i], 1.0);
        atomic_add(&mut c[i], 1u8);
    }
}
"#,
        &[
            (
                "`atomic_add` applies to global tensors and shared buffers",
                "atomics on registers make no sense",
            ),
            (
                "`atomic_add` takes a mutable reference to an element",
                "write `atomic_add(&mut c[(i, j)], value)`",
            ),
            (
                "dtype mismatch: the added value must be f32, found u8",
                "add a cast: `(..) as f32`",
            ),
        ],
    );
}

/// One error from each pass — the attribute, the signature, the parser and the checker — and
/// a second error in the checker after the first: all of them are reported, in source order
/// within each pass.
#[test]
fn independent_errors_are_all_reported() {
    let src = r#"
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64, blocks = 1)]
pub async fn k(a: &Tensor<f16, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * 64;
    while base < N {}
    for i in parallel(64) {
        let g = base + i;
        c[g] = a[g] * 2.0f32;
        c[g] = undefined;
    }
}
"#;
    let d = expect(
        src,
        &[
            ("unknown key `blocks`", "the keys are"),
            ("a tile kernel cannot be `async`", "remove `async`"),
            ("`while` loops are not supported", "serial"),
            (
                "dtype mismatch in `*`: left is f16, right is f32",
                "cast one side",
            ),
            ("unknown name `undefined`", "declare it with `let`"),
        ],
    );
    expect_span(src, &d[0], "blocks", 0);
    expect_span(src, &d[1], "async", 0);
    expect_span(src, &d[2], "while", 0);
    expect_range(src, &d[3], "a[g] * 2.0f32", 0);
    expect_span(src, &d[4], "undefined", 0);
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

/// A `let` rejected by the checker poisons its name: later uses are not reported again.
#[test]
fn no_cascade_after_a_rejected_let() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 4)]
fn k(c: &mut Tensor<f32, (N,)>) {
    let x = foo;
    let y = x + 1.0;
    c[0] = y;
    c[1] = bar;
}
"#;
    let d = expect(
        src,
        &[
            (
                "unknown name `foo`",
                "declare it with `let` before this point",
            ),
            (
                "unknown name `bar`",
                "declare it with `let` before this point",
            ),
        ],
    );
    expect_span(src, &d[0], "foo", 0);
    expect_span(src, &d[1], "bar", 0);
}

// ---------------------------------------------------------------------------------------------
// Frontend bugs found while writing these tests: the behaviour we want. Each fails today.

fn compiles(src: &str) -> Result<(), String> {
    let (attr, item) = split(src);
    match std::panic::catch_unwind(|| tilelang_codegen::compile(attr, item)) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(d)) => Err(render(&d)),
        Err(_) => Err("the frontend panicked".into()),
    }
}

#[test]
fn regression_overflowing_constants_panic() {
    for (what, src) in [
        (
            "negation of i128::MIN",
            "#[tile_kernel(grid = [1], threads = -(1 << 127))] fn k(c: &mut Tensor<f32, (N,)>) {}",
        ),
        (
            "div_ceil overflow",
            "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { for i in parallel((1 << 126).div_ceil(-1)) {} }",
        ),
    ] {
        let r = compiles(src);
        assert!(
            matches!(&r, Err(e) if e.contains("does not evaluate") || e.contains("not computable") || e.contains("threads")),
            "{what}: expected a diagnostic, got {r:?}"
        );
    }
}

#[test]
fn regression_float_literal_cast_to_int() {
    compiles(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<i32, (N,)>) { let x = 1.5 as i32; c[0] = x; }",
    )
    .unwrap();
}

#[test]
fn regression_min_int_literal() {
    compiles(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<i32, (N,)>) { let x: i32 = -2147483648; c[0] = x; }",
    )
    .unwrap();
}

#[test]
fn regression_cascading_unknown_names_after_parse_error() {
    let d = diagnostics(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { let x = c.len(); let y = x + 1.0; c[0] = y; }",
    );
    assert_eq!(
        d.len(),
        1,
        "one root cause, one diagnostic:\n{}",
        render(&d)
    );
}

#[test]
fn regression_config_checks_skipped_when_other_errors() {
    let d = diagnostics(
        "#[tile_kernel(grid = [1], threads = 2048)] fn k(c: &mut Tensor<f32, (N,)>) { c[0] = q; }",
    );
    assert_eq!(
        d.len(),
        2,
        "unknown name and threads out of range:\n{}",
        render(&d)
    );
}

/// Once every rank mismatch between a region and its tile was accepted, then refused; since
/// rank-dropping copies, a tile of lower rank is the region's trailing dimensions (a row of
/// `a` here), and a tile of higher rank than its tensor is still diagnosed.
#[test]
fn regression_copy_rank_mismatch_accepted() {
    let r = compiles(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(a: &Tensor<f32, (M, N)>) { let mut s = alloc_shared::<f32>((4,)); copy(a.at((0, 0)), &mut s); }",
    );
    assert!(r.is_ok(), "a row of a 2-D tensor into a 1-D tile");
    let r = compiles(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(a: &Tensor<f32, (N,)>) { let mut s = alloc_shared::<f32>((1, 4)); copy(a.at((0,)), &mut s); }",
    );
    assert!(
        r.is_err(),
        "a tile of higher rank than its tensor must be diagnosed"
    );
}

#[test]
fn regression_reserved_names_accepted() {
    for src in [
        "#[tile_kernel(grid = [1], threads = 4)] fn k(a: &mut Tensor<f32, (N,)>, config: f32) { a[0] = config; }",
        "#[tile_kernel(grid = [1], threads = SYMBOLS, configs = [c(SYMBOLS = 4)])] fn k<const SYMBOLS: usize>(a: &mut Tensor<f32, (N,)>) {}",
        // `r#a` is the identifier `a`: the launcher gets two parameters named `a`.
        "#[tile_kernel(grid = [1], threads = 4)] fn k(a: &mut Tensor<f32, (N,)>, r#a: f32) { a[0] = 1.0; }",
    ] {
        assert!(compiles(src).is_err(), "the generated code does not compile (E0415 / E0308); diagnose instead:\n{src}");
    }
}

#[test]
fn regression_loop_variable_assignment_hint() {
    let d = diagnostics(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { for i in serial(4) { i = 2; } }",
    );
    assert_eq!(d.len(), 1);
    assert!(
        !d[0].hint.as_deref().unwrap_or("").contains("let mut i"),
        "{}",
        render(&d)
    );
}

#[test]
fn regression_raw_kernel_name_fallback() {
    let (attr, item) = split("#[tile_kernel(grid = [1], threads = 4)] pub fn r#loop(c: &mut Tensor<f32, (N,)>) { c[0] = q; }");
    let out = tilelang_codegen::expand(attr, item);
    syn::parse2::<syn::File>(out.clone()).unwrap_or_else(|e| panic!("{e}: {out}"));
}

#[test]
fn regression_huge_literal_message() {
    let d = diagnostics(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(c: &mut Tensor<f32, (N,)>) { c[0] = 18446744073709551616 as f32; }",
    );
    assert_eq!(d.len(), 1);
    assert!(
        d[0].hint.is_some() && d[0].message.contains("18446744073709551616"),
        "{}",
        render(&d)
    );
}

#[test]
fn regression_defaults_without_configs_hint() {
    let d = diagnostics(
        "#[tile_kernel(grid = [1], threads = 4, defaults = [cpu = fast])] fn k(c: &mut Tensor<f32, (N,)>) {}",
    );
    assert_eq!(d.len(), 1);
    assert!(
        !d[0].hint.as_deref().unwrap_or("").trim_end().ends_with(':'),
        "{}",
        render(&d)
    );
}

#[test]
fn regression_allocation_inside_if() {
    let r = compiles(
        "#[tile_kernel(grid = [1], threads = 4)] fn k(a: &mut Tensor<f32, (N,)>) { if N > 4 { let mut s = alloc_shared::<f32>((4,)); fill(&mut s, 1.0); copy(&s, a.at_mut((0,))); } }",
    );
    assert!(
        r.is_err(),
        "an allocation under a runtime condition must be diagnosed"
    );
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
    let d = lowering_diagnostics(src, "gfx1100");
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
    // On the config's name in `configs = [..]` (line 1, after `small(B = 64), `).
    let s = m.span.start.start();
    assert_eq!((s.line, s.column), (1, 67), "{}", render(&d));
    // sm_90 has room for it: no error.
    let (attr, item) = split(src);
    let k = tilelang_codegen::compile(attr, item).unwrap();
    let t = tilelang_codegen::target::Target::by_arch("sm_90").unwrap();
    assert!(tilelang_codegen::launcher::lower(&k, &[t]).is_ok());
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
