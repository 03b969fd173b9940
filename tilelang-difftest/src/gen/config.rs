//! Configs: 1 to 3 per kernel, each drawn whole from one of two pools per const generic, the
//! *fast-path* pool (powers of two, innermost extents multiples of 8, `threads` a multiple of
//! 128: vector and chunk-wise paths) or the *odd* pool (7, 24, 40, 33 threads: tails and
//! element-wise paths), and kept only when a resource estimate fits the smallest target.

use super::ast::Config;
use super::rng::Rng;

/// One const generic and its two pools of values.
pub struct ConstPool {
    pub name: &'static str,
    pub fast: &'static [u64],
    pub odd: &'static [u64],
}

/// Archs the `defaults` key may name.
const ARCHS: [&str; 6] = ["cpu", "sm_90", "sm_80", "gfx1100", "gfx942", "gfx1030"];

/// 1 to 3 distinct configs whose values `fits`; at least one (the first pool value of every
/// const generic must fit).
pub fn draw(rng: &mut Rng, pools: &[ConstPool], fits: impl Fn(&[u64]) -> bool) -> Vec<Config> {
    let n = 1 + rng.below(3);
    let mut out: Vec<Config> = Vec::new();
    for _ in 0..20 * n {
        if out.len() == n {
            break;
        }
        let odd = rng.chance(1, 2);
        let values: Vec<u64> = pools
            .iter()
            .map(|p| rng.pick(if odd { p.odd } else { p.fast }))
            .collect();
        if fits(&values) && out.iter().all(|c| c.values != values) {
            out.push(Config {
                name: format!("{}{}", if odd { "o" } else { "f" }, out.len()),
                values,
            });
        }
    }
    if out.is_empty() {
        out.push(Config {
            name: "f0".into(),
            values: pools.iter().map(|p| p.fast[0]).collect(),
        });
    }
    out
}

/// Sometimes a `defaults` key naming some archs' configs.
pub fn defaults(rng: &mut Rng, configs: &[Config]) -> Vec<(String, String)> {
    if configs.len() < 2 || !rng.chance(1, 3) {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for arch in ARCHS {
        if rng.chance(1, 3) {
            out.push((arch.into(), configs[rng.below(configs.len())].name.clone()));
        }
    }
    out
}
