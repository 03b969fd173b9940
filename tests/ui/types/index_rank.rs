use tilelang::prelude::*;

#[tile_kernel(grid = [M], threads = 1)]
pub fn k(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (M,)>) {
    let row = block_idx(0);
    c[row] = a[row];
}

fn main() {}
