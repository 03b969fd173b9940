use tilelang::prelude::*;

#[tile_kernel(grid = [N], threads = 1)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let g = block_idx(0);
    c[g] = gelu(a[g]);
}

fn main() {}
