//! The (kernel, config) being lowered, as one value: the kernel, the config's constants and
//! the kernel's statement and access ids, built once by the driver and read by every pass and
//! the printer. A leaf of `lower`.

use crate::ir::visit::Ids;
use crate::ir::*;

/// One (kernel, config): what every pass evaluates shapes and extents under.
#[derive(Debug)]
pub(crate) struct Instance<'a> {
    pub k: &'a Kernel,
    pub config: usize,
    /// The config's constants (`ExprKind::Const` indexes them).
    pub vals: &'a [u64],
    /// The ids that key the plan's decisions.
    pub ids: Ids<'a>,
}

impl<'a> Instance<'a> {
    pub(crate) fn new(k: &'a Kernel, config: usize) -> Instance<'a> {
        Instance {
            k,
            config,
            vals: &k.configs[config].values,
            ids: Ids::number(&k.body),
        }
    }

    /// A `parallel` extent or a buffer dimension: validation evaluated every one under every
    /// config to a constant in 1..=`MAX_TILE_ELEMENTS` (`validate/config.rs`), so one that does
    /// not evaluate here is a bug.
    pub(crate) fn extent(&self, e: &Expr) -> usize {
        eval_const(e, self.vals).expect("validation made every extent and dimension constant")
            as usize
    }

    /// The extents of a `parallel` loop.
    pub(crate) fn extents(&self, extents: &[Expr]) -> Vec<usize> {
        extents.iter().map(|e| self.extent(e)).collect()
    }

    pub(crate) fn buffer_shape(&self, b: BufId) -> Vec<usize> {
        self.extents(&self.k.buffers[b].shape)
    }

    /// A `gemm`'s (M, N, K) (`ir::gemm_mnk`) for operands `[a, b, _]` with `.t()` marks `t`.
    pub(crate) fn gemm_mnk(
        &self,
        [a, b, _]: [BufId; 3],
        [ta, tb]: [bool; 2],
    ) -> (usize, usize, usize) {
        crate::ir::gemm_mnk(&self.buffer_shape(a), &self.buffer_shape(b), ta, tb)
    }

    /// Elements of buffer `b`.
    pub(crate) fn buffer_len(&self, b: BufId) -> usize {
        self.buffer_shape(b).iter().product()
    }

    /// Bytes of one copy of buffer `b` in shared memory: rounded up to 16, where the next
    /// starts.
    pub(crate) fn stage_bytes(&self, b: BufId) -> usize {
        (self.buffer_len(b) * self.k.buffers[b].dtype.size_bytes()).div_ceil(16) * 16
    }
}
