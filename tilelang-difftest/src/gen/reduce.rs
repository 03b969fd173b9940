//! The reduction skeleton: `reduce_sum` or `reduce_max` of tiles along either dimension.
//!
//! Rows (`dim` 1; `dim` 0 is the same over columns, the block at `c0`, the loop over rows):
//!
//! ```text
//! let r0 = block_idx(0) * BM;
//! let mut a = alloc_<scope>::<R, (BM, BN)>();  let mut part = ..(BM,); let mut acc = ..(BM,);
//! clear(&mut acc) / fill(&mut acc, 0 or lowest);
//! for k in serial(0, N.div_ceil(BN)) / pipelined(N.div_ceil(BN), S) {
//!     copy(x.at((r0, k * BN)), &mut a);
//!     reduce_<op>(&a, &mut part, 1);
//!     [for (i, j) in parallel(BM, BN) { o[(i, j)] = f(a[(i, j)], part[i]); }   a broadcast
//!      copy(&o, y.at_mut((r0, k * BN)));]
//!     for i in parallel(BM) { acc[i] += part[i]; }   or acc[i] = max(acc[i], part[i])
//! }
//! copy(&acc, z.at_mut((r0,)));
//! ```
//!
//! Without the broadcast this is the form the lowering keeps as one running value per row
//! (`docs/language.md`); with it, the general one. Every output element is written.
//!
//! Exactness: a reduction's order is the lowering's, so a sum is drawn only in a dtype that
//! holds every partial sum exactly (f32, f64, and the integers, which wrap: at most 256 inputs,
//! each at most 255 in magnitude); a maximum in any. The reduced tile is what `copy` loaded (no
//! -0.0, which a maximum would order arbitrarily against +0.0).

use super::ast::{BinOp, Expr, Func, Kernel, LitForm, Scope, Stmt, Ty};
use super::config::{self, ConstPool};
use super::expr::Env;
use super::rng::Rng;
use super::skeleton::{buf, element, names, region, store, tensor, threads};

/// The dtypes a sum is exact in, whatever its order.
const SUM_TYPES: [Ty; 5] = [Ty::F32, Ty::F64, Ty::I32, Ty::U32, Ty::U8];

/// The start of a running maximum: below every input (integers' inputs are at least -32).
fn lowest(t: Ty) -> Expr {
    match t {
        Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64 => Expr::Float(-1000.0, t, LitForm::Typed),
        Ty::I32 => Expr::Int(-1000, t, LitForm::Typed),
        _ => Expr::Int(0, t, LitForm::Typed),
    }
}

fn alloc(rng: &mut Rng, name: &str, scope: Scope, dtype: Ty, shape: &[&str]) -> Stmt {
    Stmt::Alloc {
        name: name.into(),
        scope,
        dtype,
        shape: names(shape),
        arg_form: rng.chance(1, 4),
    }
}

fn scope(rng: &mut Rng) -> Scope {
    if rng.chance(1, 2) {
        Scope::Shared
    } else {
        Scope::Fragment
    }
}

/// A reduction kernel.
pub fn reduce(rng: &mut Rng, name: String) -> Kernel {
    let op = if rng.chance(1, 2) { "sum" } else { "max" };
    let r = if op == "sum" {
        rng.pick(&SUM_TYPES)
    } else {
        element(rng)
    };
    let dim = rng.below(2);
    let pipelined = rng.chance(1, 3);
    let broadcast = rng.chance(1, 2);
    let mut pools = vec![
        ConstPool {
            name: "BM",
            fast: &[4, 8, 16, 64],
            odd: &[1, 3, 5, 24],
        },
        ConstPool {
            name: "BN",
            fast: &[64, 128, 256],
            odd: &[7, 24, 40, 100],
        },
    ];
    let mut consts = names(&["BM", "BN"]);
    let threads = threads(rng, &mut consts, &mut pools);
    if pipelined {
        pools.push(ConstPool {
            name: "S",
            fast: &[2, 3],
            odd: &[1, 4],
        });
        consts.push("S".into());
    }
    let (x_ty, out_ty) = (element(rng), element(rng));
    let mut params = vec![tensor("x", x_ty, &["M", "N"], false)];
    // The block's rows (dim 1) or columns (dim 0); the loop walks the other dimension.
    let (base, tile, step, sym, walked, v) = if dim == 1 {
        ("r0", "BM", "BN", "M", "N", "i")
    } else {
        ("c0", "BN", "BM", "N", "M", "j")
    };
    let k_step = Expr::bin(BinOp::Mul, Expr::name("k"), Expr::name(step));
    let at = if dim == 1 {
        vec![Expr::name("r0"), k_step]
    } else {
        vec![k_step, Expr::name("c0")]
    };
    let mut body = vec![Stmt::Let {
        name: base.into(),
        mutable: false,
        ty: None,
        value: Expr::bin(BinOp::Mul, Expr::BlockIdx(0), Expr::name(tile)),
    }];
    let (a_scope, part_scope, acc_scope) = (scope(rng), scope(rng), scope(rng));
    body.push(alloc(rng, "a", a_scope, r, &["BM", "BN"]));
    body.push(alloc(rng, "part", part_scope, r, &[tile]));
    body.push(alloc(rng, "acc", acc_scope, r, &[tile]));
    body.push(match op {
        "sum" if rng.chance(1, 2) => Stmt::Clear("acc".into()),
        "sum" => Stmt::Fill {
            buf: "acc".into(),
            value: Expr::Int(0, r, LitForm::Untyped),
        },
        _ => Stmt::Fill {
            buf: "acc".into(),
            value: lowest(r),
        },
    });
    let mut tols = Vec::new();
    let mut each = vec![
        Stmt::Copy {
            src: region("x", &at),
            dst: buf("a"),
        },
        Stmt::Reduce {
            op,
            src: "a".into(),
            dst: "part".into(),
            dim,
        },
    ];
    if broadcast {
        let mut env = Env::default();
        env.add(Expr::load("a", &["i", "j"]), r, false);
        env.add(Expr::load("part", &[v]), r, false);
        for v in ["i", "j"] {
            env.add(Expr::name(v), Ty::Index, false);
        }
        body.push(alloc(rng, "o", Scope::Fragment, out_ty, &["BM", "BN"]));
        let mut inner = Vec::new();
        let index = [Expr::name("i"), Expr::name("j")];
        // `o` goes out whole to `y` (its dtype), nothing else reads it.
        store(
            rng,
            &env,
            "o",
            &index,
            out_ty,
            false,
            Some(&mut tols),
            &mut inner,
        );
        for (name, _) in &mut tols {
            *name = "y".into();
        }
        each.push(Stmt::Parallel {
            vars: names(&["i", "j"]),
            extents: names(&["BM", "BN"]),
            body: inner,
        });
        params.push(tensor("y", out_ty, &["M", "N"], true));
        each.push(Stmt::Copy {
            src: buf("o"),
            dst: region("y", &at),
        });
    }
    let (acc_v, part_v) = (Expr::load("acc", &[v]), Expr::load("part", &[v]));
    each.push(Stmt::Parallel {
        vars: names(&[v]),
        extents: names(&[tile]),
        body: vec![Stmt::Store {
            target: "acc".into(),
            index: vec![Expr::name(v)],
            op: (op == "sum").then_some(BinOp::Add),
            value: if op == "sum" {
                part_v
            } else {
                Expr::Call(Func::Max, vec![acc_v, part_v])
            },
        }],
    });
    body.push(Stmt::Loop {
        var: "k".into(),
        start: Expr::idx(0),
        end: Expr::DivCeil(Box::new(Expr::name(walked)), Box::new(Expr::name(step))),
        stages: pipelined.then(|| "S".to_string()),
        body: each,
    });
    params.push(tensor("z", r, &[sym], true));
    body.push(Stmt::Copy {
        src: buf("acc"),
        dst: region("z", &[Expr::name(base)]),
    });
    let (rb, ob) = (r.bytes() as u64, out_ty.bytes() as u64);
    let configs = config::draw(rng, &pools, |v| {
        let (bm, bn) = (v[0], v[1]);
        let threads = match &threads {
            super::ast::Threads::Const(_) => v[2],
            super::ast::Threads::Literal(t) => *t,
        };
        let stages = if pipelined { v[v.len() - 1] } else { 1 };
        let tile = bm * bn;
        let out = if broadcast { tile * ob } else { 0 };
        let shared = tile * rb * stages + out + 2 * bm.max(bn) * rb;
        let regs =
            (tile.div_ceil(threads) * rb.div_ceil(4)) * 2 + (tile * ob).div_ceil(threads * 4);
        shared <= 48 * 1024 && regs <= 96
    });
    let defaults = config::defaults(rng, &configs);
    Kernel {
        name,
        grid: vec![Expr::DivCeil(
            Box::new(Expr::name(sym)),
            Box::new(Expr::name(tile)),
        )],
        threads,
        consts,
        configs,
        defaults,
        params,
        body,
        requires: Vec::new(),
        occupancy: None,
        tols,
    }
}

/// The dtypes an atomic sum is drawn in: the integers (which wrap), and f32 and f64 adding
/// inputs (every order exact). Not u8, which has no atomic add.
const ATOMIC_TYPES: [Ty; 4] = [Ty::F32, Ty::F64, Ty::I32, Ty::U32];

/// Sums by `atomic_add`: every element of `x` added into its row, of a global tensor (`z`, in
/// and out: it starts as an input) from a 2-D grid of tiles, or of a shared buffer that a
/// block's `serial` loop over the columns fills and then copies out:
///
/// ```text
/// let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
/// for (i, j) in parallel(BM, BN) {
///     let (r, c) = (r0 + i, c0 + j);
///     if r < M && c < N { atomic_add(&mut z[r], v); }      v: x[(r, c)] as R, or (integers)
/// }                                                        any expression of it
/// ```
pub fn atomic(rng: &mut Rng, name: String) -> Kernel {
    let r = rng.pick(&ATOMIC_TYPES);
    let shared = rng.chance(1, 2);
    let mut pools = vec![
        ConstPool {
            name: "BM",
            fast: &[2, 4, 8],
            odd: &[1, 3, 5],
        },
        ConstPool {
            name: "BN",
            fast: &[64, 128, 256],
            odd: &[7, 24, 40],
        },
    ];
    let mut consts = names(&["BM", "BN"]);
    let threads = threads(rng, &mut consts, &mut pools);
    let x_ty = element(rng);
    let mut params = vec![tensor("x", x_ty, &["M", "N"], false)];
    let mut z = tensor("z", r, &["M"], true);
    if let super::ast::ParamKind::Tensor { read, .. } = &mut z.kind {
        *read = !shared;
    }
    params.push(z);
    let (rc, x_rc) = (["r", "c"], Expr::load("x", &["r", "c"]));
    let value = if r.is_float() {
        Expr::Cast(Box::new(x_rc), r)
    } else {
        let mut env = Env::default();
        env.add(x_rc, x_ty, false);
        for v in ["i", "j"] {
            env.add(Expr::name(v), Ty::Index, false);
        }
        super::expr::ExprGen { rng, env: &env }.value(r, 2, false).e
    };
    let (target, index) = if shared {
        ("s", Expr::name("i"))
    } else {
        ("z", Expr::name("r"))
    };
    let c_of = if shared {
        Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, Expr::name("k"), Expr::name("BN")),
            Expr::name("j"),
        )
    } else {
        Expr::bin(BinOp::Add, Expr::name("c0"), Expr::name("j"))
    };
    let guard = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Lt, Expr::name("r"), Expr::name("M")),
        Expr::bin(BinOp::Lt, Expr::name("c"), Expr::name("N")),
    );
    let each = Stmt::Parallel {
        vars: names(&["i", "j"]),
        extents: names(&["BM", "BN"]),
        body: vec![
            Stmt::LetTuple(vec![
                (
                    rc[0].into(),
                    Expr::bin(BinOp::Add, Expr::name("r0"), Expr::name("i")),
                ),
                (rc[1].into(), c_of),
            ]),
            Stmt::If {
                cond: guard,
                then: vec![Stmt::Atomic {
                    target: target.into(),
                    index: vec![index],
                    value,
                }],
                els: vec![],
            },
        ],
    };
    let mut body = Vec::new();
    let grid;
    if shared {
        grid = vec![Expr::DivCeil(
            Box::new(Expr::name("M")),
            Box::new(Expr::name("BM")),
        )];
        body.push(Stmt::Let {
            name: "r0".into(),
            mutable: false,
            ty: None,
            value: Expr::bin(BinOp::Mul, Expr::BlockIdx(0), Expr::name("BM")),
        });
        body.push(alloc(rng, "s", Scope::Shared, r, &["BM"]));
        body.push(Stmt::Clear("s".into()));
        body.push(Stmt::Loop {
            var: "k".into(),
            start: Expr::idx(0),
            end: Expr::DivCeil(Box::new(Expr::name("N")), Box::new(Expr::name("BN"))),
            stages: None,
            body: vec![each],
        });
        body.push(Stmt::Copy {
            src: buf("s"),
            dst: region("z", &[Expr::name("r0")]),
        });
    } else {
        grid = vec![
            Expr::DivCeil(Box::new(Expr::name("N")), Box::new(Expr::name("BN"))),
            Expr::DivCeil(Box::new(Expr::name("M")), Box::new(Expr::name("BM"))),
        ];
        body.push(Stmt::LetTuple(vec![
            (
                "r0".into(),
                Expr::bin(BinOp::Mul, Expr::BlockIdx(1), Expr::name("BM")),
            ),
            (
                "c0".into(),
                Expr::bin(BinOp::Mul, Expr::BlockIdx(0), Expr::name("BN")),
            ),
        ]));
        body.push(each);
    }
    let configs = config::draw(rng, &pools, |_| true);
    let defaults = config::defaults(rng, &configs);
    Kernel {
        name,
        grid,
        threads,
        consts,
        configs,
        defaults,
        params,
        body,
        requires: Vec::new(),
        occupancy: None,
        tols: Vec::new(),
    }
}
