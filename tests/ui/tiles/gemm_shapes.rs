use tilelang::prelude::*;

#[tile_kernel(
    grid = [M.div_ceil(BM), N.div_ceil(BN)],
    threads = 128,
    configs = [square(BM = 64, BN = 64, BK = 32)],
)]
pub fn k<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, (M, K)>,
    b: &Tensor<f16, (K, N)>,
    c: &mut Tensor<f32, (M, N)>,
) {
    let (row, col) = (block_idx(0) * BM, block_idx(1) * BN);
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BN, BK)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for ko in serial(K.div_ceil(BK)) {
        copy(a.at((row, ko * BK)), &mut a_s);
        copy(b.at((ko * BK, col)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((row, col)));
}

fn main() {}
