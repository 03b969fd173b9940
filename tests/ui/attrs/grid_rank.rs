use tilelang::prelude::*;

#[tile_kernel(grid = [A, B, C, D], threads = 1)]
pub fn k(a: &Tensor<f32, (A, B, C, D)>, c: &mut Tensor<f32, (A, B, C, D)>) {
    let (i, j, l) = (block_idx(0), block_idx(1), block_idx(2));
    c[(i, j, l, 0)] = a[(i, j, l, 0)];
}

fn main() {}
