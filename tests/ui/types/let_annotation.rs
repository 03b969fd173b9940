use tilelang::prelude::*;

#[tile_kernel(grid = [N], threads = 1)]
pub fn k(a: &Tensor<f16, (N,)>, c: &mut Tensor<f16, (N,)>) {
    let g = block_idx(0);
    let x: f16 = a[g] as f32 * 0.5;
    c[g] = x;
}

fn main() {}
