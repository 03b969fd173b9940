//! Skeletons: the shape of a kernel (grid, parameters, loops, tiles, copies), filled with typed
//! random code from [`super::expr`]. Each skeleton is valid by construction:
//!
//! * **Elementwise** (rank 1-3): grid `[N.div_ceil(BN), M.div_ceil(BM), L.div_ceil(BL)]`, one
//!   `parallel` loop over the block's elements, every tensor access under the tail guard
//!   `if r < M && c < N` (or nested `if`s), each output element stored exactly once (an
//!   `if`/`else` stores it in both arms); an in-out tensor is read at its own element and
//!   stored last.
//! * **Tiles** (its outline above [`tiles`]): 2-D tiles at `(r0, c0)` of `(M, N)` tensors, or of `(L, M, N)` tensors with
//!   the batch in the grid (rank-dropping copies); tails wherever the shapes end; `copy` in,
//!   buffer-to-buffer copies with a dtype change, a row vector read as `w[j]` and a column
//!   vector as `h[i]`, element-wise loops over the tile in its own order or transposed, `copy`
//!   out. Every buffer is fully written (`copy`, `fill`, `clear` or a loop over all of it)
//!   before it is read.

use super::ast::{
    BinOp, Expr, Func, Kernel, LitForm, Param, ParamKind, Scope, Stmt, Threads, Tile, Tol, Ty,
};
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
            read: false,
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
fn scalars(rng: &mut Rng, params: &mut Vec<Param>, env: &mut Env, max: usize) {
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
fn lets(rng: &mut Rng, env: &mut Env, fresh: &mut Names, max: usize, out: &mut Vec<Stmt>) {
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
/// sometimes as `+=`, `-=` or `*=` (the old value is an exact input). With `tols` (the target
/// is an output nothing reads again), a float value may call an inexact math function
/// (`super::approx`), its tolerance recorded for the target. Returns whether the stored value
/// may be a float product.
#[allow(clippy::too_many_arguments)]
pub(super) fn store(
    rng: &mut Rng,
    env: &Env,
    target: &str,
    index: &[Expr],
    dtype: Ty,
    compound: bool,
    tols: Option<&mut Vec<(String, Tol)>>,
    out: &mut Vec<Stmt>,
) -> bool {
    let approx = tols.is_some() && dtype.is_float();
    let one = |rng: &mut Rng| -> (Stmt, bool, Option<Tol>) {
        let op = if compound && rng.chance(1, 2) {
            Some(rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]))
        } else {
            None
        };
        let (value, prod, tol) = if approx && op.is_none() && rng.chance(1, 3) {
            let (e, tol) = super::approx::value(rng, env, dtype);
            (e, false, Some(tol))
        } else {
            let no_prod = dtype.is_float() && matches!(op, Some(BinOp::Add | BinOp::Sub));
            let v = ExprGen { rng, env }.value(dtype, 3, no_prod);
            let prod = v.prod || (dtype.is_float() && op == Some(BinOp::Mul));
            (v.e, prod, None)
        };
        let st = Stmt::Store {
            target: target.into(),
            index: index.to_vec(),
            op,
            value,
        };
        (st, prod, tol)
    };
    let (prod, tol) = if rng.chance(1, 3) {
        let cond = ExprGen { rng, env }.cond(2);
        let (a, pa, ta) = one(rng);
        let (b, pb, tb) = one(rng);
        out.push(Stmt::If {
            cond,
            then: vec![a],
            els: vec![b],
        });
        let tol = match (ta, tb) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        (pa || pb, tol)
    } else {
        let (s, p, t) = one(rng);
        out.push(s);
        (p, t)
    };
    if let (Some(tols), Some(tol)) = (tols, tol) {
        match tols.iter_mut().find(|(n, _)| n == target) {
            Some((_, t)) => *t = t.max(tol),
            None => tols.push((target.to_string(), tol)),
        }
    }
    prod
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
    if inout {
        if let Some(ParamKind::Tensor { read, .. }) = params.last_mut().map(|p| &mut p.kind) {
            *read = true;
        }
    }
    scalars(rng, &mut params, &mut env, 2);
    for v in idx.iter().chain(vars) {
        env.add(Expr::name(v), Ty::Index, false);
    }

    // The guarded body: lets, then each output stored once (the in-out one last).
    let mut inner = Vec::new();
    let mut fresh = Names(0);
    local(rng, &mut env, &mut inner);
    lets(rng, &mut env, &mut fresh, 3, &mut inner);
    let mut tols = Vec::new();
    for (k, (name, ty)) in outputs.iter().enumerate() {
        let compound = inout && k + 1 == outputs.len();
        store(
            rng,
            &env,
            name,
            &index,
            *ty,
            compound,
            Some(&mut tols),
            &mut inner,
        );
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
    let requires = if rng.chance(1, 4) {
        (0..1 + rng.below(2))
            .map(|_| requirement(rng, syms))
            .collect()
    } else {
        Vec::new()
    };
    Kernel {
        name,
        grid,
        threads,
        consts,
        configs,
        defaults,
        params,
        body,
        requires,
        occupancy: occupancy(rng),
        tols,
    }
}

/// A `requires` condition over the shape symbols: some hold at every case's sizes, some skip
/// a case (`device::SIZES`; the evaluator then refuses it, and neither side runs it).
fn requirement(rng: &mut Rng, syms: &[&str]) -> Expr {
    let s = Expr::name(rng.pick(syms));
    let (op, a, b) = match rng.below(5) {
        0 => (BinOp::Ge, s, Expr::idx(1)),
        1 => (BinOp::Ge, s, Expr::idx(2)),
        2 => (BinOp::Le, s, Expr::idx(4096)),
        3 => (
            BinOp::Eq,
            Expr::bin(BinOp::Rem, s, Expr::idx(2)),
            Expr::idx(rng.below(2) as i64),
        ),
        _ => (
            BinOp::Ne,
            Expr::bin(BinOp::Mul, s, Expr::idx(3)),
            Expr::idx(111),
        ),
    };
    Expr::bin(op, a, b)
}

/// Sometimes an occupancy request that every target holds for a block of at most 256 threads
/// and no shared memory or fragments: `min_blocks` up to 4 (1,024 threads, 64 registers
/// each), `max_registers` from 32 to 255.
fn occupancy(rng: &mut Rng) -> Option<(&'static str, u64)> {
    match rng.below(8) {
        0 => Some(("min_blocks", 1 + rng.below(4) as u64)),
        1 => Some(("max_registers", rng.pick(&[32, 40, 64, 128, 255]))),
        _ => None,
    }
}

/// Sometimes a per-thread buffer `loc` of 1 to 4 elements, each written by a `serial` loop
/// from the values in scope and the loop's index, its elements then in scope.
fn local(rng: &mut Rng, env: &mut Env, out: &mut Vec<Stmt>) {
    if !rng.chance(1, 4) {
        return;
    }
    let (ty, d) = (element(rng), 1 + rng.below(4));
    out.push(Stmt::Alloc {
        name: "loc".into(),
        scope: Scope::Local,
        dtype: ty,
        shape: vec![d.to_string()],
        // A literal extent is not a type: only the argument form takes it.
        arg_form: true,
    });
    let mut inner = env.clone();
    inner.add(Expr::name("u"), Ty::Index, false);
    let v = ExprGen { rng, env: &inner }.value(ty, 2, false);
    out.push(Stmt::Loop {
        var: "u".into(),
        start: Expr::idx(0),
        end: Expr::idx(d as i64),
        stages: None,
        body: vec![Stmt::Store {
            target: "loc".into(),
            index: vec![Expr::name("u")],
            op: None,
            value: v.e,
        }],
    });
    for c in 0..d {
        env.add(
            Expr::Load("loc".into(), vec![Expr::idx(c as i64)]),
            ty,
            v.prod,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The tile skeleton:
//
// ```text
// let (r0, c0[, l]) = (block_idx(1) * BM, block_idx(0) * BN[, block_idx(2)]);
// let mut a0 = alloc_<shared|fragment>::<T, (BM, BN)>();   copy(x0.at(([l, ]r0, c0)), &mut a0);
// [let mut b0 = ..; copy(&a0, &mut b0);]                  a buffer-to-buffer copy, dtype change
// [w: (N,) into (BN,), read as w[j]; h: (M,) into (BM,), read as h[i]]
// let mut o = ..; [fill / clear]
// for (i, j) in parallel(BM, BN) { o[(i, j)] = .. }        or (j, i) in parallel(BN, BM)
// [for (i, j) in parallel(BM, BN) { o[(i, j)] op= .. }]    in place, o read at its element
// copy(&o, y0.at_mut(..)) [through another buffer];  [copy(&a0, y1.at_mut(..))]
// ```

/// The shape of a buffer, in the tile's constants.
#[derive(Clone, Copy)]
enum Shape {
    Tile,
    Row,
    Col,
}

struct Buf {
    scope: Scope,
    dtype: Ty,
    shape: Shape,
}

/// All buffers' bytes within 48 KiB (a fragment no register layout serves is demoted to shared
/// memory) and fragment registers per thread within 96: an estimate that keeps every config
/// inside the smallest target (AMD's 64 KiB, 255 registers).
fn fits(bufs: &[Buf], bm: u64, bn: u64, threads: u64) -> bool {
    let (mut shared, mut regs) = (0u64, 0u64);
    for b in bufs {
        let elems = match b.shape {
            Shape::Tile => bm * bn,
            Shape::Row => bn,
            Shape::Col => bm,
        };
        shared += elems * b.dtype.bytes() as u64;
        if b.scope == Scope::Fragment {
            regs += elems.div_ceil(threads) * (b.dtype.bytes() as u64).div_ceil(4);
        }
    }
    shared <= 48 * 1024 && regs <= 96
}

struct Builder<'r> {
    rng: &'r mut Rng,
    bufs: Vec<Buf>,
    body: Vec<Stmt>,
}

impl Builder<'_> {
    fn scope(&mut self) -> Scope {
        if self.rng.chance(1, 2) {
            Scope::Shared
        } else {
            Scope::Fragment
        }
    }

    fn alloc(&mut self, name: &str, scope: Scope, dtype: Ty, shape: Shape) {
        let dims = match shape {
            Shape::Tile => names(&["BM", "BN"]),
            Shape::Row => names(&["BN"]),
            Shape::Col => names(&["BM"]),
        };
        let arg_form = self.rng.chance(1, 4);
        self.body.push(Stmt::Alloc {
            name: name.into(),
            scope,
            dtype,
            shape: dims,
            arg_form,
        });
        self.bufs.push(Buf {
            scope,
            dtype,
            shape,
        });
    }

    fn copy(&mut self, src: Tile, dst: Tile) {
        self.body.push(Stmt::Copy { src, dst });
    }
}

pub(super) fn region(tensor: &str, offsets: &[Expr]) -> Tile {
    Tile::Region {
        tensor: tensor.into(),
        offsets: offsets.to_vec(),
    }
}

pub(super) fn buf(name: &str) -> Tile {
    Tile::Buf(name.into())
}

/// A tile kernel.
pub fn tiles(rng: &mut Rng, name: String) -> Kernel {
    let batched = rng.chance(1, 3);
    let syms: &[&str] = if batched {
        &["L", "M", "N"]
    } else {
        &["M", "N"]
    };
    let mut pools = vec![
        ConstPool {
            name: "BM",
            fast: &[16, 32, 64],
            odd: &[1, 3, 8],
        },
        ConstPool {
            name: "BN",
            fast: &[32, 64, 128],
            odd: &[7, 24, 40],
        },
    ];
    let mut consts = names(&["BM", "BN"]);
    let threads_ = threads(rng, &mut consts, &mut pools);
    let mut grid = vec![
        Expr::DivCeil(Box::new(Expr::name("N")), Box::new(Expr::name("BN"))),
        Expr::DivCeil(Box::new(Expr::name("M")), Box::new(Expr::name("BM"))),
    ];
    let mut base = vec![
        (
            "r0".to_string(),
            Expr::bin(BinOp::Mul, Expr::BlockIdx(1), Expr::name("BM")),
        ),
        (
            "c0".to_string(),
            Expr::bin(BinOp::Mul, Expr::BlockIdx(0), Expr::name("BN")),
        ),
    ];
    let mut offs = vec![Expr::name("r0"), Expr::name("c0")];
    if batched {
        grid.push(Expr::name("L"));
        base.push(("l".to_string(), Expr::BlockIdx(2)));
        offs.insert(0, Expr::name("l"));
    }
    let mut b = Builder {
        rng,
        bufs: Vec::new(),
        body: vec![Stmt::LetTuple(base)],
    };
    let mut params: Vec<Param> = Vec::new();
    let mut env = Env::default();
    let ij = [Expr::name("i"), Expr::name("j")];

    // Inputs copied into tiles, sometimes through a second buffer of another dtype.
    let n_in = 1 + b.rng.below(2);
    for k in 0..n_in {
        let (x, a) = (format!("x{k}"), format!("a{k}"));
        let tx = element(b.rng);
        params.push(tensor(&x, tx, syms, false));
        let ta = if b.rng.chance(1, 2) {
            tx
        } else {
            element(b.rng)
        };
        let scope = b.scope();
        b.alloc(&a, scope, ta, Shape::Tile);
        b.copy(region(&x, &offs), buf(&a));
        env.add(Expr::Load(a.clone(), ij.to_vec()), ta, false);
        if b.rng.chance(1, 3) {
            let (a2, t2) = (format!("b{k}"), element(b.rng));
            let scope = b.scope();
            b.alloc(&a2, scope, t2, Shape::Tile);
            b.copy(buf(&a), buf(&a2));
            env.add(Expr::Load(a2, ij.to_vec()), t2, false);
        }
    }
    // A row vector read by every row (`w[j]`) and a column vector read by every column (`h[i]`).
    if b.rng.chance(1, 3) {
        let (tw, tb) = (element(b.rng), element(b.rng));
        params.push(tensor("w", tw, &["N"], false));
        let scope = b.scope();
        b.alloc("wv", scope, tb, Shape::Row);
        b.copy(region("w", &[Expr::name("c0")]), buf("wv"));
        env.add(Expr::Load("wv".into(), vec![Expr::name("j")]), tb, false);
    }
    if b.rng.chance(1, 4) {
        let (th, tb) = (element(b.rng), element(b.rng));
        params.push(tensor("h", th, &["M"], false));
        let scope = b.scope();
        b.alloc("hv", scope, tb, Shape::Col);
        b.copy(region("h", &[Expr::name("r0")]), buf("hv"));
        env.add(Expr::Load("hv".into(), vec![Expr::name("i")]), tb, false);
    }
    scalars(b.rng, &mut params, &mut env, 1);
    for v in ["i", "j", "r0", "c0"] {
        env.add(Expr::name(v), Ty::Index, false);
    }

    // The output tile: written whole by a loop, or filled first and written where a condition
    // holds.
    let to = element(b.rng);
    let scope = if b.rng.chance(3, 4) {
        Scope::Fragment
    } else {
        Scope::Shared
    };
    b.alloc("o", scope, to, Shape::Tile);
    let partial = b.rng.chance(1, 3);
    if partial {
        let st = if b.rng.chance(1, 2) {
            Stmt::Clear("o".into())
        } else {
            let v = ExprGen {
                rng: b.rng,
                env: &Env::default(),
            }
            .value(to, 0, false);
            Stmt::Fill {
                buf: "o".into(),
                value: v.e,
            }
        };
        b.body.push(st);
    }
    let mut fresh = Names(0);
    let mut loop1 = Vec::new();
    let mut inner_env = env.clone();
    lets(b.rng, &mut inner_env, &mut fresh, 2, &mut loop1);
    let mut o_prod = if partial {
        let cond = ExprGen {
            rng: b.rng,
            env: &inner_env,
        }
        .cond(2);
        let v = ExprGen {
            rng: b.rng,
            env: &inner_env,
        }
        .value(to, 3, false);
        loop1.push(Stmt::If {
            cond,
            then: vec![Stmt::Store {
                target: "o".into(),
                index: ij.to_vec(),
                op: None,
                value: v.e,
            }],
            els: vec![],
        });
        v.prod
    } else {
        store(b.rng, &inner_env, "o", &ij, to, false, None, &mut loop1)
    };
    let (vars, extents) = if b.rng.chance(1, 3) {
        (names(&["j", "i"]), names(&["BN", "BM"]))
    } else {
        (names(&["i", "j"]), names(&["BM", "BN"]))
    };
    b.body.push(Stmt::Parallel {
        vars,
        extents,
        body: loop1,
    });
    // Sometimes a second loop updates the tile in place.
    if b.rng.chance(1, 3) {
        let mut env2 = env.clone();
        env2.add(Expr::Load("o".into(), ij.to_vec()), to, o_prod);
        let mut loop2 = Vec::new();
        lets(b.rng, &mut env2, &mut Names(fresh.0), 1, &mut loop2);
        let op = b
            .rng
            .pick(&[None, Some(BinOp::Add), Some(BinOp::Sub), Some(BinOp::Mul)]);
        let float = to.is_float();
        // `o += v` adds to `o`: neither may be a product then (`o_prod` is known here).
        let op = match op {
            Some(BinOp::Add | BinOp::Sub) if float && o_prod => None,
            op => op,
        };
        let no_prod = float && matches!(op, Some(BinOp::Add | BinOp::Sub));
        let v = ExprGen {
            rng: b.rng,
            env: &env2,
        }
        .value(to, 3, no_prod);
        o_prod = v.prod || (float && op == Some(BinOp::Mul)) || (op.is_some() && o_prod);
        loop2.push(Stmt::Store {
            target: "o".into(),
            index: ij.to_vec(),
            op,
            value: v.e,
        });
        b.body.push(Stmt::Parallel {
            vars: names(&["i", "j"]),
            extents: names(&["BM", "BN"]),
            body: loop2,
        });
    }
    let _ = o_prod;

    // Out: directly, or through another buffer (a dtype change); sometimes a second output
    // copied straight from the first input's tile.
    let ty0 = element(b.rng);
    params.push(tensor("y0", ty0, syms, true));
    if b.rng.chance(1, 4) {
        let (t2, scope) = (element(b.rng), b.scope());
        b.alloc("o2", scope, t2, Shape::Tile);
        b.copy(buf("o"), buf("o2"));
        b.copy(buf("o2"), region("y0", &offs));
    } else {
        b.copy(buf("o"), region("y0", &offs));
    }
    if b.rng.chance(1, 4) {
        let ty1 = element(b.rng);
        params.push(tensor("y1", ty1, syms, true));
        b.copy(buf("a0"), region("y1", &offs));
    }

    let (bufs, body) = (b.bufs, b.body);
    let literal_threads = match threads_ {
        Threads::Literal(t) => Some(t),
        Threads::Const(_) => None,
    };
    let configs = config::draw(rng, &pools, |v| {
        fits(&bufs, v[0], v[1], literal_threads.unwrap_or_else(|| v[2]))
    });
    let defaults = config::defaults(rng, &configs);
    Kernel {
        name,
        grid,
        threads: threads_,
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

// ---------------------------------------------------------------------------------------------
// The GEMM skeleton:
//
// ```text
// let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
// let mut a_s = alloc_<shared|fragment>::<T, (BM, BK)>();   let mut b_s = alloc_shared::<T, (BK, BN)>();
// let mut acc = alloc_fragment::<f32, (BM, BN)>();          clear(&mut acc) or fill(&mut acc, 0.0)
// for k in pipelined(K.div_ceil(BK), S) | serial(0, K.div_ceil(BK)) {
//     copy(a.at((r0, k * BK)), &mut a_s);  copy(b.at((k * BK, c0)), &mut b_s);  gemm(&a_s, &b_s, &mut acc);
// }
// (or with an operand stored transposed, read by `.t()`: `a (K, M)`, `a_s (BK, BM)`,
// `copy(a.at((k * BK, r0)), &mut a_s)`, `gemm(&a_s.t(), ..)`; `b (N, K)`, `b_s (BN, BK)`.)
// (or, A not transposed, a chained product whose A is computed from a first gemm's
// accumulator, as FlashAttention's P·V (`chained_a`).)
// [copy(bias.at((c0,)), &mut bv); for (i, j) in parallel(BM, BN) { acc[(i, j)] += bv[j] }]
// copy(&acc, c.at_mut((r0, c0)));
// ```
//
// Exact on every backend in any summation order: inputs are multiples of 1/4 in [-8, 8], so
// every product is a multiple of 1/16 of magnitude at most 64 and every partial sum over K up
// to 2^13 terms fits f32's 24 bits. (A chained A is a multiple of 1/16 in [-2, 2]: products
// are multiples of 1/64 of magnitude at most 16, sums over K up to 2^13 terms again within
// 24 bits; see `chained_a`.)

/// The GEMM skeleton's row epilogue, on the accumulator:
///
/// ```text
/// let mut rw = alloc_fragment::<f32, (BM,)>();
/// reduce_<op>(&acc, &mut rw, 1);
/// [for i in parallel(BM) { rw[i] = rw[i] * 0.5; }]
/// for (i, j) in parallel(BM, BN) { acc[(i, j)] = acc[(i, j)] - rw[i]; }
/// ```
///
/// The rows reach the output through `acc` only: each block reduces its own columns, so a
/// copy of `rw` into an `(M,)` tensor would be written by every block of a row of blocks, in
/// whatever order they run (the first run on an H100 reported it as 1,104 findings on that
/// output, none on `c`). Exact in any order: every element of `acc` is a multiple of 1/16 below 2^13 + 8 in
/// magnitude (K <= 128 products of at most 64, and the bias), so a sum of at most 64 of them
/// (BN <= 64) is a multiple of 1/16 below 2^20: 24 bits; halving and the differences stay so.
fn acc_rows(rng: &mut Rng, op: &'static str) -> Vec<Stmt> {
    let mut out = vec![
        Stmt::Alloc {
            name: "rw".into(),
            scope: Scope::Fragment,
            dtype: Ty::F32,
            shape: names(&["BM"]),
            arg_form: rng.chance(1, 4),
        },
        Stmt::Reduce {
            op,
            src: "acc".into(),
            dst: "rw".into(),
            dim: 1,
        },
    ];
    if rng.chance(1, 2) {
        out.push(Stmt::Parallel {
            vars: names(&["i"]),
            extents: names(&["BM"]),
            body: vec![Stmt::Store {
                target: "rw".into(),
                index: vec![Expr::name("i")],
                op: None,
                value: Expr::bin(
                    BinOp::Mul,
                    Expr::Load("rw".into(), vec![Expr::name("i")]),
                    Expr::Float(0.5, Ty::F32, LitForm::Typed),
                ),
            }],
        });
    }
    out.push(Stmt::Parallel {
        vars: names(&["i", "j"]),
        extents: names(&["BM", "BN"]),
        body: vec![Stmt::Store {
            target: "acc".into(),
            index: vec![Expr::name("i"), Expr::name("j")],
            op: Some(BinOp::Sub),
            value: Expr::Load("rw".into(), vec![Expr::name("i")]),
        }],
    });
    out
}

/// `x`, or its two elements swapped when `t`.
fn swap2(t: bool, [x0, x1]: [Expr; 2]) -> [Expr; 2] {
    if t {
        [x1, x0]
    } else {
        [x0, x1]
    }
}

/// Floating-point element types a `gemm` operand or its tensor may have.
const GEMM_TYPES: [Ty; 3] = [Ty::F16, Ty::Bf16, Ty::F32];

/// A chained product, the GEMM skeleton's A computed from a first gemm's accumulator (as P
/// from the scores in FlashAttention): the allocations before the k-loop, and the k-loop's
/// statements before `copy(b..)`; the main `gemm(&a_s, ..)` then reads the register `a_s`.
///
/// ```text
/// let mut x_s = alloc_shared::<T, (BM, BK)>();     let mut w_s = alloc_shared::<T, (BK, BK)>();
/// let mut pa = alloc_fragment::<f32, (BM, BK)>();  let mut a_s = alloc_fragment::<T, (BM, BK)>();
/// [let mut pm = alloc_fragment::<f32, (BM,)>();]
/// // in the loop, before copy(b..) and gemm(&a_s, &b_s, &mut acc):
/// copy(a.at((r0, k * BK)), &mut x_s);  copy(w.at((k * BK, k * BK)), &mut w_s);
/// clear(&mut pa);  gemm(&x_s, &w_s, &mut pa);
/// [reduce_max(&pa, &mut pm, 1);]  // then `v` below is `pa[(i, j)] - pm[i]`, else `pa[(i, j)]`
/// for (i, j) in parallel(BM, BK) {
///     a_s[(i, j)] = (min(max(floor(v * 0.0625f32) * 0.0625f32, -2.0f32), 2.0f32) as T);
/// }
/// // or the same value stored into `pa` in place, and a converting copy:
/// copy(&pa, &mut a_s);
/// ```
///
/// `w (K, K)` is a new input: each step multiplies the A tile by a diagonal block of it. The
/// row max is FlashAttention's (the scores' rows reduced), and comes with the row epilogue
/// on the main accumulator (`acc_rows`; FlashAttention rescales its rows): the compiler then
/// gives both products' warps whole rows where the tiles allow, which `mma.sync` from a
/// register A needs. Where they do not, the register A is kept in shared memory (and, with the
/// row max, `pm` and `pa` too): `gemm`'s config filter counts them there as well.
///
/// Exact on every backend in any order: `x_s` and `w_s` hold multiples of 1/4 in [-8, 8], so
/// `pa`'s sums of BK <= 64 products are multiples of 1/16 of magnitude at most 2^12 (16 bits
/// of 1/16ths: exact in f32), and `v` at most 2^13; scaled by 2^-4, floored (exact: an integer
/// below 2^9) and scaled back, then clamped, A is a multiple of 1/16 in [-2, 2] (6 bits: exact
/// in f16 and bf16; the scale keeps most of it off the clamp). The main products are then
/// multiples of 1/64 of magnitude at most 16: a sum over K <= 128 (the runners' sizes; 2^13
/// would still fit) is below 2^11, 2^17 sixty-fourths, and with the bias (a multiple of 1/4 of
/// at most 8) `acc` stays a multiple of 1/64 below 2^11 + 8. The row epilogue (`acc_rows`)
/// stays exact: a sum of BN <= 64 of them is below 2^17 + 2^9, below 2^24 sixty-fourths;
/// halved, below 2^16 + 2^8 in 128ths, again below 2^24; the differences with `acc` below
/// 2^16 + 2^12 in 128ths. (A clamp to [-4, 4] would not do: the row sum could reach
/// 2^18 + 2^9, past 2^24 sixty-fourths.)
fn chained_a(rng: &mut Rng, t: Ty, row_max: bool, pre: &mut Vec<Stmt>, step: &mut Vec<Stmt>) {
    let in_place = rng.chance(1, 2);
    let mut alloc = |name: &str, scope: Scope, dtype: Ty, shape: &[&str]| {
        pre.push(Stmt::Alloc {
            name: name.into(),
            scope,
            dtype,
            shape: names(shape),
            arg_form: rng.chance(1, 4),
        })
    };
    alloc("x_s", Scope::Shared, t, &["BM", "BK"]);
    alloc("w_s", Scope::Shared, t, &["BK", "BK"]);
    alloc("pa", Scope::Fragment, Ty::F32, &["BM", "BK"]);
    alloc("a_s", Scope::Fragment, t, &["BM", "BK"]);
    if row_max {
        alloc("pm", Scope::Fragment, Ty::F32, &["BM"]);
    }
    let k_bk = Expr::bin(BinOp::Mul, Expr::name("k"), Expr::name("BK"));
    step.push(Stmt::Copy {
        src: region("a", &[Expr::name("r0"), k_bk.clone()]),
        dst: buf("x_s"),
    });
    step.push(Stmt::Copy {
        src: region("w", &[k_bk.clone(), k_bk]),
        dst: buf("w_s"),
    });
    step.push(Stmt::Clear("pa".into()));
    step.push(Stmt::Gemm {
        a: "x_s".into(),
        b: "w_s".into(),
        c: "pa".into(),
        ta: false,
        tb: false,
    });
    let ij = || vec![Expr::name("i"), Expr::name("j")];
    let f32 = |v: f64| Expr::Float(v, Ty::F32, LitForm::Typed);
    let mut v = Expr::Load("pa".into(), ij());
    if row_max {
        step.push(Stmt::Reduce {
            op: "max",
            src: "pa".into(),
            dst: "pm".into(),
            dim: 1,
        });
        v = Expr::bin(BinOp::Sub, v, Expr::load("pm", &["i"]));
    }
    let q = Expr::Call(Func::Floor, vec![Expr::bin(BinOp::Mul, v, f32(0.0625))]);
    let clamped = Expr::Call(
        Func::Min,
        vec![
            Expr::Call(
                Func::Max,
                vec![Expr::bin(BinOp::Mul, q, f32(0.0625)), f32(-2.0)],
            ),
            f32(2.0),
        ],
    );
    let (target, value) = if in_place {
        ("pa", clamped)
    } else {
        ("a_s", Expr::Cast(Box::new(clamped), t))
    };
    step.push(Stmt::Parallel {
        vars: names(&["i", "j"]),
        extents: names(&["BM", "BK"]),
        body: vec![Stmt::Store {
            target: target.into(),
            index: ij(),
            op: None,
            value,
        }],
    });
    if in_place {
        step.push(Stmt::Copy {
            src: buf("pa"),
            dst: buf("a_s"),
        });
    }
}

/// A GEMM kernel.
pub fn gemm(rng: &mut Rng, name: String) -> Kernel {
    let mut pools = vec![
        ConstPool {
            name: "BM",
            fast: &[64, 128],
            odd: &[16, 32, 8],
        },
        ConstPool {
            name: "BN",
            fast: &[64, 128, 256],
            odd: &[8, 24, 40],
        },
        ConstPool {
            name: "BK",
            fast: &[32, 64],
            odd: &[8, 16],
        },
        ConstPool {
            name: "THREADS",
            fast: &[128, 256],
            odd: &[32, 64, 96],
        },
    ];
    let pipelined = rng.chance(2, 3);
    if pipelined {
        pools.push(ConstPool {
            name: "S",
            fast: &[2, 3, 4],
            odd: &[1, 2],
        });
    }
    let mut consts = names(&["BM", "BN", "BK", "THREADS"]);
    if pipelined {
        consts.push("S".into());
    }
    let (ta, tb) = (rng.pick(&GEMM_TYPES), rng.pick(&GEMM_TYPES));
    let t = rng.pick(&GEMM_TYPES);
    let a_fragment = rng.chance(1, 4);
    // Operands stored transposed: `a (K, M)` read by `&a_s.t()`, `b (N, K)` by `&b_s.t()`.
    let (trans_a, trans_b) = (rng.chance(1, 4), rng.chance(1, 3));
    // A computed from a first gemm's accumulator (`chained_a`), its rows reduced or not.
    let chain = !trans_a && rng.chance(1, 5);
    let row_max = chain && rng.chance(2, 3);
    let swap = |t: bool, x: [&'static str; 2]| if t { [x[1], x[0]] } else { x };
    let (a_dims, b_dims) = (swap(trans_a, ["M", "K"]), swap(trans_b, ["K", "N"]));
    let mut params = vec![
        tensor("a", ta, &a_dims, false),
        tensor("b", tb, &b_dims, false),
    ];
    if chain {
        params.push(tensor("w", ta, &["K", "K"], false));
    }
    let mut body = vec![Stmt::LetTuple(vec![
        (
            "r0".to_string(),
            Expr::bin(BinOp::Mul, Expr::BlockIdx(1), Expr::name("BM")),
        ),
        (
            "c0".to_string(),
            Expr::bin(BinOp::Mul, Expr::BlockIdx(0), Expr::name("BN")),
        ),
    ])];
    let alloc = |rng: &mut Rng, name: &str, scope: Scope, dtype: Ty, shape: &[&str]| Stmt::Alloc {
        name: name.into(),
        scope,
        dtype,
        shape: names(shape),
        arg_form: rng.chance(1, 4),
    };
    let a_scope = if a_fragment {
        Scope::Fragment
    } else {
        Scope::Shared
    };
    // The k-loop's statements before `copy(b..)`.
    let mut step = Vec::new();
    if chain {
        chained_a(rng, t, row_max, &mut body, &mut step);
    } else {
        body.push(alloc(rng, "a_s", a_scope, t, &swap(trans_a, ["BM", "BK"])));
    }
    body.push(alloc(
        rng,
        "b_s",
        Scope::Shared,
        t,
        &swap(trans_b, ["BK", "BN"]),
    ));
    body.push(alloc(rng, "acc", Scope::Fragment, Ty::F32, &["BM", "BN"]));
    body.push(if rng.chance(1, 2) {
        Stmt::Clear("acc".into())
    } else {
        Stmt::Fill {
            buf: "acc".into(),
            value: Expr::Float(0.0, Ty::F32, LitForm::Typed),
        }
    });
    let k_bk = Expr::bin(BinOp::Mul, Expr::name("k"), Expr::name("BK"));
    if !chain {
        step.push(Stmt::Copy {
            src: region("a", &swap2(trans_a, [Expr::name("r0"), k_bk.clone()])),
            dst: buf("a_s"),
        });
    }
    step.push(Stmt::Copy {
        src: region("b", &swap2(trans_b, [k_bk, Expr::name("c0")])),
        dst: buf("b_s"),
    });
    step.push(Stmt::Gemm {
        a: "a_s".into(),
        b: "b_s".into(),
        c: "acc".into(),
        ta: trans_a,
        tb: trans_b,
    });
    let steps = Expr::DivCeil(Box::new(Expr::name("K")), Box::new(Expr::name("BK")));
    body.push(Stmt::Loop {
        var: "k".into(),
        start: Expr::idx(0),
        end: steps,
        stages: pipelined.then(|| "S".to_string()),
        body: step,
    });
    let bias = rng.chance(1, 3);
    if bias {
        let tw = rng.pick(&GEMM_TYPES);
        params.push(tensor("bias", tw, &["N"], false));
        body.push(alloc(rng, "bv", Scope::Fragment, Ty::F32, &["BN"]));
        body.push(Stmt::Copy {
            src: region("bias", &[Expr::name("c0")]),
            dst: buf("bv"),
        });
        body.push(Stmt::Parallel {
            vars: names(&["i", "j"]),
            extents: names(&["BM", "BN"]),
            body: vec![Stmt::Store {
                target: "acc".into(),
                index: vec![Expr::name("i"), Expr::name("j")],
                op: Some(BinOp::Add),
                value: Expr::Load("bv".into(), vec![Expr::name("j")]),
            }],
        });
    }
    let tc = rng.pick(&[Ty::F32, Ty::F16, Ty::Bf16, Ty::F64]);
    params.push(tensor("c", tc, &["M", "N"], true));
    // The accumulator's rows: reduced, the result rescaled in a loop of its own and broadcast
    // back into the accumulator (a sum only with configs of BN <= 64, where it is exact: see
    // below). Always with a chain's row max (`chained_a`).
    let rows = (row_max || rng.chance(1, 3)).then(|| if rng.chance(1, 2) { "max" } else { "sum" });
    if let Some(op) = rows {
        body.extend(acc_rows(rng, op));
    }
    body.push(Stmt::Copy {
        src: buf("acc"),
        dst: region("c", &[Expr::name("r0"), Expr::name("c0")]),
    });
    let tbytes = t.bytes() as u64;
    let configs = config::draw(rng, &pools, |v| {
        let (bm, bn, bk, threads) = (v[0], v[1], v[2], v[3]);
        let stages = if pipelined { v[4] } else { 1 };
        // A chain stages `x_s` and `w_s` in place of `a_s`, and holds `pa` (f32) and the
        // register `a_s`.
        let a_shared = match (chain, a_fragment) {
            (true, _) => bm * bk + bk * bk,
            (false, true) => 0,
            (false, false) => bm * bk,
        };
        let shared = (a_shared + bk * bn) * tbytes * stages + if bias { bn * 4 } else { 0 };
        let a_regs = if chain || a_fragment {
            (bm * bk).div_ceil(threads) * tbytes.div_ceil(4)
        } else {
            0
        } + if chain {
            (bm * bk).div_ceil(threads)
        } else {
            0
        };
        // And with room under AMD's 64 KiB of LDS should `pa`, `a_s` and the row fragments be
        // kept in shared memory (`chained_a`).
        let demoted = if chain {
            bm * bk * (4 + tbytes) + 2 * bm * 4
        } else {
            0
        };
        shared <= 48 * 1024
            && shared + demoted <= 60 * 1024
            && (bm * bn).div_ceil(threads) + a_regs <= 128
            && (rows != Some("sum") || bn <= 64)
    });
    let defaults = config::defaults(rng, &configs);
    Kernel {
        name,
        grid: vec![
            Expr::DivCeil(Box::new(Expr::name("N")), Box::new(Expr::name("BN"))),
            Expr::DivCeil(Box::new(Expr::name("M")), Box::new(Expr::name("BM"))),
        ],
        threads: Threads::Const("THREADS".into()),
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
