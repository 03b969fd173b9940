use tilelang::prelude::*;

#[tile_kernel(grid = [M.div_ceil(64), N.div_ceil(64)], threads = 128)]
pub fn k(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f32, (M, N)>) {
    let (row, col) = (block_idx(0) * 64, block_idx(1) * 64);
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_shared::<f32>((64, 64));
    clear(&mut acc);
    for ko in serial(K.div_ceil(32)) {
        copy(a.at((row, ko * 32)), &mut a_s);
        copy(b.at((ko * 32, col)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((row, col)));
}

fn main() {}
