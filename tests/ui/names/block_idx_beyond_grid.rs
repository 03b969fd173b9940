use tilelang::prelude::*;

#[tile_kernel(grid = [M], threads = 1)]
pub fn k(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (M, N)>) {
    let (row, col) = (block_idx(0), block_idx(1));
    c[(row, col)] = a[(row, col)];
}

fn main() {}
