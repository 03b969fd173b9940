use tilelang::prelude::*;

// A closure is reported once: calling the name it was bound to says nothing more.
#[tile_kernel(grid = [N], threads = 1)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let g = block_idx(0);
    let f = |v: f32| v * 2.0;
    c[g] = f(a[g]);
}

fn main() {}
