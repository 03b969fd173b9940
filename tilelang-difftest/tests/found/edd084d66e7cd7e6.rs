// Generated kernel edd084d66e7cd7e6 (issue 39, `.t()` operands), minimised by `difftest shrink`:
// tl.h's element-by-element `gemm_mma` read a marked B through `TB ? sidx<SW, K>(..) :
// sidx<SW, N>(..)`, which instantiates both, and `sidx` of a 24-column tile (3 chunks, not a
// power of two) is a static assertion: nvcc rejected a valid kernel. Now `if constexpr`.
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = THREADS, configs = [o0(BM = 16, BN = 24, BK = 16, THREADS = 32, S = 1)])]
pub fn gedd084d66e7cd7e6<const BM: usize, const BN: usize, const BK: usize, const THREADS: usize, const S: usize>(b: &Tensor<f16, (N, K)>, c: &mut Tensor<f32, (M, N)>) {
    let (r0, c0) = (1, 1);
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BN, BK)>();
    let mut acc = alloc_fragment::<f32>((BM, BN));
    for k in pipelined(K.div_ceil(BK), S) {
        copy(b.at((c0, k * BK)), &mut b_s);
        gemm(&a_s, &b_s.t(), &mut acc);
    }
}
