//! Per-config checks: `threads`, the occupancy request, buffer shapes, `parallel` extents,
//! pipeline stages, and the shapes of copies, GEMMs and reductions, each evaluated under every
//! config's constants.

use crate::attr::KernelAttr;
use crate::ctxt::{Ctxt, Range};
use crate::ir::visit::walk;
use crate::ir::{self, *};

pub(super) fn check_threads(cx: &mut Ctxt, threads: &Expr, cfg: &Config, span: Range) {
    let label = format!("in config `{}`", cfg.name);
    match eval_const(threads, &cfg.values) {
        Some(t) if (1..=1024).contains(&t) => {}
        Some(t) => cx.error_hint(
            span,
            format!("{label}: `threads` is {t}, outside 1..=1024"),
            "pick a block size between 1 and 1024 threads",
        ),
        None => cx.error_hint(
            threads.span,
            format!("{label}: `threads` does not evaluate to a constant"),
            "use a literal or a const generic",
        ),
    }
}

fn check_occupancy(cx: &mut Ctxt, occupancy: Option<&ir::Occupancy>, cfg: &Config) {
    let Some(o) = occupancy else { return };
    let (key, e, range, hint) = match o {
        ir::Occupancy::MinBlocks(e) => (
            "min_blocks",
            e,
            1..=32,
            "ask for 1 to 32 resident blocks per multiprocessor",
        ),
        ir::Occupancy::MaxRegisters(e) => (
            "max_registers",
            e,
            16..=255,
            "cap registers per thread between 16 and 255",
        ),
    };
    match eval_const(e, &cfg.values) {
        Some(v) if range.contains(&v) => {}
        Some(v) => cx.error_hint(
            e.span,
            format!(
                "in config `{}`: `{key}` is {v}, outside {}..={}",
                cfg.name,
                range.start(),
                range.end()
            ),
            hint,
        ),
        None => cx.error_hint(
            e.span,
            format!(
                "in config `{}`: `{key}` does not evaluate to a constant",
                cfg.name
            ),
            "use a literal or a const generic",
        ),
    }
}

/// Per-config checks: every constant the kernel uses is evaluated under each config.
pub(super) fn check_configs(cx: &mut Ctxt, k: &ir::Kernel, attr: &KernelAttr) {
    for (ci, cfg) in k.configs.iter().enumerate() {
        let vals = &cfg.values;
        let cfg_span = attr
            .configs
            .get(ci)
            .map(|c| c.name.span())
            .unwrap_or(k.name.span());
        let label = format!("in config `{}`", cfg.name);
        check_threads(cx, &k.threads, cfg, cfg_span.into());
        check_occupancy(cx, k.occupancy.as_ref(), cfg);
        let shape = |b: BufId| -> Vec<Option<i128>> {
            k.buffers[b]
                .shape
                .iter()
                .map(|d| eval_const(d, vals))
                .collect()
        };
        for b in &k.buffers {
            let dims: Vec<Option<i128>> = b.shape.iter().map(|d| eval_const(d, vals)).collect();
            for (d, v) in b.shape.iter().zip(&dims) {
                match *v {
                    Some(v) if v > 0 && v <= MAX_TILE_ELEMENTS => {}
                    Some(v) => cx.error_hint(
                        d.span,
                        format!("{label}: dimension of `{}` is {v}", b.name),
                        format!("buffer dimensions must be between 1 and {MAX_TILE_ELEMENTS}"),
                    ),
                    // (Reported where it was written.)
                    None if !is_const(d) => {}
                    None => cx.error_hint(
                        d.span,
                        format!("{label}: dimension of `{}` does not evaluate", b.name),
                        "check for division by zero, a shift by 64 or more, or an overflow of usize's 63-bit range",
                    ),
                }
            }
            check_elements(cx, &label, &format!("buffer `{}`", b.name), b.span, &dims);
        }
        walk(&k.body, &mut |s| match &s.kind {
            StmtKind::For {
                kind: LoopKind::Parallel { extents },
                ..
            } => {
                let dims: Vec<Option<i128>> = extents.iter().map(|e| eval_const(e, vals)).collect();
                // (An extent that is not a constant at all was reported where it was written.)
                for (e, v) in extents.iter().zip(&dims).filter(|(e, _)| is_const(e)) {
                    match *v {
                        Some(v) if v > 0 && v <= MAX_TILE_ELEMENTS => {}
                        v => cx.error_hint(
                            e.span,
                            format!(
                                "{label}: `parallel` extent is {}",
                                v.map_or(
                                    "not computable (division by zero or overflow)".to_string(),
                                    |v| v.to_string()
                                )
                            ),
                            format!("extents must be constants between 1 and {MAX_TILE_ELEMENTS}"),
                        ),
                    }
                }
                check_elements(cx, &label, "`parallel` loop", s.span, &dims);
            }
            StmtKind::For {
                kind: LoopKind::Pipelined { stages, .. },
                ..
            } => match eval_const(stages, vals) {
                Some(v) if (1..=8).contains(&v) => {}
                _ if !is_const(stages) => {}
                v => cx.error_hint(
                    stages.span,
                    format!(
                        "{label}: pipeline stages is {}",
                        v.map_or("not computable".to_string(), |v| v.to_string())
                    ),
                    "use 1 to 8 stages",
                ),
            },
            StmtKind::Copy {
                src: Tile::Buffer(a),
                dst: Tile::Buffer(b),
            } if shape(*a) != shape(*b) => {
                cx.error_hint(
                    s.span,
                    format!(
                        "{label}: `copy` between buffers of different shapes ({} vs {})",
                        fmt_shape(&shape(*a)),
                        fmt_shape(&shape(*b))
                    ),
                    "buffer-to-buffer copies need equal shapes",
                );
            }
            StmtKind::Gemm { a, b, c, ta, tb } => {
                let (sa, sb, sc) = (shape(*a), shape(*b), shape(*c));
                if sa.len() == 2 && sb.len() == 2 && sc.len() == 2 {
                    let (m, n, k, kb) = crate::ir::gemm_mnkk(&sa, &sb, *ta, *tb);
                    if k != kb || m != sc[0] || n != sc[1] {
                        let t = |x: bool| if x { " stored transposed" } else { "" };
                        cx.error_hint(
                            s.span,
                            format!(
                                "{label}: `gemm` shapes do not agree: A is {}{}, B is {}{}, C is {}",
                                fmt_shape(&sa),
                                t(*ta),
                                fmt_shape(&sb),
                                t(*tb),
                                fmt_shape(&sc)
                            ),
                            "A is (M, K) (`&a.t()`: stored (K, M)), B is (K, N) (`&b.t()`: \
                             stored (N, K)) and the accumulator is (M, N)",
                        );
                    }
                }
            }
            StmtKind::Reduce { src, dst, dim, .. } => {
                let (ss, sd) = (shape(*src), shape(*dst));
                let mut want = ss.clone();
                want.remove(*dim);
                if want.is_empty() {
                    want.push(Some(1));
                }
                if want != sd {
                    cx.error_hint(s.span, format!("{label}: reducing {} along dimension {dim} gives {}, but the destination is {}", fmt_shape(&ss), fmt_shape(&want), fmt_shape(&sd)), "make the destination's shape the source's without the reduced dimension");
                }
            }
            _ => {}
        });
    }
}

/// The most elements a buffer or a `parallel` loop may have (2^24), in each dimension and in
/// all: a block's tile, whose element index (and a GPU thread's register loop over it) fits a
/// 32-bit integer with room to spare.
pub const MAX_TILE_ELEMENTS: i128 = 1 << 24;

/// The product of `dims` (already checked one by one) is at most [`MAX_TILE_ELEMENTS`].
fn check_elements(cx: &mut Ctxt, label: &str, what: &str, span: Range, dims: &[Option<i128>]) {
    let Some(dims) = dims.iter().copied().collect::<Option<Vec<i128>>>() else {
        return;
    };
    if dims.iter().any(|&d| d <= 0 || d > MAX_TILE_ELEMENTS) {
        return;
    }
    let total = dims.iter().product::<i128>();
    if total > MAX_TILE_ELEMENTS {
        cx.error_hint(
            span,
            format!("{label}: {what} has {total} elements ({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" × ")),
            format!("a tile holds at most {MAX_TILE_ELEMENTS} elements: split the work over more blocks (the grid) or a `serial` loop"),
        );
    }
}

fn fmt_shape(s: &[Option<i128>]) -> String {
    format!(
        "({})",
        s.iter()
            .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
