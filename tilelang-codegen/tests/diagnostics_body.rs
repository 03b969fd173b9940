//! The error catalogue, without trybuild: small invalid kernels go through
//! `tilelang_codegen::compile` and the diagnostics are checked one by one (message substring,
//! hint substring, and their number), including kernels with several independent errors, all of
//! which must be reported. With `proc-macro2`'s `span-locations` feature (a dev-dependency), a
//! few cases also check that the span starts at the offending token. The assertions are in
//! `common/diagnose.rs`.
//!
//! This file: a kernel's body, the statements the parser rejects and the tile model's rules. The
//! declaration's errors: `diagnostics_declaration.rs`.
//!
//! Tests named `regression_*` pin frontend bugs found by these tests and the fuzzer, now fixed.

mod common;

use common::diagnose::{compiles, diagnostics, expect, expect_range, expect_span, render, split};

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
fn gemm_operands_read_the_other_way_round() {
    // Q·Kᵀ written as `gemm(&q_s, &k_s, ..)`: with BN == D every value agrees, and `gemm`
    // would compute Q·K. The names say which operand is stored transposed.
    let src = r#"
#[tile_kernel(grid = [1], threads = 128, configs = [sq(BM = 64, BN = 64, D = 64)])]
fn k<const BM: usize, const BN: usize, const D: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut q_s = alloc_shared::<f16, (BM, D)>();
    let mut k_s = alloc_shared::<f16, (BN, D)>();
    let mut s = alloc_fragment::<f32, (BM, BN)>();
    gemm(&q_s, &k_s, &mut s);
    let mut at = alloc_shared::<f16, (D, BM)>();
    let mut v_s = alloc_shared::<f16, (D, BN)>();
    gemm(&at, &v_s, &mut s);
    let mut kt = alloc_shared::<f16, (D, BN)>();
    gemm(&q_s, &kt, &mut s);
}
"#;
    let d = expect(
        src,
        &[
            (
                "`gemm` reads B `k_s` (BN, D) as (K, N), so K = BN, but A `q_s` (BM, D) has K = D: `k_s` holds B the other way round",
                "(`s` (BM, BN)); write `&k_s.t()` to read `k_s` as stored",
            ),
            (
                "`gemm` reads A `at` (D, BM) as (M, K), so K = BM, but B `v_s` (D, BN) has K = D: `at` holds A the other way round",
                "write `&at.t()` to read `at` as stored",
            ),
        ],
    );
    expect_range(src, &d[0], "gemm(&q_s, &k_s, &mut s)", 0);
}

#[test]
fn gemm_operands_read_transposed() {
    // `.t()` reads an operand as stored: the kernel above, fixed, compiles; a `.t()` too many
    // is the same error the other way round.
    let src = r#"
#[tile_kernel(grid = [1], threads = 128, configs = [sq(BM = 64, BN = 64, D = 64)])]
fn k<const BM: usize, const BN: usize, const D: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut q_s = alloc_shared::<f16, (BM, D)>();
    let mut k_s = alloc_shared::<f16, (BN, D)>();
    let mut s = alloc_fragment::<f32, (BM, BN)>();
    gemm(&q_s, &k_s.t(), &mut s);
    let mut at = alloc_shared::<f16, (D, BM)>();
    let mut v_s = alloc_shared::<f16, (D, BN)>();
    gemm(&at.t(), &v_s, &mut s);
    gemm(&at.t(), &k_s.t(), &mut s);
}
"#;
    compiles(src).unwrap();
    expect(
        &src.replace("&v_s, &mut", "&v_s.t(), &mut"),
        &[(
            "`gemm` reads B `v_s.t()` (D, BN) as (N, K), so K = BN, but A `at.t()` (D, BM) has K = D: `v_s` holds B the other way round",
            "write `&v_s` to read `v_s` as stored",
        )],
    );
    // Per config, with literal shapes that agree both ways round only in the right one.
    let lit = r#"
#[tile_kernel(grid = [1], threads = 128, configs = [a(BM = 16, BK = 32, X = 32), b(BM = 16, BK = 32, X = 16)])]
fn k<const BM: usize, const BK: usize, const X: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BM, X)>();
    let mut acc = alloc_fragment::<f32, (BM, BM)>();
    gemm(&a_s, &b_s.t(), &mut acc);
}
"#;
    expect(
        lit,
        &[(
            "in config `b`: `gemm` shapes do not agree: A is (16, 32), B is (16, 16) stored transposed, C is (16, 16)",
            "`&b.t()`: stored (N, K)",
        )],
    );
}

#[test]
fn transposed_reads_only_on_gemm_operands() {
    let src = r#"
#[tile_kernel(grid = [1], threads = 128, configs = [c(T = 16)])]
fn k<const T: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut a = alloc_shared::<f16, (T, T)>();
    let mut acc = alloc_fragment::<f32, (T, T)>();
    gemm(&a, &a, &mut acc.t());
    let x = a.t();
    gemm(&a, &a.t(1), &mut acc);
}
"#;
    // What the parser rejects.
    expect(
        src,
        &[
            (
                "only `gemm`'s operands A and B can be read transposed",
                "store the accumulator as (M, N) and write `&mut acc`",
            ),
            (
                "`.t()` marks an operand of `gemm` read transposed, borrowed in the call",
                "write `gemm(&a, &b.t(), &mut c)`",
            ),
            (
                "`.t()` applies to a tile buffer and takes no arguments",
                "write `&tile.t()`",
            ),
        ],
    );
    // What the checker rejects.
    let src = r#"
#[tile_kernel(grid = [1], threads = 128, configs = [c(T = 16)])]
fn k<const T: usize>(c: &mut Tensor<f32, (N,)>) {
    let mut a = alloc_shared::<f16, (T, T)>();
    let mut acc = alloc_fragment::<f32, (T, T)>();
    let mut r = alloc_fragment::<f32, (T,)>();
    copy(&a.t(), &mut acc);
    let y = &a.t();
    reduce_sum(&a.t(), &mut r, 1);
}
"#;
    expect(
        src,
        &[
            ("`.t()` marks an operand of `gemm`, not", "write `&a`"),
            (
                "`&a.t()` can only be passed to `gemm` as A or B",
                "swapped indices",
            ),
            ("`.t()` marks an operand of `gemm`, not", "write `&a`"),
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
            ("in config `bad`: `gemm` shapes do not agree: A is (16, 8), B is (16, 16), C is (16, 16)", "A is (M, K) (`&a.t()`: stored (K, M)), B is (K, N)"),
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
fn k(c: &mut Tensor<f32, (N,)>, b: &mut Tensor<u8, (N,)>) {
    let mut f = alloc_fragment::<f32>((4,));
    for i in parallel(4) {
        atomic_add(&mut f[i], 1.0);
        atomic_add(c[i], 1.0);
        atomic_add(&mut c[i], 1u8);
        atomic_add(&mut b[i], 1u8);
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
            (
                "`atomic_add` on a u8 element: NVIDIA GPUs have no 8-bit atomic add",
                "accumulate into a u32 (or i32) tensor or buffer",
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
// Regressions: frontend bugs found while writing the tests above, fixed since; each test keeps
// its fix. Overflowing constants, names the generated code reserves and allocations under a
// runtime condition are diagnosed (never a panic, nor generated code that does not compile);
// valid literals and rank-dropping copies are accepted; one root cause gives one diagnostic
// while independent errors (a config's) are all reported; the fallback expansion of an erring
// `r#` kernel parses; hints do not mislead.

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
