use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 1)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in 0..N {
        c[i] = a[i];
    }
}

fn main() {}
