//! The generator (issue 38, stage 1): deterministic, every generated kernel accepted by the
//! frontend, lowered and printed for every target with no diagnostic, and the constructs it
//! reaches.
//!
//! `DIFF_N` sets how many seeds (default 300), `DIFF_OFFSET` where they start (default 0, so CI
//! is reproducible), `DIFF_SEED` (hex) replays one.

use std::collections::BTreeSet;
use std::time::Instant;
use tilelang_difftest::compile;
use tilelang_difftest::constructs::{self, Construct};
use tilelang_difftest::gen;

/// The seeds of this run: `DIFF_SEED` alone, else `gen::seed_of(i)` for the `DIFF_N` (300)
/// values of `i` from `DIFF_OFFSET` (0).
fn seeds() -> Vec<u64> {
    if let Ok(s) = std::env::var("DIFF_SEED") {
        let s = s.trim_start_matches("0x");
        return vec![u64::from_str_radix(s, 16).expect("DIFF_SEED is hex")];
    }
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let (offset, n) = (var("DIFF_OFFSET", 0), var("DIFF_N", 300));
    (offset..offset + n).map(gen::seed_of).collect()
}

#[test]
fn deterministic() {
    for seed in seeds().into_iter().take(50) {
        let (a, b) = (gen::generate(seed), gen::generate(seed));
        assert_eq!(a, b, "seed {seed:016x}");
        assert_eq!(a.source(), b.source(), "seed {seed:016x}");
    }
    assert_ne!(gen::generate(1).source(), gen::generate(2).source());
}

#[test]
fn generated_kernels_are_valid() {
    let t = Instant::now();
    let seeds = seeds();
    let mut failures = Vec::new();
    let mut configs = 0;
    let mut bytes = 0;
    for &seed in &seeds {
        let p = gen::generate(seed);
        let src = p.source();
        match compile::check(&src).and_then(|k| compile::emit_all(&k).map(|b| (k, b))) {
            Ok((k, b)) => {
                configs += k.configs.len().max(1);
                bytes += b;
            }
            Err(e) => failures.push(format!(
                "seed {seed:016x} (replay: DIFF_SEED={seed:016x}) rejected:\n{e}\n--- source ---\n{src}"
            )),
        }
    }
    eprintln!(
        "{} kernels, {configs} configs, compiled, lowered and printed for every target ({} MB of \
         device source) in {:.1} s",
        seeds.len(),
        bytes >> 20,
        t.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} rejected:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn constructs() {
    let mut reached = BTreeSet::new();
    for seed in seeds() {
        if let Ok(k) = compile::to_ir(&gen::generate(seed).source()) {
            reached.extend(constructs::of(&k));
        }
    }
    eprintln!("reached: {reached:?}");
    if std::env::var("DIFF_SEED").is_ok() {
        return;
    }
    let missing: Vec<Construct> = constructs::stage1()
        .into_iter()
        .filter(|c| !reached.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "stage-1 constructs never generated: {missing:?}"
    );
}

/// What the generator does not draw yet, by name (`docs/design/difftest.md`, stage 3): nothing
/// now. The test below fails when one of these is generated (remove it here) and when anything
/// else of the language is not.
const NOT_YET: &[&str] = &[];

/// Whether `src` has `word` not inside a longer identifier (`max` is not in `reduce_max`).
fn has_word(src: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    src.match_indices(word).any(|(i, _)| {
        let before = src[..i].chars().next_back();
        let after = src[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Every builtin of the language (the frontend's own table), every key of the attribute and
/// the statement forms of `docs/language.md` appear in the generated kernels, but for
/// [`NOT_YET`]; a builtin or key added to the language fails this test until the generator
/// draws it (or it is listed above).
#[test]
fn the_generator_reaches_the_whole_language() {
    let sources: String = seeds()
        .into_iter()
        .map(|s| gen::generate(s).source())
        .collect();
    let forms = [
        "alloc_shared",
        "alloc_fragment",
        "alloc_local",
        "parallel",
        "serial",
        "pipelined",
        "if",
        "else",
        "let",
        "mut",
        "as",
        "at",
        "at_mut",
        "div_ceil",
    ];
    let names: Vec<&str> = tilelang_codegen::validate::builtin_names()
        .chain(tilelang_codegen::attr::KEYS.iter().copied())
        .chain(forms)
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !NOT_YET.contains(n) && !has_word(&sources, n))
        .collect();
    let reached: Vec<&str> = NOT_YET
        .iter()
        .copied()
        .filter(|n| has_word(&sources, n))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
    // Forms that are no word: a `gemm` operand read transposed.
    for form in ["gemm(&a_s.t(), ", "&b_s.t(), &mut"] {
        assert!(sources.contains(form), "never generated: `{form}`");
    }
    assert!(
        reached.is_empty(),
        "generated now, remove from NOT_YET: {reached:?}"
    );
    for n in NOT_YET {
        assert!(names.contains(n), "`{n}` is no name of the language");
    }
}

/// A kernel that stores an inexact math function's result compares that output within a
/// tolerance, and only such a kernel (else a false finding, or a blunter check than needed);
/// each a few ulps of the call's bound: at most 4½ bf16 ulps (2^-7 relative) of the largest
/// (e^8) times the largest scale (3), and 2 roundings' worth relative.
#[test]
fn inexact_math_is_compared_within_a_tolerance() {
    const INEXACT: [&str; 9] = [
        "exp", "exp2", "log", "tanh", "erf", "sigmoid", "pow", "sin", "cos",
    ];
    let mut with = 0;
    for seed in seeds() {
        let p = gen::generate(seed);
        let src = p.source();
        let calls = INEXACT.iter().any(|f| has_word(&src, f));
        assert_eq!(
            calls,
            !p.kernel.tols.is_empty(),
            "seed {seed:016x}: inexact calls {calls}, tolerances {:?}\n{src}",
            p.kernel.tols
        );
        for (name, t) in &p.kernel.tols {
            assert!(
                p.kernel.params.iter().any(|q| &q.name == name),
                "seed {seed:016x}: a tolerance for {name}, no such output"
            );
            assert!(
                t.atol > 0.0 && t.atol <= 4.5 * 2f64.powi(-7) * 8f64.exp() * 3.0 && t.rtol <= 0.035,
                "seed {seed:016x}: {name} {t:?}"
            );
        }
        with += calls as usize;
    }
    let n = seeds().len();
    assert!(
        n < 100 || with * 20 >= n,
        "only {with} of {n} kernels call one"
    );
}
