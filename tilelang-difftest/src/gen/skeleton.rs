//! Skeletons (the tile one is `tiles.rs`): the shape of a kernel (grid, parameters, loops, tiles, copies), filled with typed
//! random code from [`super::expr`]. Each skeleton is valid by construction:
//!
//! * **Elementwise** (rank 1-3): grid `[N.div_ceil(BN), M.div_ceil(BM), L.div_ceil(BL)]`, one
//!   `parallel` loop over the block's elements, every tensor access under the tail guard
//!   `if r < M && c < N` (or nested `if`s), each output element stored exactly once (an
//!   `if`/`else` stores it in both arms); an in-out tensor is read at its own element and
//!   stored last.
//! * **Tiles**: 2-D tiles at `(r0, c0)` of `(M, N)` tensors, or of `(L, M, N)` tensors with
//!   the batch in the grid (rank-dropping copies); tails wherever the shapes end; `copy` in,
//!   buffer-to-buffer copies with a dtype change, a row vector read as `w[j]` and a column
//!   vector as `h[i]`, element-wise loops over the tile in its own order or transposed, `copy`
//!   out. Every buffer is fully written (`copy`, `fill`, `clear` or a loop over all of it)
//!   before it is read.

use super::ast::{BinOp, Expr, Kernel, Param, ParamKind, Stmt, Threads, Ty};
use super::config::{self, ConstPool};
use super::expr::{Env, ExprGen};
use super::rng::Rng;

const THREADS: ConstPool = ConstPool {
    name: "THREADS",
    fast: &[128, 256],
    odd: &[32, 64, 96, 33],
};

/// Fresh names (`v0`, `v1`, ..) for `let`s.
pub(super) struct Names(pub(super) usize);

impl Names {
    pub(super) fn fresh(&mut self) -> String {
        self.0 += 1;
        format!("v{}", self.0 - 1)
    }
}

pub(super) fn tensor(name: &str, dtype: Ty, dims: &[&str], mutable: bool) -> Param {
    Param {
        name: name.into(),
        kind: ParamKind::Tensor {
            dtype,
            dims: dims.iter().map(|d| d.to_string()).collect(),
            mutable,
        },
    }
}

pub(super) fn names(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|x| x.to_string()).collect()
}

pub(super) fn element(rng: &mut Rng) -> Ty {
    rng.pick(&Ty::ELEMENTS)
}

/// `0..=2` scalar parameters, added to `env`.
pub(super) fn scalars(rng: &mut Rng, params: &mut Vec<Param>, env: &mut Env, max: usize) {
    for k in 0..rng.below(max + 1) {
        let ty = element(rng);
        let name = format!("s{k}");
        env.add(Expr::name(&name), ty, false);
        params.push(Param {
            name,
            kind: ParamKind::Scalar(ty),
        });
    }
}

/// `0..=max` `let`s of random values, each added to `env`; sometimes typed, sometimes `mut` and
/// assigned again.
pub(super) fn lets(
    rng: &mut Rng,
    env: &mut Env,
    fresh: &mut Names,
    max: usize,
    out: &mut Vec<Stmt>,
) {
    for _ in 0..rng.below(max + 1) {
        let ty = element(rng);
        let name = fresh.fresh();
        let v = ExprGen { rng, env }.value(ty, 3, false);
        let mutable = rng.chance(1, 5);
        let typed = rng.chance(1, 4);
        out.push(Stmt::Let {
            name: name.clone(),
            mutable,
            ty: typed.then_some(ty),
            value: v.e,
        });
        let mut prod = v.prod;
        if mutable {
            let w = ExprGen { rng, env }.value(ty, 2, false);
            prod |= w.prod;
            out.push(Stmt::Assign(name.clone(), w.e));
        }
        env.add(Expr::name(&name), ty, prod);
    }
}

/// Stores `target[index]` once: directly, or in both arms of an `if`; with `compound`,
/// sometimes as `+=`, `-=` or `*=` (the old value is an exact input). Returns whether the
/// stored value may be a float product.
pub(super) fn store(
    rng: &mut Rng,
    env: &Env,
    target: &str,
    index: &[Expr],
    dtype: Ty,
    compound: bool,
    out: &mut Vec<Stmt>,
) -> bool {
    let one = |rng: &mut Rng| -> (Stmt, bool) {
        let op = if compound && rng.chance(1, 2) {
            Some(rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]))
        } else {
            None
        };
        let no_prod = dtype.is_float() && matches!(op, Some(BinOp::Add | BinOp::Sub));
        let v = ExprGen { rng, env }.value(dtype, 3, no_prod);
        let prod = v.prod || (dtype.is_float() && op == Some(BinOp::Mul));
        let st = Stmt::Store {
            target: target.into(),
            index: index.to_vec(),
            op,
            value: v.e,
        };
        (st, prod)
    };
    if rng.chance(1, 3) {
        let cond = ExprGen { rng, env }.cond(2);
        let (a, pa) = one(rng);
        let (b, pb) = one(rng);
        out.push(Stmt::If {
            cond,
            then: vec![a],
            els: vec![b],
        });
        pa || pb
    } else {
        let (s, p) = one(rng);
        out.push(s);
        p
    }
}

pub(super) fn threads(
    rng: &mut Rng,
    consts: &mut Vec<String>,
    pools: &mut Vec<ConstPool>,
) -> Threads {
    if rng.chance(3, 4) {
        consts.push(THREADS.name.into());
        pools.push(THREADS);
        Threads::Const(THREADS.name.into())
    } else {
        Threads::Literal(rng.pick(&[64, 128, 256]))
    }
}

/// An element-wise kernel over tensors of rank `rank` (1 to 3).
pub fn elementwise(rng: &mut Rng, name: String, rank: usize) -> Kernel {
    let syms = &["L", "M", "N"][3 - rank..];
    let vars = &["k", "i", "j"][3 - rank..];
    let idx = &["l", "r", "c"][3 - rank..];
    let bases = &["l0", "r0", "c0"][3 - rank..];
    let mut pools: Vec<ConstPool> = match rank {
        1 => vec![ConstPool {
            name: "BLOCK",
            fast: &[256, 512, 1024, 2048],
            odd: &[7, 37, 100, 129],
        }],
        2 => vec![
            ConstPool {
                name: "BM",
                fast: &[1, 2, 4, 8],
                odd: &[3, 5],
            },
            ConstPool {
                name: "BN",
                fast: &[64, 128, 256],
                odd: &[7, 24, 40],
            },
        ],
        _ => vec![
            ConstPool {
                name: "BL",
                fast: &[1, 2],
                odd: &[3],
            },
            ConstPool {
                name: "BM",
                fast: &[1, 2, 4],
                odd: &[3],
            },
            ConstPool {
                name: "BN",
                fast: &[64, 128],
                odd: &[7, 24],
            },
        ],
    };
    // A kernel without const generics: literal extents and threads.
    let literal = rank == 1 && rng.chance(1, 6);
    let tiles: Vec<String> = if literal {
        pools.clear();
        vec![rng.pick(&[64u64, 256, 1000]).to_string()]
    } else {
        pools.iter().map(|p| p.name.to_string()).collect()
    };
    let mut consts: Vec<String> = tiles.iter().filter(|_| !literal).cloned().collect();
    let threads = if literal {
        Threads::Literal(rng.pick(&[64, 128, 256]))
    } else {
        threads(rng, &mut consts, &mut pools)
    };
    let grid: Vec<Expr> = (0..rank)
        .rev()
        .map(|d| {
            let tile = if tiles[d].parse::<i64>().is_ok() {
                Expr::idx(tiles[d].parse().unwrap())
            } else {
                Expr::name(&tiles[d])
            };
            Expr::DivCeil(Box::new(Expr::name(syms[d])), Box::new(tile))
        })
        .collect();

    let mut params = Vec::new();
    let mut env = Env::default();
    let index: Vec<Expr> = idx.iter().map(|i| Expr::name(i)).collect();
    for k in 0..1 + rng.below(3) {
        let (name, ty) = (format!("x{k}"), element(rng));
        env.add(Expr::Load(name.clone(), index.clone()), ty, false);
        params.push(tensor(&name, ty, syms, false));
    }
    let outputs: Vec<(String, Ty)> = (0..1 + rng.below(2))
        .map(|k| (format!("y{k}"), element(rng)))
        .collect();
    // The last output is sometimes also read (at its own element, before its store).
    let inout = rng.chance(1, 4);
    if inout {
        let (name, ty) = outputs.last().unwrap();
        env.add(Expr::Load(name.clone(), index.clone()), *ty, false);
    }
    for (name, ty) in &outputs {
        params.push(tensor(name, *ty, syms, true));
    }
    scalars(rng, &mut params, &mut env, 2);
    for v in idx.iter().chain(vars) {
        env.add(Expr::name(v), Ty::Index, false);
    }

    // The guarded body: lets, then each output stored once (the in-out one last).
    let mut inner = Vec::new();
    let mut fresh = Names(0);
    lets(rng, &mut env, &mut fresh, 3, &mut inner);
    for (k, (name, ty)) in outputs.iter().enumerate() {
        let compound = inout && k + 1 == outputs.len();
        store(rng, &env, name, &index, *ty, compound, &mut inner);
    }
    let guards: Vec<Expr> = (0..rank)
        .map(|d| Expr::bin(BinOp::Lt, Expr::name(idx[d]), Expr::name(syms[d])))
        .collect();
    let guarded = if rng.chance(2, 3) {
        let cond = guards
            .into_iter()
            .reduce(|a, b| Expr::bin(BinOp::And, a, b))
            .unwrap();
        vec![Stmt::If {
            cond,
            then: inner,
            els: vec![],
        }]
    } else {
        guards.into_iter().rev().fold(inner, |body, g| {
            vec![Stmt::If {
                cond: g,
                then: body,
                els: vec![],
            }]
        })
    };
    let offset = |d: usize| {
        Expr::bin(
            BinOp::Mul,
            Expr::BlockIdx((rank - 1 - d) as u8),
            if literal {
                Expr::idx(tiles[d].parse().unwrap())
            } else {
                Expr::name(&tiles[d])
            },
        )
    };
    let sum = |d: usize| Expr::bin(BinOp::Add, Expr::name(bases[d]), Expr::name(vars[d]));
    let (base_let, idx_let) = if rank == 1 {
        (
            Stmt::Let {
                name: bases[0].into(),
                mutable: false,
                ty: None,
                value: offset(0),
            },
            Stmt::Let {
                name: idx[0].into(),
                mutable: false,
                ty: None,
                value: sum(0),
            },
        )
    } else {
        (
            Stmt::LetTuple(
                (0..rank)
                    .map(|d| (bases[d].to_string(), offset(d)))
                    .collect(),
            ),
            Stmt::LetTuple((0..rank).map(|d| (idx[d].to_string(), sum(d))).collect()),
        )
    };
    let mut body_in = vec![idx_let];
    body_in.extend(guarded);
    let body = vec![
        base_let,
        Stmt::Parallel {
            vars: names(vars),
            extents: tiles.clone(),
            body: body_in,
        },
    ];
    let configs = if pools.is_empty() {
        Vec::new()
    } else {
        config::draw(rng, &pools, |_| true)
    };
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
    }
}
