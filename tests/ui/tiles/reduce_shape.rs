use tilelang::prelude::*;

#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [default(BM = 64, BN = 32)])]
pub fn k<const BM: usize, const BN: usize>(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (M,)>) {
    let row = block_idx(0) * BM;
    let mut s = alloc_shared::<f32, (BM, BN)>();
    let mut sums = alloc_shared::<f32, (BN,)>();
    copy(a.at((row, 0)), &mut s);
    reduce_sum(&s, &mut sums, 1);
    copy(&sums, c.at_mut((row,)));
}

fn main() {}
