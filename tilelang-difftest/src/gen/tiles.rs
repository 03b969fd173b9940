//! The tile skeleton (see `skeleton.rs` for the rules every skeleton keeps):
//!
//! ```text
//! let (r0, c0[, l]) = (block_idx(1) * BM, block_idx(0) * BN[, block_idx(2)]);
//! let mut a0 = alloc_<shared|fragment>::<T, (BM, BN)>();   copy(x0.at(([l, ]r0, c0)), &mut a0);
//! [let mut b0 = ..; copy(&a0, &mut b0);]                  a buffer-to-buffer copy, dtype change
//! [w: (N,) into (BN,), read as w[j]; h: (M,) into (BM,), read as h[i]]
//! let mut o = ..; [fill / clear]
//! for (i, j) in parallel(BM, BN) { o[(i, j)] = .. }        or (j, i) in parallel(BN, BM)
//! [for (i, j) in parallel(BM, BN) { o[(i, j)] op= .. }]    in place, o read at its element
//! copy(&o, y0.at_mut(..)) [through another buffer];  [copy(&a0, y1.at_mut(..))]
//! ```

use super::ast::{BinOp, Expr, Kernel, Param, Scope, Stmt, Threads, Tile, Ty};
use super::config::{self, ConstPool};
use super::expr::{Env, ExprGen};
use super::rng::Rng;
use super::skeleton::{element, lets, names, scalars, store, tensor, threads, Names};

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

fn region(tensor: &str, offsets: &[Expr]) -> Tile {
    Tile::Region {
        tensor: tensor.into(),
        offsets: offsets.to_vec(),
    }
}

fn buf(name: &str) -> Tile {
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
        store(b.rng, &inner_env, "o", &ij, to, false, &mut loop1)
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
    }
}
