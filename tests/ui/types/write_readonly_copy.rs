use tilelang::prelude::*;

#[tile_kernel(grid = [M.div_ceil(64), N.div_ceil(64)], threads = 128)]
pub fn k(a: &Tensor<f16, (M, N)>) {
    let mut s = alloc_shared::<f16>((64, 64));
    let (row, col) = (block_idx(0) * 64, block_idx(1) * 64);
    fill(&mut s, 0.0);
    copy(&s, a.at_mut((row, col)));
}

fn main() {}
