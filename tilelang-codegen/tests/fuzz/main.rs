//! Property test: the frontend and the GPU lowering never panic, whatever tokens they are given.
//!
//! The corpus is a set of valid kernels written in `corpus.rs` (together they use every construct
//! of the kernel language) plus every `#[tile_kernel]` function found in `kernels/src/*.rs` at
//! test time. Each mutant applies 1 to 3 token-level mutations to one corpus kernel (attribute or
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
//! `FUZZ_N=<count>` changes the count (default 5000), `FUZZ_OFFSET=<i>` the first `i` (default
//! 0: runs beyond CI's share start at fresh seeds), `FUZZ_THREADS` the threads (default up to
//! 4) and `FUZZ_KERNELS_SRC` where the tutorial kernels are read from.
//!
//! The process runs under a memory cap (`cap.rs`): a mutant that makes the compiler ask for a
//! block over 256 MiB, or the process hold over 4 GiB, aborts the run naming its seed.
//!
//! Cost: in a dev build almost all the time is `syn` parsing unoptimised (about 5 ms of CPU per
//! mutant); the mutants run on up to 4 threads.
//!
//! The mutations are in `mutate.rs`; running an input and checking the properties, in `check.rs`.

mod cap;
mod check;
mod corpus;
mod mutate;

use check::{catching, check_one, Tally};
use corpus::{builtin_corpus, file_corpus, Kernel};
use mutate::{corpus_idents, mix, mutant, Rng};
use proc_macro2::TokenStream;
use std::str::FromStr;
use std::time::Instant;

const BASE_SEED: u64 = 0x7115_1A96_0000_0000;
/// Mutants per worker thread (see `run_batch`).
const BATCH: usize = 20_000;

#[global_allocator]
static ALLOC: cap::Capped = cap::Capped;

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
        None => {
            let first: u64 = std::env::var("FUZZ_OFFSET")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            (first..first + n)
                .map(|i| mix(BASE_SEED.wrapping_add(i)))
                .collect()
        }
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
    // Token streams are not `Send`: the threads get the corpus as text.
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
                    // proc-macro2's fallback lexer records every text it lexes in a thread-local
                    // source map (for span locations), freed only when the thread exits: a fresh
                    // thread per batch keeps a run of millions of mutants at a flat footprint.
                    let mut t = Tally::default();
                    for batch in seeds.chunks(BATCH) {
                        let bt = std::thread::scope(|s| {
                            s.spawn(|| run_batch(batch, texts, idents, only))
                                .join()
                                .unwrap()
                        });
                        t.merge(bt);
                    }
                    t
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for tt in tallies {
        t.merge(tt);
    }
    let (distinct, dump) = (t.parsed.len(), std::mem::take(&mut t.dump));
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

/// Runs the mutants of `seeds` (replaying one verbosely with `only`) on this thread.
fn run_batch(
    seeds: &[u64],
    texts: &[(String, String, String)],
    idents: &[String],
    only: Option<u64>,
) -> Tally {
    // Token streams are not `Send`: each thread re-lexes the corpus from its text.
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
            match catching(|| tilelang_codegen::compile(attr.clone(), item.clone())) {
                Ok(Ok(_)) => eprintln!("  => Ok"),
                Ok(Err(d)) => d.iter().for_each(|d| eprintln!("  => {}", d.text())),
                Err(p) => eprintln!("  => panic: {p}"),
            }
        }
        cap::running(Some(seed));
        check_one(
            &mut t,
            seed,
            attr,
            item,
            &what,
            only.is_some() || seed % 8 == 0,
        );
        cap::running(None);
    }
    t
}
